"""Writes lines as blkparse (Linux blktrace) prints them by default, for
tests and benchmarks of dtds/blkparse.dtd: the head
"%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s " and each action's own tail, with
the printf formats of blkparse_fmt.c's process_default(). Requests go
through queue, get, insert, issue and complete, with merges, plugs,
unplugs, remaps, splits and a message now and then.

Usage: python3 bench/blkparse_lines.py LINES [SEED] > trace.txt
"""
import random
import sys

COMMANDS = ["kjournald", "kworker/0:1H", "jbd2/sda1-8", "postgres", "dd", "fio", "swapper/0"]
RWBS = ["R", "W", "WS", "RA", "RM", "WFS", "FWS", "N", "D", "WM", "RS"]


def lines(count, seed):
    rng = random.Random(seed)
    sequence = {}
    nanoseconds = 0
    out = 0
    while out < count:
        nanoseconds += int(rng.expovariate(1 / 40000))
        cpu = rng.randrange(8)
        major, minor = rng.choice([(8, 0), (8, 16), (259, 0), (253, 1)])
        pid = rng.choice([0, 697, 1234, 31337, 4242])
        command = rng.choice(COMMANDS)
        sector = rng.randrange(1 << 31)
        blocks = rng.choice([8, 8, 16, 64, 256, 1024])
        rwbs = rng.choice(RWBS)
        action = rng.choices(["Q", "G", "I", "D", "C", "M", "F", "S", "B", "P", "U", "UT", "A", "X", "m"],
                             [20, 15, 15, 15, 20, 3, 1, 1, 1, 3, 2, 1, 2, 1, 1])[0]
        seq = sequence[cpu] = sequence.get(cpu, 0) + 1
        head = "%3d,%-3d %2d %8d %5d.%09d %5u %2s %3s " % (major, minor, cpu, seq, nanoseconds // 10**9, nanoseconds % 10**9, pid,
                                                         action, rwbs)
        if action in ("Q", "G", "I", "D", "B", "M", "F", "S"):
            tail = "%d + %u [%s]" % (sector, blocks, command)
        elif action == "C":
            tail = "%d + %u [%d]" % (sector, blocks, rng.choice([0, 0, 0, -5]))
        elif action == "P":
            tail = "[%s]" % command
        elif action in ("U", "UT"):
            tail = "[%s] %u" % (command, rng.randrange(1, 32))
        elif action == "A":
            tail = "%d + %u <- (%d,%d) %d" % (sector, blocks, 8, rng.choice([1, 2, 17]), sector - 2048)
        elif action == "X":
            tail = "%d / %u [%s]" % (sector, sector + blocks // 2, command)
        else:
            tail = rng.choice(["cfq1234 insert_request", "cfq schedule dispatch", "bfq1 put_queue: 0x0"])
        yield head + tail + "\n"
        out += 1


if __name__ == "__main__":
    count = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sys.stdout.writelines(lines(count, seed))
