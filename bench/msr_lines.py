"""Writes MSR Cambridge block I/O lines (dtds/msr.dtd) as the published
traces have them, for tests and benchmarks: requests of 13 servers and
their volumes interleaved in time order, Windows filetime stamps (100 ns
ticks), offsets on 512-byte sectors that run on in sequential streams,
sizes mostly 4 KiB to 64 KiB, response times in ticks.

Usage: python3 bench/msr_lines.py LINES [SEED] > trace.csv
"""
import random
import sys

HOSTS = {"hm": 2, "mds": 2, "prn": 2, "proj": 5, "prxy": 2, "rsrch": 3, "src1": 3, "src2": 3, "stg": 2, "ts": 1, "usr": 3,
         "wdev": 4, "web": 4}
SIZES = [512, 1024, 4096, 4096, 4096, 8192, 8192, 16384, 32768, 65536, 65536, 131072]


def lines(count, seed):
    rng = random.Random(seed)
    volumes = [(h, d) for h, n in HOSTS.items() for d in range(n)]
    weights = [rng.paretovariate(1.2) for _ in volumes]
    cursor = {v: rng.randrange(1 << 22) * 512 for v in volumes}
    now = 128166372000000000
    for _ in range(count):
        now += int(rng.expovariate(1 / 2500))
        host, disk = volumes[rng.choices(range(len(volumes)), weights)[0]]
        size = rng.choice(SIZES)
        if rng.random() < 0.4:
            offset = cursor[host, disk]  # the next request of a sequential run
        else:
            offset = rng.randrange(1 << 24) * 512
        cursor[host, disk] = offset + size
        kind = "Read" if rng.random() < 0.7 else "Write"
        response = int(rng.lognormvariate(9, 1.2))
        yield f"{now},{host},{disk},{kind},{offset},{size},{response}\n"


if __name__ == "__main__":
    count = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sys.stdout.writelines(lines(count, seed))
