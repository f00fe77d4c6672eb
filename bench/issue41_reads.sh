#!/usr/bin/env bash
# Full reads of issue 41's heap traces (docs/compactness.md, "Reading
# them"): for each OUT/NAME.recoded.mtf that bench/issue41_traces.sh made,
# `mtf check` and the generated reader (bench/hatf_read, in a build with
# -DMETATF_BUILD_BENCHMARKS=ON) against `xz -d` and `zstd -d` of the same
# events' text, fastest of RUNS (default 5) whole-process runs each.
# The text is one line an allocator call: `a SIZE ADDR`, `f ADDR`,
# `r SIZE OLD NEW`, and the time stamp after them in the traces with time.
# Usage: bench/issue41_reads.sh BUILD_DIR OUT_DIR [RUNS]
set -euo pipefail
build=$1 out=$2 runs=${3:-5}
mtf=$build/tools/mtf/mtf read=$build/bench/hatf_read
# The fastest of $runs runs of a command, in seconds.
fastest() {
  local best=
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N); "$@" > /dev/null; end=$(date +%s%N)
    local took=$(( end - start ))
    if [ -z "$best" ] || [ "$took" -lt "$best" ]; then best=$took; fi
  done
  printf '%.3f' "$(echo "$best / 1000000000" | bc -l)"
}
# The generated reader's own timer: from opening the trace to its last
# record, without the start and end of a process (about 10 ms here).
own() {
  local best=
  for _ in $(seq "$runs"); do
    local took
    took=$("$read" "$1" | sed -n 's/.* in \([0-9.]*\) s .*/\1/p')
    if [ -z "$best" ] || [ "$(echo "$took < $best" | bc)" = 1 ]; then best=$took; fi
  done
  echo "$best"
}
printf '%-18s %10s %10s %10s %10s %10s %14s %14s %14s\n' trace 'mtf check' hatf_read 'its timer' 'xz -d' 'zstd -d' 'xz / check' 'xz / hatf_read' 'xz / its timer'
for t in cppcheck clangformat perl python clangformat-time perl-time; do
  trace=$out/$t.recoded.mtf
  [ -s "$trace" ] || continue
  if [ ! -s "$out/$t.txt.xz" ]; then
    "$mtf" dump --no-meta "$trace" | awk -v timed="$([[ $t == *-time ]] && echo 1)" '
      { delete v; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
      $1 == "alloc" { line = "a " v["size"] " " v["address"] }
      $1 == "free" { line = "f " v["address"] }
      $1 ~ /^realloc/ { line = "r " v["size"] " " v["oldAddress"] " " v["newAddress"] }
      $1 == "alloc" || $1 == "free" || $1 ~ /^realloc/ { print line (timed ? " " v["time"] : "") }' > "$out/$t.txt"
    xz -9 -T1 -k -f "$out/$t.txt"
    zstd -19 -q -f "$out/$t.txt" -o "$out/$t.txt.zst"
  fi
  check=$(fastest "$mtf" check "$trace")
  generated=$(fastest "$read" "$trace")
  timer=$(own "$trace")
  xz=$(fastest xz -d -c "$out/$t.txt.xz")
  zst=$(fastest zstd -d -c "$out/$t.txt.zst")
  printf '%-18s %10s %10s %10s %10s %10s %13.2fx %13.2fx %13.2fx\n' "$t" "$check" "$generated" "$timer" "$xz" "$zst" \
    "$(echo "$xz / $check" | bc -l)" "$(echo "$xz / $generated" | bc -l)" "$(echo "$xz / $timer" | bc -l)"
done
