"""Meta-TF traces in Python.

Reads a trace of any DTD (the DTD is compiled from the text the trace
carries) into NumPy arrays and pandas DataFrames. The decoding is the
runtime's, in C++: one pass over the trace, no Python object per record.
See docs/python.md.
"""

import os
import sys

import numpy as np

from . import _metatf

__all__ = ["open", "read_numpy", "read_pandas", "TraceInfo"]


class TraceInfo:
    """What a trace holds: its DTD's name and text, record types and fields, and record count."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._trace = _metatf.Trace(self.path)
        self.dtd_name = self._trace.dtd_name
        self.dtd_text = self._trace.dtd_text
        # Every record, the predefined ones (comments, metadata) included.
        self.record_count = self._trace.record_count
        self.records = {r["name"]: r for r in self._trace.records()}

    def fields(self, record):
        """The fields of record type `record` that have a column (those outside repeated groups)."""
        return [f["name"] for f in self._record(record)["fields"] if not f["repeated"]]

    def _record(self, record):
        if record not in self.records:
            raise KeyError(f"the trace's DTD '{self.dtd_name}' has no record type '{record}' "
                           f"(it has {', '.join(self.records)})")
        return self.records[record]

    def __repr__(self):
        return f"<metatf trace {self.path!r}: DTD {self.dtd_name!r}, {self.record_count} records, types {', '.join(self.records)}>"


def open(path):
    """Opens a trace and tells what it holds (a TraceInfo); reads no record."""
    return TraceInfo(path)


def _progress(info, show):
    """A callback for long reads: a tqdm bar on a terminal, where tqdm is installed."""
    if show is False or (show is None and not (sys.stderr.isatty() and info.record_count > 5_000_000)):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    bar = tqdm(total=info.record_count, unit=" records", unit_scale=True, desc=os.path.basename(info.path))

    def update(done, total):
        bar.total = total
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return update


def _read(info, records, fields, progress):
    return info._trace.read(list(records), list(fields or []), _progress(info, progress))


def _column_name(record, field):
    """A field's column: its name, or RECORD.FIELD for a field called index or record (as mtf dump's CSV does)."""
    return f"{record}.{field}" if field in ("index", "record") else field


def _scaled(values, field, scaled):
    if field["scale"] == 0 or scaled == "int":
        return values
    if scaled != "float":
        raise ValueError(f"scaled is 'float' or 'int', not {scaled!r}")
    return values / np.float64(10) ** field["scale"]


def read_numpy(path, record, fields=None, scaled="float", progress=None):
    """The records of type `record` as a NumPy structured array.

    Its fields are `index` (each record's position in the trace, as `mtf
    dump` counts records) and the record's fields (a field called index
    or record as RECORD.FIELD) (those `fields` names, in
    that order, or all outside repeated groups): unsigned fields as uint64,
    signed as int64, floats as float64, bytes as Python bytes (object). A
    field with a scale is float64 (its value) or, with scaled="int", the
    stored integer (the value times 10**scale). Enumerations, flags and
    parts are their numbers.
    """
    info = path if isinstance(path, TraceInfo) else open(path)
    info._record(record)
    positions, columns = _read(info, [record], fields, progress)[record]
    described = {f["name"]: f for f in info._record(record)["fields"]}
    arrays = {"index": positions}
    for name, values in columns.items():
        arrays[_column_name(record, name)] = _scaled(values, described[name], scaled)
    out = np.empty(len(arrays["index"]), dtype=[(name, a.dtype) for name, a in arrays.items()])
    for name, a in arrays.items():
        out[name] = a
    return out


def read_pandas(path, record=None, fields=None, scaled="float", progress=None):
    """The records of type `record` (every type when None) as one DataFrame.

    Columns: `index` (the record's position in the trace, as `mtf dump`
    counts records), `record` (its type, categorical), then the fields, as
    `mtf dump --format csv` shows them: integers as uint64/int64, scaled
    fields as float64 (or the stored integer with scaled="int"), floats as
    float64; as categoricals, a field's enumeration names, flags or parts
    (`read|write`, `fd:5,index:1`), the character of a `chars` text field,
    and bytes. With several record types, rows are in trace order and a
    field a row's type lacks is missing (<NA>: integer columns are pandas'
    nullable UInt64/Int64).
    """
    import pandas as pd

    info = path if isinstance(path, TraceInfo) else open(path)
    names = [record] if record is not None else list(info.records)
    if record is not None:
        info._record(record)
    tables = _read(info, names, fields, progress)
    frames = []
    for name in names:
        positions, columns = tables[name]
        frame = {"index": positions, "record": pd.Categorical.from_codes(np.zeros(len(positions), dtype=np.int8), [name])}
        described = {f["name"]: f for f in info._record(name)["fields"]}
        for field, values in columns.items():
            frame[_column_name(name, field)] = _pandas_column(info, name, described[field], values, scaled)
        frames.append(pd.DataFrame(frame))
    if len(frames) == 1:
        return frames[0]
    return _merge(frames, names)


def _pandas_column(info, record, field, values, scaled):
    import pandas as pd

    if field["naming"]:
        return _categorical(values, lambda unique: info._trace.value_names(record, field["name"], unique.view(np.uint64)))
    if field["text"] == "chars":
        chars = field["chars"]
        return _categorical(values, lambda unique: [chars[v] if v < len(chars) else str(v) for v in unique])
    if field["type"] == "bytes":
        unique = pd.unique(values)
        return pd.Categorical(values) if len(unique) * 2 <= len(values) else values
    return _scaled(values, field, scaled)


def _categorical(values, name_of):
    """`values` as a categorical whose categories are the names of its distinct values, in value order."""
    import pandas as pd

    if len(values) and values.max() < 1 << 16:
        # Small numbers (opcodes, enumerations): a table lookup, with no sort.
        present = np.bincount(values.view(np.uint64).astype(np.intp)) > 0
        unique = np.flatnonzero(present).astype(values.dtype)
        codes = (np.cumsum(present) - 1).astype(np.int32)[values.view(np.uint64).astype(np.intp)]
    else:
        unique, codes = np.unique(values, return_inverse=True)
    return pd.Categorical.from_codes(codes.astype(np.int32, copy=False), list(name_of(unique)))


def _merge(frames, names):
    """Several record types' frames as one, in trace order, with nullable integers."""
    import pandas as pd

    for frame in frames:
        for column in frame.columns:
            if column == "index":
                continue
            dtype = frame[column].dtype
            if dtype == np.uint64:
                frame[column] = frame[column].astype("UInt64")
            elif dtype == np.int64:
                frame[column] = frame[column].astype("Int64")
    out = pd.concat(frames, ignore_index=True, sort=False)
    out["record"] = pd.Categorical(out["record"].astype(object), categories=names)
    return out.sort_values("index", kind="stable", ignore_index=True)
