"""read_pandas of a trace of any shipped format against pandas.read_csv of
the same events as CSV (docs/performance.md, issue 40 part 6): the lines
are converted with `mtf convert --dtd DTD`, the CSV is `mtf dump --format
csv` of the trace (every record type: the columns the frame has), and the
two reads are interleaved, REPEAT times each, the best of each kept.

Usage: PYTHONPATH=build/python python3 bench/python/formats_bench.py MTF DTD LINES WORK_DIR [REPEAT]
"""
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

import metatf

mtf, dtd, lines, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
repeat = int(sys.argv[5]) if len(sys.argv) > 5 else 7
work.mkdir(parents=True, exist_ok=True)
trace, csv = work / (lines.stem + ".mtf"), work / (lines.stem + ".csv")
if not trace.exists():
    subprocess.run([mtf, "convert", "--dtd", dtd, lines, trace], check=True)
    with open(csv, "w") as out:
        subprocess.run([mtf, "dump", "--format", "csv", trace], check=True, stdout=out)

best = {"read_pandas": float("inf"), "read_csv": float("inf")}
for _ in range(repeat):
    for name, read in (("read_pandas", lambda: metatf.read_pandas(trace)),
                       ("read_csv", lambda: pd.read_csv(csv, low_memory=False))):
        start = time.perf_counter()
        read()
        best[name] = min(best[name], time.perf_counter() - start)
rows = metatf.open(trace).record_count
ratio = best["read_csv"] / best["read_pandas"]
print(f"{lines.name} ({rows} records): read_pandas {best['read_pandas']:.4f} s, read_csv {best['read_csv']:.4f} s, {ratio:.1f}x")
