"""Times metatf.read_pandas of a trace of several record types against
metatf.Writer.write() of the frame it gives, in one call (docs/python.md,
"Writing"): best of 3 each; the write includes closing the trace.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python/write_bench.py TRACE DTD [WRITER OPTION=VALUE ...]
e.g. a heap trace of a compiler, from the repository root:
  build/tools/heaptrace/metatf-heaptrace --threads --time -o 'heap.%p.mtf' -- \\
      g++ -std=c++20 -O1 -c -o /dev/null -Iruntime/include runtime/src/io/columns.cpp
  PYTHONPATH=build/python /usr/bin/python3 bench/python/write_bench.py heap.PID.mtf hatf10
(cc1plus's trace is the large one of the two).
"""
import ast
import os
import sys
import tempfile
import time

import metatf

trace, dtd = sys.argv[1], sys.argv[2]
options = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])}
copy = os.path.join(tempfile.mkdtemp(), "copy.mtf")
reads, writes = [], []
for _ in range(3):
    start = time.perf_counter()
    frame = metatf.read_pandas(trace)
    reads.append(time.perf_counter() - start)
    start = time.perf_counter()
    with metatf.Writer(dtd, copy, overwrite=True, **options) as writer:
        writer.write(frame)
    writes.append(time.perf_counter() - start)
os.unlink(copy)
print(f"{len(frame)} records of {frame['record'].nunique()} types: read_pandas {min(reads):.2f} s, "
      f"Writer.write {min(writes):.2f} s, {min(writes) / min(reads):.2f}x")
