#!/usr/bin/env bash
# The six heap traces of issue 41 (docs/compactness.md, "Against predictor
# compressors"), made with metatf-heaptrace, and each one's bytes per event
# under `mtf recode RECODE_OPTIONS` (default: --compress, with --encoding
# auto the default).
# Usage: bench/issue41_traces.sh BUILD_DIR OUT_DIR [RECODE_OPTIONS...]
# Run from the source tree; reuses traces already in OUT_DIR. Python is
# Debian's (/usr/bin/python3), whose malloc calls the tracer sees.
set -euo pipefail
build=$1 out=$2; shift 2
trace=$build/tools/heaptrace/metatf-heaptrace mtf=$build/tools/mtf/mtf
mkdir -p "$out"
perl_churn='my %h; for my $i (1..200000) { $h{$i % 5000} .= "x" x ($i % 17); delete $h{($i*7) % 5000} if $i % 3 == 0 }'
make() {  # NAME TRACER_OPTIONS... -- COMMAND...
  local name=$1; shift
  [ -s "$out/$name.mtf" ] || "$trace" -f "$@" > /dev/null
}
make cppcheck -o "$out/cppcheck.mtf" -- cppcheck --quiet runtime/src/io/reader.cpp
make clangformat -o "$out/clangformat.mtf" -- clang-format compiler/front/resolve_fields.cpp
make perl -o "$out/perl.mtf" -- perl -e "$perl_churn"
[ -s "$out/python.mtf" ] || PYTHONMALLOC=malloc "$trace" -f -o "$out/python.mtf" -- /usr/bin/python3 -c '
import json
rows = [{"id": i, "name": "n%d" % i, "tags": ["a", "b", str(i % 7)], "score": i * 0.5} for i in range(150000)]
assert json.loads(json.dumps(rows)) == rows' > /dev/null
make clangformat-time --time -o "$out/clangformat-time.mtf" -- clang-format compiler/front/resolve_fields.cpp
make perl-time --time -o "$out/perl-time.mtf" -- perl -e "$perl_churn"
printf '%-18s %10s %12s %8s\n' trace events bytes B/event
for t in cppcheck clangformat perl python clangformat-time perl-time; do
  "$mtf" recode -f "${@:---compress}" "$out/$t.mtf" "$out/$t.recoded.mtf"
  # Events: the allocator calls (records but comments, section switches and metadata).
  events=$("$mtf" info "$out/$t.mtf" | awk '/^record +tag/ { on = 1; next }
    on && NF == 4 && $1 !~ /^(comment|section|metadata)$/ { n += $4 } END { print n }')
  bytes=$(stat -c %s "$out/$t.recoded.mtf")
  printf '%-18s %10s %12s %8.3f\n' "$t" "$events" "$bytes" "$(echo "$bytes / $events" | bc -l)"
done
