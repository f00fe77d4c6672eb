#!/usr/bin/env bash
# The figures of docs/compactness.md for one HATF heap trace: its events,
# the text log under xz -9 and zstd -19, 24-byte binary records under xz -9,
# and mtf recode's outputs. Usage: bench/heap_sizes.sh BUILD_DIR TRACE
# (writes TRACE.log, TRACE.*.mtf beside TRACE).
set -euo pipefail
build=$1 trace=$2
mtf=$build/tools/mtf/mtf
# One line per event: the record's kind (first letter and two more, to tell
# the realloc kinds apart), then every field but heap and attributes, in decimal.
"$mtf" dump --no-meta "$trace" |
  awk '{ line = substr($1, 1, 1) substr($1, 8, 2)
         for (i = 2; i <= NF; i++) { split($i, kv, "=")
           if (kv[1] !~ /^(heap|attributes)/) line = line " " kv[2] }
         print line }' > "$trace.log"
# 24 bytes an event, little-endian: kind and thread (u16), size (u32), address and time (u64).
bin24() {
  perl -ne 'BEGIN { %k = (); $n = 0 }
    @f = split; $kind = $k{$f[0]} //= $n++; ($s, $a, $t, $c) = (0, 0, 0, 0);
    if ($f[0] eq "a") { ($s, $a, $t, $c) = @f[1..4] }
    elsif ($f[0] eq "f") { ($a, $t, $c) = @f[1..3] }
    elsif ($f[0] =~ /^r/) { ($s, $a, $t, $c) = @f[1, 3, 4, 5] }
    else { ($t, $c) = @f[1..2] }
    print pack("vvVQ<Q<", $kind, $t & 0xffff, $s & 0xffffffff, $a, $c)' "$trace.log"
}
echo "events                 $(wc -l < "$trace.log")"
echo "text + xz -9           $(xz -9 -T1 -c "$trace.log" | wc -c)"
echo "text + zstd -19        $(zstd -19 -q -c < "$trace.log" | wc -c)"
echo "24-byte binary + xz -9 $(bin24 | xz -9 -T1 -c | wc -c)"
run() { local name=$1; shift; "$mtf" recode -f "$@" "$trace" "$trace.$name.mtf"; echo "$name $(stat -c %s "$trace.$name.mtf")"; }
run auto
run auto-zstd9 --compress
run auto-zstd19 --compress=19
run auto-zstd19-16M --compress=19 --chunk-size=16M
run keep-zstd9 --encoding keep --compress
run initial-zstd9 --encoding initial --compress
