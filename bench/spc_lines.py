"""Writes SPC trace lines (dtds/spc.dtd) of data no Meta-TF tool made, for
benchmarks: 24 ASUs, random 31-bit block addresses, sizes of 512 B to
64 KiB, 70% reads, Poisson arrivals with microsecond timestamps.

Usage: python3 bench/spc_lines.py LINES [SEED] > trace.spc
"""
import random
import sys


def main():
    count = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    now, batch = 0.0, []
    for _ in range(count):
        now += rng.expovariate(1 / 0.0004)
        op = "R" if rng.random() < 0.7 else "W"
        batch.append(f"{rng.randrange(24)},{rng.randrange(1 << 31)},{rng.choice((512, 4096, 8192, 16384, 65536))},{op},{now:.6f}\n")
        if len(batch) == 100000:
            sys.stdout.write("".join(batch))
            batch = []
    sys.stdout.write("".join(batch))


if __name__ == "__main__":
    main()
