"""The single CSV table of a Lackey trace (mtf dump --format csv) loads into
pandas with the dtypes docs/mtf.md gives and the records in trace order,
checked against the Lackey text read here on its own.
Usage: python3 pandas_check.py MTF TRACE.mtf TRACE.lackey
Exits 77 (skipped) when pandas is not installed."""
import io
import re
import subprocess
import sys

try:
    import pandas as pd
except ImportError:
    print("pandas is not installed (Debian: python3-pandas): skipped")
    sys.exit(77)

mtf, trace, text = sys.argv[1:4]
csv = subprocess.run([mtf, "dump", "--format", "csv", "--no-meta", trace], check=True, capture_output=True).stdout
frame = pd.read_csv(io.BytesIO(csv))

assert list(frame.columns) == ["index", "record", "address", "size"], list(frame.columns)
assert str(frame["index"].dtype) == "int64", frame.dtypes
assert str(frame["size"].dtype) == "int64", frame.dtypes
assert str(frame["record"].dtype) == "object", frame.dtypes
assert str(frame["address"].dtype) == "object", frame.dtypes
assert frame["index"].is_monotonic_increasing and frame["index"].is_unique

names = {"I": "instruction", "L": "load", "S": "store", "M": "modify"}
line = re.compile(r"^(?:I |( )([LSM])) ([0-9a-f]{8,}),([0-9]+)$")
records, addresses, sizes = [], [], []
with open(text, encoding="ascii") as f:
    for n, l in enumerate(f, 1):
        m = line.match(l.rstrip("\n"))
        assert m, f"{text}:{n}: not a Lackey line: {l!r}"
        records.append(names[m.group(2) or "I"])
        addresses.append(m.group(3))
        sizes.append(int(m.group(4)))

assert len(frame) == len(records), (len(frame), len(records))
assert frame["record"].tolist() == records
assert frame["address"].tolist() == addresses
assert frame["size"].tolist() == sizes
numbers = frame["address"].map(lambda a: int(a, 16))
assert numbers.iloc[0] == int(addresses[0], 16)
print(f"{len(frame)} rows in trace order: index and size int64, record and address str")
