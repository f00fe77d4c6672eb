#!/usr/bin/env bash
# Real `strace -f -tt -T -o FILE` runs of several programs (forking, threaded,
# signalled, killed, exiting with a status) convert to Meta-TF with
# dtds/strace.dtd under --exact and back to the same bytes, plain and
# recoded, and every shape of line the DTD names turns up in them. Exits 77
# (skipped) without strace, or where the machine does not let it trace.
# Usage: strace_test.sh MTF DTD WORK_DIR
set -euo pipefail
mtf=$1 dtd=$2 work=$3
command -v strace > /dev/null || { echo "strace is not installed: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
strace -f -o probe.txt true 2> /dev/null || { echo "strace cannot trace here (ptrace refused): skipped"; exit 77; }
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# A shell that forks a pipeline, a child killed by a signal and a child that exits 3.
strace -f -tt -T -o shell.txt sh -c 'ls /nonexistent 2> /dev/null; echo hi | cat > /dev/null; sleep 5 & kill -TERM $!; wait; (exit 3); sh -c "kill -SEGV \$\$"; true'
# Threads that start and join while the main thread waits.
strace -f -tt -T -o threads.txt "$python" -c 'import threading; t = [threading.Thread(target=sum, args=(range(50000),)) for _ in range(4)]; [x.start() for x in t]; [x.join() for x in t]'
# A process that forks children, signals itself and reaps them.
strace -f -tt -T -o perl.txt perl -e '$SIG{USR1} = sub {}; for my $i (1..3) { exit $i unless fork } kill "USR1", $$; 1 while wait != -1; open my $f, "<", "/etc/passwd"; my @l = <$f>'
# Many files: getdents, stat, a long output.
strace -f -tt -T -o ls.txt ls -la /usr/bin > /dev/null

for run in shell threads perl ls; do
    "$mtf" convert --exact --dtd "$dtd" "$run.txt" "$run.mtf"
    "$mtf" convert "$run.mtf" "$run.back"
    cmp "$run.txt" "$run.back"
    "$mtf" recode --encoding auto --compress "$run.mtf" "$run.small.mtf"
    "$mtf" convert "$run.small.mtf" "$run.again"
    cmp "$run.txt" "$run.again"
    echo "$run: $(wc -l < "$run.txt") lines, text $(stat -c %s "$run.txt") bytes, recoded $(stat -c %s "$run.small.mtf")"
done

# Every shape of line is read as its own record somewhere in these runs.
cat shell.txt threads.txt perl.txt ls.txt > all.txt
"$mtf" convert --exact --dtd "$dtd" all.txt all.mtf
"$mtf" stats all.mtf > stats.txt
count() { awk -v r="$1" 'NF == 0 { exit } $1 == r { print $2 }' stats.txt; }
for record in call callError callAddress callNoReturn unfinished resumed signalled exited killed; do
    [ "$(count "$record")" -gt 0 ] || { echo "no line was read as record '$record'"; cat stats.txt; exit 1; }
done
# What no shape describes is kept by 'other': here only the child killed with a core dump.
grep -- '+++ killed by SIGSEGV' shell.txt > /dev/null
[ "$(count other)" -le "$(grep -c -- '+++ killed by SIGSEGV (core dumped)' all.txt)" ] || {
    echo "lines read as 'other':"; "$mtf" dump all.mtf | grep '^other' | head; exit 1; }
# Numbers are numbers: the exit status 3 and the SIGSEGV kill are where strace printed them.
"$mtf" dump --where 'status=3' all.mtf | grep -q '^exited' || { echo "no 'exited' record with status 3"; exit 1; }
"$mtf" dump --where 'signal=SIGTERM' all.mtf | grep -q '^killed' || { echo "no 'killed' record for SIGTERM"; exit 1; }
echo "all: $(wc -l < all.txt) lines; $(count other) read as 'other'"
