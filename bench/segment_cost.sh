#!/usr/bin/env bash
# What segments that decode alone cost (docs/trace-format.md, "State
# blocks"): each trace given is recoded by mtf with container version 2
# and 3, the same encoder and chunk size, stored and under zstd 9, and the
# difference is printed in bytes and bytes per record.
# Usage: bench/segment_cost.sh BUILD_DIR TRACE... (writes TRACE.v2*.mtf, TRACE.v3*.mtf beside each)
set -euo pipefail
build=$1; shift
mtf=$build/tools/mtf/mtf
printf '%-22s %10s %-10s %12s %12s %9s %12s\n' trace records form "version 2" "version 3" "+bytes" "+bytes/record"
for trace in "$@"; do
  records=$("$mtf" info "$trace" | awk '$1 == "records" { print $2 }')
  for form in stored zstd9; do
    extra=(); [ "$form" = zstd9 ] && extra=(--compress=9)
    for v in 2 3; do "$mtf" recode -f "${extra[@]}" --container-version $v "$trace" "$trace.v$v.$form.mtf"; done
    a=$(stat -c %s "$trace.v2.$form.mtf") b=$(stat -c %s "$trace.v3.$form.mtf")
    printf '%-22s %10s %-10s %12s %12s %9s %12s\n' "$(basename "$trace")" "$records" "$form" "$a" "$b" $((b - a)) \
      "$(awk -v d=$((b - a)) -v n="$records" 'BEGIN { printf "%.4f", d / n }')"
  done
done
