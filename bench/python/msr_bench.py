"""Times metatf.read_pandas of an MSR Cambridge trace (dtds/msr.dtd: a
string column, a word stored as a number) against pandas.read_csv of its
CSV, best of 3 each, and prints the file sizes against xz -9 of the CSV
(docs/performance.md, "Strings").

Usage, from the repository root with build/ built:
  PYTHONPATH=build/python /usr/bin/python3 bench/python/msr_bench.py LINES [WORKDIR]
"""
import os
import subprocess
import sys
import tempfile
import time

import pandas as pd

import metatf

lines = int(sys.argv[1])
work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
mtf = os.path.join("build", "tools", "mtf", "mtf")
csv, trace, small = (os.path.join(work, f"msr-{lines}{suffix}") for suffix in (".csv", ".mtf", ".zst.mtf"))
with open(csv, "wb") as out:
    subprocess.run([sys.executable, "bench/msr_lines.py", str(lines)], stdout=out, check=True)
subprocess.run([mtf, "convert", "-f", "--exact", "--dtd", "msr", csv, trace], check=True)
subprocess.run([mtf, "recode", "-f", "--encoding", "auto", "--compress", trace, small], check=True)
xz = len(subprocess.run(["xz", "-9", "-T1", "-c", csv], stdout=subprocess.PIPE, check=True).stdout)

names = ["timestamp", "hostname", "disk", "type", "offset", "size", "responseTime"]
best = {}
for _ in range(3):
    for name, read in (("read_pandas", lambda: metatf.read_pandas(trace)),
                       ("read_pandas, compressed", lambda: metatf.read_pandas(small)),
                       ("read_csv", lambda: pd.read_csv(csv, names=names))):
        start = time.perf_counter()
        read()
        best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
for name, seconds in best.items():
    print(f"{lines} lines: {name} {seconds:.3f} s, read_csv / it {best['read_csv'] / seconds:.2f}")
sizes = {"CSV": os.path.getsize(csv), "xz -9": xz, "mtf convert": os.path.getsize(trace), "auto --compress": os.path.getsize(small)}
print(", ".join(f"{k} {v}" for k, v in sizes.items()) + f"; auto --compress / xz -9 {sizes['auto --compress'] / xz:.2f}")
