#!/bin/sh
# Times mtfc on DTDs with one diagnostic per line (issue 9: diagnostics must
# render in linear time). Each DTD is a valid record followed by lines
# "xN.width = 1;", a property of a field kind no record has, so every line
# draws the warning "'xN.width' has no effect: ...".
#
# Usage: bench/dtd_diagnostics.sh [MTFC [MEGABYTES...]]
#   defaults: build/compiler/mtfc, sizes 1 10 50
# Prints one line per size: lines, diagnostics, exit status, times, peak RSS.
set -eu
mtfc=${1:-build/compiler/mtfc}
time=/usr/bin/time  # GNU time, for the peak RSS (Debian package 'time')
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 1 10 50
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for mb in "$@"; do
    dtd="$work/big-$mb.dtd"
    awk -v mb="$mb" 'BEGIN {
        bytes = mb * 1024 * 1024
        line = "r : (tag, a) { tag.value = 4; a.width = 1; }"
        print line; n = length(line) + 1
        for (i = 0; n < bytes; ++i) { line = "x" i ".width = 1;"; print line; n += length(line) + 1 }
    }' > "$dtd"
    # Counts the diagnostics on the way (they would take 5 times the DTD's size in a file).
    diagnostics=$({ "$time" -v -o "$work/time" "$mtfc" --check "$dtd" 2>&1 >/dev/null; echo $? > "$work/status"; } |
                  grep -c ': warning: \|: error: ' || true)
    field() { sed -n "s/^\t$1: //p" "$work/time"; }
    printf '%s MB: %s lines, %s diagnostics, exit %s, %s elapsed (m:ss), %s s user, %s s system, peak RSS %s MB\n' \
        "$mb" "$(wc -l < "$dtd")" "$diagnostics" "$(cat "$work/status")" \
        "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)')" "$(field 'User time (seconds)')" \
        "$(field 'System time (seconds)')" "$(($(field 'Maximum resident set size (kbytes)') / 1024))"
done
