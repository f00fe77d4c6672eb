#!/usr/bin/env bash
# The lackey figures of docs/compactness.md: a memory-reference trace of a
# command made by valgrind --tool=lackey, its text under xz -9 and zstd -19,
# and Meta-TF (dtds/lackey.dtd) recoded by mtf. Run from the source tree.
# Usage: bench/lackey_sizes.sh BUILD_DIR OUT_DIR [COMMAND...]   (default: ls /usr)
set -euo pipefail
build=$1 out=$2; shift 2
[ $# -gt 0 ] || set -- ls /usr
mtf=$build/tools/mtf/mtf
mkdir -p "$out"
valgrind --tool=lackey --trace-mem=yes --log-file="$out/lackey.log" "$@" > /dev/null
# lackey's own lines, without valgrind's "==PID==" messages
grep -v '^==' "$out/lackey.log" > "$out/lackey.txt"
echo "references             $(wc -l < "$out/lackey.txt")"
echo "text + xz -9           $(xz -9 -T1 -c "$out/lackey.txt" | wc -c)"
echo "text + zstd -19        $(zstd -19 -q -c < "$out/lackey.txt" | wc -c)"
"$mtf" convert -f --encoding initial --dtd dtds/lackey.dtd "$out/lackey.txt" "$out/lackey.mtf"
run() { local name=$1; shift; "$mtf" recode -f "$@" "$out/lackey.mtf" "$out/lackey.$name.mtf"; echo "$name $(stat -c %s "$out/lackey.$name.mtf")"; }
run initial --encoding initial
run auto
run auto-zstd19 --compress=19
run auto-no-live-zstd19 --no-live --compress=19
run auto-no-live-zstd19-16M --no-live --compress=19 --chunk-size=16M
run split-zstd19 --no-live --compress=19 --split load.address,store.address,modify.address
run split-zstd19-16M --no-live --compress=19 --chunk-size=16M --split load.address,store.address,modify.address
run split-size-zstd22-16M --no-live --compress=22 --chunk-size=16M --split load.address+load.size,store.address+store.size
