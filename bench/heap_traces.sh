#!/usr/bin/env bash
# Traces the four programs of docs/compactness.md with metatf-heaptrace and
# prints each trace's sizes (bench/heap_sizes.sh). Run from the source tree.
# Usage: bench/heap_traces.sh BUILD_DIR OUT_DIR [TRACER_OPTIONS...]
# e.g.   bench/heap_traces.sh build /tmp/heap --threads --time
set -euo pipefail
build=$1 out=$2; shift 2
trace=$build/tools/heaptrace/metatf-heaptrace
mkdir -p "$out"
cat runtime/src/*.cpp compiler/front/*.cpp > "$out/big.cpp"
# PYTHONMALLOC=malloc: every object from malloc, not from Python's own arenas.
PYTHONMALLOC=malloc "$trace" -f "$@" -o "$out/python.mtf" -- /usr/bin/python3 -c '
import json
rows = [{"id": i, "name": "n%d" % i, "tags": ["a", "b", str(i % 7)], "score": i * 0.5} for i in range(150000)]
back = json.loads(json.dumps(rows))
assert back == rows'
"$trace" -f "$@" -o "$out/clangformat.mtf" -- clang-format --style=LLVM "$out/big.cpp" > /dev/null
# g++ runs cc1plus and as: the compiler proper writes the largest trace.
"$trace" -f "$@" -o "$out/gcc.%p.mtf" -- g++ -std=c++20 -O1 -I runtime/include -c runtime/src/io/reader.cpp -o /dev/null
mv "$(ls -S "$out"/gcc.*.mtf | head -1)" "$out/cc1plus.mtf" && rm -f "$out"/gcc.*.mtf
"$trace" -f "$@" -o "$out/cppcheck.mtf" -- cppcheck --quiet runtime/src
for t in python clangformat cc1plus cppcheck; do
  echo "== $t"
  bench/heap_sizes.sh "$build" "$out/$t.mtf"
done
