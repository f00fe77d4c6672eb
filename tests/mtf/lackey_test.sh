#!/usr/bin/env bash
# A real Lackey trace: `valgrind --tool=lackey --trace-mem=yes ls /usr`, with
# Valgrind's own "==PID==" lines dropped, converts to Meta-TF with
# dtds/lackey.dtd and back to the same bytes, and dump spells its addresses
# as Lackey does. Exits 77 (skipped) without valgrind.
# Usage: lackey_test.sh MTF DTD WORK_DIR
set -euo pipefail
mtf=$1 dtd=$2 work=$3
command -v valgrind > /dev/null || { echo "valgrind is not installed: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
valgrind --tool=lackey --trace-mem=yes --log-file=ls.log ls /usr > /dev/null
grep -v '^==' ls.log > ls.lackey
# Every kind of line is there, and nothing else.
for kind in '^I  ' '^ L ' '^ S ' '^ M '; do grep -q "$kind" ls.lackey || { echo "no line matches $kind"; exit 1; }; done
if grep -vqE '^(I | [LSM]) [0-9a-f]{8,},[0-9]+$' ls.lackey; then echo "a line is not a Lackey reference"; exit 1; fi
"$mtf" convert --dtd "$dtd" ls.lackey ls.mtf
"$mtf" convert ls.mtf back.lackey
cmp ls.lackey back.lackey
# The same through a compact encoding with zstd chunks.
"$mtf" recode --compress=3 ls.mtf small.mtf
"$mtf" convert small.mtf small.lackey
cmp ls.lackey small.lackey
[ "$("$mtf" info ls.mtf | grep -c .)" -gt 0 ]
# dump writes the address as the text form does: eight digits at least.
first=$(head -n 1 ls.lackey)
want="instruction address=${first:3:8} size=${first##*,}"
got=$("$mtf" dump --limit 10 --fields address,size ls.mtf | grep -m 1 "^instruction")
[ "$got" = "$want" ] || { echo "dump: '$got', expected '$want'"; exit 1; }
echo "$(wc -l < ls.lackey) references: text $(stat -c %s ls.lackey) bytes, Meta-TF $(stat -c %s ls.mtf), zstd $(stat -c %s small.mtf)"
