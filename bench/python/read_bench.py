"""Reads an SPC trace into pandas three ways and times each (docs/performance.md):
metatf.read_pandas of the Meta-TF trace, pandas.read_csv of its CSV from
`mtf dump --format csv --record spc`, and numpy.fromfile of a fixed
24-byte binary of the same events (what a hand-rolled format would give).

Usage: PYTHONPATH=build/python python3 bench/python/read_bench.py BUILD_DIR RECORDS WORK_DIR
"""
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import metatf

build, records, work = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)
source = Path(__file__).resolve().parents[2]
text, trace, csv, fixed = work / "spc.txt", work / "spc.mtf", work / "spc.csv", work / "spc.bin"


def best(f, runs=3):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
    return min(times), out


if not trace.exists():
    subprocess.run([build / "tests/big/make_text", "spc", str(records), text], check=True)
    subprocess.run([build / "tools/mtf/mtf", "convert", "--dtd", source / "dtds/spc.dtd", text, trace], check=True)
    with open(csv, "w") as out:
        subprocess.run([build / "tools/mtf/mtf", "dump", "--format", "csv", "--record", "spc", trace], check=True, stdout=out)
    a = metatf.read_numpy(trace, "spc", scaled="int")
    layout = np.dtype([("lba", "<u8"), ("size", "<u4"), ("asu", "<u2"), ("opcode", "u1"), ("pad", "u1"), ("timestamp", "<u8")])
    b = np.zeros(len(a), dtype=layout)
    for name in ("lba", "size", "asu", "opcode", "timestamp"):
        b[name] = a[name]
    b.tofile(fixed)
    text.unlink()

layout = np.dtype([("lba", "<u8"), ("size", "<u4"), ("asu", "<u2"), ("opcode", "u1"), ("pad", "u1"), ("timestamp", "<u8")])
t_metatf, frame = best(lambda: metatf.read_pandas(trace, "spc"))
t_numpy_metatf, _ = best(lambda: metatf.read_numpy(trace, "spc"))
t_fromfile, _ = best(lambda: pd.DataFrame(np.fromfile(fixed, dtype=layout)))
t_csv, _ = best(lambda: pd.read_csv(csv), runs=1)
assert len(frame) == records
sizes = {p.name: p.stat().st_size for p in (trace, csv, fixed)}
print(f"records                         {records:,}")
print(f"sizes (bytes)                   trace {sizes['spc.mtf']:,}, CSV {sizes['spc.csv']:,}, fixed binary {sizes['spc.bin']:,}")
print(f"metatf.read_pandas              {t_metatf:.3f} s")
print(f"metatf.read_numpy               {t_numpy_metatf:.3f} s")
print(f"pandas.read_csv                 {t_csv:.3f} s   ({t_csv / t_metatf:.1f}x metatf)")
print(f"numpy.fromfile + DataFrame      {t_fromfile:.3f} s   (metatf {t_metatf / t_fromfile:.1f}x of it)")
