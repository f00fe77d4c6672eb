"""read_pandas of an SPC trace against pandas.read_csv of its lines
(docs/performance.md, issue 40 part 6): lines from bench/spc_lines.py,
converted with `mtf convert --dtd spc`; each read timed REPEAT times,
the two interleaved, the best of each kept.

Usage: PYTHONPATH=build/python python3 bench/python/spc_bench.py MTF LINES WORK_DIR [REPEAT]
"""
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

import metatf

mtf, lines, work = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 7
source = Path(__file__).resolve().parents[2]
work.mkdir(parents=True, exist_ok=True)
text, trace = work / f"spc{lines}.spc", work / f"spc{lines}.mtf"
if not trace.exists():
    with open(text, "w") as out:
        subprocess.run([sys.executable, source / "bench/spc_lines.py", str(lines)], check=True, stdout=out)
    subprocess.run([mtf, "convert", "--dtd", source / "dtds/spc.dtd", text, trace], check=True)

names = ["asu", "lba", "size", "opcode", "timestamp"]
best = {"read_pandas": float("inf"), "read_csv": float("inf")}
for _ in range(repeat):
    for name, read in (("read_pandas", lambda: metatf.read_pandas(trace, "spc")),
                       ("read_csv", lambda: pd.read_csv(text, header=None, names=names))):
        start = time.perf_counter()
        read()
        best[name] = min(best[name], time.perf_counter() - start)
ratio = best["read_csv"] / best["read_pandas"]
print(f"{lines} lines: read_pandas {best['read_pandas']:.4f} s, read_csv {best['read_csv']:.4f} s, {ratio:.1f}x")
