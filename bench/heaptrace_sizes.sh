#!/usr/bin/env bash
# What metatf-heaptrace writes by itself against what `mtf recode --compress`
# makes of the same trace, on issue 41's four programs (with --time for two):
# for each tracer setting, the fastest of RUNS wall times traced (untraced
# first), the trace's bytes per event and its size over the recoded one's.
# Usage: bench/heaptrace_sizes.sh BUILD_DIR OUT_DIR [RUNS]   (from the source tree)
set -euo pipefail
build=$1 out=$2 runs=${3:-3}
trace=$build/tools/heaptrace/metatf-heaptrace mtf=$build/tools/mtf/mtf
mkdir -p "$out"
perl_churn='my %h; for my $i (1..200000) { $h{$i % 5000} .= "x" x ($i % 17); delete $h{($i*7) % 5000} if $i % 3 == 0 }'
python_json='import json
rows = [{"id": i, "name": "n%d" % i, "tags": ["a", "b", str(i % 7)], "score": i * 0.5} for i in range(150000)]
assert json.loads(json.dumps(rows)) == rows'

fastest() {  # COMMAND...: the fastest wall time of $runs runs, in seconds
  local best=
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    "$@" > /dev/null
    end=$(date +%s%N)
    local t=$(( end - start ))
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
  done
  echo "scale=3; $best / 1000000000" | bc
}

events() {  # TRACE: its allocator calls (records but comments, sections and metadata)
  "$mtf" info "$1" | awk '/^record +tag/ { on = 1; next }
    on && NF == 4 && $1 !~ /^(comment|section|metadata)$/ { n += $4 } END { print n }'
}

measure() {  # NAME TRACER_OPTIONS... -- COMMAND...
  local name=$1; shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  local untraced
  untraced=$(fastest env "${env[@]}" "$@")
  for setting in fast default; do
    local extra=()
    [ "$setting" = fast ] && extra=(--fast)
    local file=$out/$name.$setting.mtf
    local t
    t=$(fastest env "${env[@]}" "$trace" -f "${opts[@]}" "${extra[@]}" -o "$file" -- "$@")
    [ "$setting" = fast ] && "$mtf" recode -f --compress "$file" "$out/$name.recoded.mtf"
    local n bytes recoded
    n=$(events "$file")
    bytes=$(stat -c %s "$file")
    recoded=$(stat -c %s "$out/$name.recoded.mtf")
    printf '| %s | %s | %s | %s | %.2f | %s | %.3f | %.3f | %.2f |\n' "$name" "$setting" "$n" "$untraced" \
      "$(echo "$t / $untraced" | bc -l)" "$bytes" "$(echo "$bytes / $n" | bc -l)" "$(echo "$recoded / $n" | bc -l)" \
      "$(echo "$bytes / $recoded" | bc -l)"
  done
}

echo "| program | tracer | events | untraced s | traced / untraced | bytes | B/event | recoded B/event | / recoded |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
env=()
measure cppcheck -- cppcheck --quiet runtime/src/io/reader.cpp
measure clang-format -- clang-format compiler/front/resolve_fields.cpp
measure perl -- perl -e "$perl_churn"
env=(PYTHONMALLOC=malloc)
measure python -- /usr/bin/python3 -c "$python_json"
env=()
measure clang-format-time --time -- clang-format compiler/front/resolve_fields.cpp
measure perl-time --time -- perl -e "$perl_churn"
