#!/usr/bin/env bash
# metatf-replay's cost of reading its plan while it replays (docs/replay.md,
# "Against arrays in memory"): each trace replayed under glibc as it
# normally is (each thread's calls read from its file a window at a time)
# and with --in-memory (every call in memory before the replay starts, the
# baseline), the two interleaved ROUNDS times (default 7), with the
# fastest and median replay time of each and streamed / in memory.
# Usage: bench/replay_baseline.sh BUILD_DIR OUT_DIR [ROUNDS]
# Run from the source tree; reuses traces already in OUT_DIR: the cppcheck
# trace of bench/issue41_traces.sh, a 4-thread python3 run, a perl churn.
set -euo pipefail
build=$1 out=$2 rounds=${3:-7}
trace=$build/tools/heaptrace/metatf-heaptrace replay=$build/tools/replay/metatf-replay
mkdir -p "$out"
[ -s "$out/cppcheck.mtf" ] || "$trace" -f -o "$out/cppcheck.mtf" -- cppcheck --quiet runtime/src/io/reader.cpp > /dev/null
[ -s "$out/perl.mtf" ] || "$trace" -f -o "$out/perl.mtf" -- perl -e \
  'my %h; for my $i (1..200000) { $h{$i % 5000} .= "x" x ($i % 17); delete $h{($i*7) % 5000} if $i % 3 == 0 }' > /dev/null
[ -s "$out/python-threads.mtf" ] || PYTHONMALLOC=malloc "$trace" -f --threads -o "$out/python-threads.mtf" -- /usr/bin/python3 -c '
import json, threading
def work(n):
    rows = [{"id": i, "name": "n%d" % i, "tags": ["a", str(i % 7)]} for i in range(n)]
    assert json.loads(json.dumps(rows)) == rows
threads = [threading.Thread(target=work, args=(40000,)) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()' > /dev/null
# The replay's seconds of one run (first call to last), streamed or --in-memory.
seconds() { "$replay" --json "$@" | python3 -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["seconds"])'; }
printf '%-16s %10s %12s %12s %12s %12s %10s\n' trace calls 'streamed' 'median' 'in memory' 'median' 'ratio'
for t in cppcheck perl python-threads; do
  streamed=() whole=()
  for _ in $(seq "$rounds"); do
    streamed+=("$(seconds "$out/$t.mtf")")
    whole+=("$(seconds --in-memory "$out/$t.mtf")")
  done
  calls=$("$replay" --json "$out/$t.mtf" | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
  python3 - "$t" "$calls" "${streamed[*]}" "${whole[*]}" <<'PY'
import statistics, sys
name, calls, s, w = sys.argv[1], int(sys.argv[2]), [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
print(f"{name:16} {calls:10} {min(s):12.4f} {statistics.median(s):12.4f} {min(w):12.4f} {statistics.median(w):12.4f} {min(s) / min(w):10.2f}")
PY
done
