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

__all__ = ["open", "read_numpy", "read_pandas", "TraceInfo", "Writer"]


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
        # The container version: in version 3 every chunk (a segment of the
        # file) decodes alone, so a read can start at any of them.
        self.version = self._trace.version
        # Per chunk: (its first record, its number of records), in trace order.
        self.chunks = list(self._trace.segments)

    def fields(self, record):
        """The fields of record type `record` that have a column (those outside repeated groups)."""
        return [f["name"] for f in self._record(record)["fields"] if not f["repeated"]]

    def _record(self, record):
        if record not in self.records:
            raise KeyError(f"the trace's DTD '{self.dtd_name}' has no record type '{record}' "
                           f"(it has {', '.join(self.records)})")
        return self.records[record]

    def __repr__(self):
        return (f"<metatf trace {self.path!r}: DTD {self.dtd_name!r}, {self.record_count} records "
                f"in {len(self.chunks)} chunks, types {', '.join(self.records)}>")


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


def _chunk_range(info, chunks):
    """(first, end) chunk indices for the reader from `chunks`: None (all),
    an index, a range with step 1 or a (start, stop) pair, as Python slices them."""
    if chunks is None:
        return 0, -1
    count = len(info.chunks)
    if isinstance(chunks, int):
        first = chunks + count if chunks < 0 else chunks
        if not 0 <= first < count:
            raise IndexError(f"chunk {chunks} is not in the trace's {count} chunks")
        return first, first + 1
    if isinstance(chunks, range):
        if chunks.step != 1:
            raise ValueError("a chunk range must have step 1")
        chunks = (chunks.start, chunks.stop)
    start, stop, _ = slice(*chunks).indices(count)
    return start, max(start, stop)


def _read_options(info, progress, chunks, threads):
    """The reader's arguments for a progress flag, a chunk selection and a thread count."""
    first, end = _chunk_range(info, chunks)
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return _progress(info, progress), first, end, threads or 0


def _read(info, records, fields, progress, chunks=None, threads=None):
    return info._trace.read(list(records), list(fields or []), *_read_options(info, progress, chunks, threads))


def _column_name(record, field):
    """A field's column: its name, or RECORD.FIELD for a field called index or record (as mtf dump's CSV does)."""
    return f"{record}.{field}" if field in ("index", "record") else field


def _scaled(values, field, scaled):
    if field["scale"] == 0 or scaled == "int":
        return values
    if scaled != "float":
        raise ValueError(f"scaled is 'float' or 'int', not {scaled!r}")
    return values / np.float64(10) ** field["scale"]


def read_numpy(path, record, fields=None, chunks=None, scaled="float", progress=None, threads=None):
    """The records of type `record` as a NumPy structured array.

    Its fields are `index` (each record's position in the trace, as `mtf
    dump` counts records) and the record's fields (a field called index
    or record as RECORD.FIELD) (those `fields` names, in
    that order, or all outside repeated groups): unsigned fields as uint64,
    signed as int64, floats as float64, bytes as Python bytes (object). A
    field with a scale is float64 (its value) or, with scaled="int", the
    stored integer (the value times 10**scale). Enumerations, flags and
    parts are their numbers.

    `chunks` reads part of the trace: the records of chunk k (an int), of
    range(a, b) or of (a, b), where a chunk is one segment of the file
    (TraceInfo.chunks lists them). A version-3 trace (what the project's
    writers produce) starts reading at the chunk itself; an older trace can
    only be read from its first chunk. Since its chunks decode alone, a
    version-3 trace is read by `threads` threads at once (None: one per
    core), each a run of chunks.
    """
    info = path if isinstance(path, TraceInfo) else open(path)
    info._record(record)
    described = {f["name"]: f for f in info._record(record)["fields"]}
    options = _read_options(info, progress, chunks, threads)
    packed = info._trace.read_packed(record, list(fields or []), *options)
    if packed is not None:
        return _structured(packed, record, described, scaled)
    positions, columns = info._trace.read([record], list(fields or []), *options)[record]
    arrays = {"index": positions}
    for name, values in columns.items():
        arrays[_column_name(record, name)] = _scaled(values, described[name], scaled)
    out = np.empty(len(arrays["index"]), dtype=[(name, a.dtype) for name, a in arrays.items()])
    for name, a in arrays.items():
        out[name] = a
    return out


def _structured(packed, record, described, scaled):
    """The records the reader packed (8-byte fields: the index, then the
    fields) as a structured array, a scaled field turned to float64 in place."""
    raw, names = packed
    stored = {"unsigned": "=u8", "signed": "=i8", "float": "=f8"}
    layout = [("index", "=u8")] + [(_column_name(record, n), stored[described[n]["type"]]) for n in names]
    out = raw.view(np.dtype(layout))
    scaled_fields = [(i, n) for i, n in enumerate(names) if described[n]["scale"] != 0]
    if not scaled_fields or scaled == "int":
        return out
    final = list(layout)
    for i, n in scaled_fields:
        final[i + 1] = (final[i + 1][0], "=f8")
    values = {i: _scaled(out[layout[i + 1][0]], described[n], scaled) for i, n in scaled_fields}
    out = raw.view(np.dtype(final))
    for i, v in values.items():
        out[final[i + 1][0]] = v
    return out


def read_pandas(path, record=None, fields=None, chunks=None, scaled="float", progress=None, threads=None):
    """The records of type `record` (every type when None) as one DataFrame.

    Columns: `index` (the record's position in the trace, as `mtf dump`
    counts records), `record` (its type, categorical), then the fields, as
    `mtf dump --format csv` shows them: integers as uint64/int64, scaled
    fields as float64 (or the stored integer with scaled="int"), floats as
    float64; as categoricals, a field's enumeration names, flags or parts
    (`read|write`, `fd:5,index:1`), the character of a `chars` text field,
    and bytes. With several record types, rows are in trace order and a
    field a row's type lacks is missing (<NA>: integer columns are pandas'
    nullable UInt64/Int64). `chunks` reads part of the trace, and `threads`
    sets how many threads read it, as in read_numpy().
    """
    import pandas as pd

    info = path if isinstance(path, TraceInfo) else open(path)
    names = [record] if record is not None else list(info.records)
    if record is not None:
        info._record(record)
    tables = _read(info, names if record is not None else [], fields, progress, chunks, threads)
    frames = []
    for name in names:
        positions, columns = tables[name]
        frame = {"index": positions, "record": pd.Categorical.from_codes(np.zeros(len(positions), dtype=np.int8), [name])}
        described = {f["name"]: f for f in info._record(name)["fields"]}
        for field, values in columns.items():
            frame[_column_name(name, field)] = _pandas_column(info, name, described[field], values, scaled)
        # copy=False: the arrays are the frame's alone, and pandas would
        # otherwise copy every column to consolidate those of one dtype.
        frames.append(pd.DataFrame(frame, copy=False))
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

    small = _metatf.small_codes(values) if values.dtype.kind == "u" else None
    if small is not None:
        # Small numbers (opcodes, enumerations): a table lookup, with no sort.
        unique, codes = small
    else:
        unique, codes = np.unique(values, return_inverse=True)
    return pd.Categorical.from_codes(codes, list(name_of(unique)))


def _merge(frames, names):
    """Several record types' frames as one, in trace order. Integers become
    pandas' nullable types, a field unsigned in one type and signed in
    another Int64 (or Python ints past its range), and categoricals take the
    union of their categories, so no value changes on the way."""
    import pandas as pd
    from pandas.api.types import union_categoricals

    columns = {}
    for frame in frames:
        for column in frame.columns:
            columns.setdefault(column, []).append(frame)
    for column, holders in columns.items():
        if column == "index":
            continue
        kinds = {frame[column].dtype.kind if frame[column].dtype != "category" else "c" for frame in holders}
        if kinds == {"c"}:
            categories = union_categoricals([frame[column] for frame in holders]).categories
            for frame in holders:
                frame[column] = frame[column].cat.set_categories(categories)
        elif kinds <= {"u", "i"}:
            fits = all(frame[column].dtype.kind == "i" or not len(frame) or frame[column].max() <= np.iinfo(np.int64).max for frame in holders)
            target = "UInt64" if kinds == {"u"} else "Int64" if fits else object
            for frame in holders:
                frame[column] = frame[column].astype(target) if target != object else frame[column].astype(object)
    out = pd.concat(frames, ignore_index=True, sort=False)
    out["record"] = pd.Categorical(out["record"].astype(object), categories=names)
    return out.sort_values("index", kind="stable", ignore_index=True)


class Writer:
    """Writes a trace of the DTD file `dtd_path` to `path` from arrays or DataFrames.

    The runtime's encoder chooses each field's encoding from the data, as
    `mtf convert` does; `compress` (1-22) compresses chunks with zstd. The
    file appears at `path` when the writer closes (use `with`); an existing
    file is replaced only with overwrite=True, and a writer that is never
    closed, or whose `with` block raises, leaves nothing.
    """

    def __init__(self, dtd_path, path, overwrite=False, compress=0):
        if not overwrite and os.path.lexists(path):
            # Said here in Python's terms; the runtime refuses it too, in mtf's (-f).
            raise FileExistsError(f"{os.fspath(path)}: exists; pass overwrite=True to replace it")
        self._writer = _metatf.Writer(os.fspath(dtd_path), os.fspath(path), bool(overwrite), int(compress))
        self._records = {r["name"]: r for r in self._writer.records()}

    def write(self, record, data):
        """Appends the rows of `data` (a DataFrame, a structured array or a
        dict of arrays) as records of type `record`, in order. Columns are
        the record's fields outside repeated groups (extra ones, such as
        `index` and `record`, are ignored); values as read_pandas gives them:
        numbers, names of enum/flags/parts, characters of chars fields,
        scaled fields as their value or as the stored integer, bytes as
        bytes. A value a field cannot hold exactly (a fraction, a negative
        number in an unsigned field, NaN, a digit past the scale) is a
        ValueError. Repeated groups must be empty (their counts 0); the
        records are checked against that as the encoder writes them, up to
        16,384 records later or at close()."""
        if record not in self._records:
            raise KeyError(f"the DTD has no record type '{record}' (it has {', '.join(self._records)})")
        described = self._records[record]["fields"]
        columns = []
        n = None if isinstance(data, dict) else len(data)
        for field in described:
            if field["repeated"]:
                columns.append(np.zeros(0, dtype=np.uint64))
                continue
            name = _column_name(record, field["name"])
            try:
                values = data[name]
            except (KeyError, ValueError, IndexError):
                raise KeyError(f"no column for field '{field['name']}' of record type '{record}'") from None
            values = self._stored(record, field, values)
            if n is None:
                n = len(values)
            if len(values) != n:
                raise ValueError(f"column '{name}' has {len(values)} rows, not {n}")
            columns.append(values)
        if n is None:
            raise ValueError(f"record type '{record}' has no field to take a row count from: give a DataFrame or a structured array")
        self._writer.write(record, columns, n)

    def _stored(self, record, field, values):
        """A column as the module takes it: uint64 (two's complement for signed
        fields), float64, or an object array of bytes; refuses what it cannot store exactly."""
        what = f"field '{field['name']}' of record type '{record}'"
        if field["type"] == "bytes":
            out = np.empty(len(values), dtype=object)
            for k, v in enumerate(values):  # not np.asarray: a fixed-width bytes array drops trailing NULs
                if not isinstance(v, (bytes, bytearray, memoryview)):
                    raise ValueError(f"{what} holds bytes, not {type(v).__name__}")
                out[k] = bytes(v)
            return out
        if hasattr(values, "dtype") and str(values.dtype) in ("UInt64", "Int64", "UInt32", "Int32", "UInt16", "Int16", "UInt8", "Int8"):
            if values.isna().any():
                raise ValueError(f"{what} has missing values")
            values = values.to_numpy(dtype=np.int64 if str(values.dtype).startswith("Int") else np.uint64)
        values = np.asarray(values)
        if values.ndim != 1:
            raise ValueError(f"{what}: a column is one-dimensional, not of shape {values.shape}")
        if field["type"] == "float":
            return np.ascontiguousarray(values, dtype=np.float64)
        if values.dtype.kind in "OUS":
            return self._named(record, field, values, what)
        if values.dtype.kind == "b":
            values = values.astype(np.uint64)
        if values.dtype.kind == "f":
            values = self._whole(values, field, what)
        if values.dtype.kind not in "iu":
            raise ValueError(f"{what} is a number, not {values.dtype}")
        signed = field["type"] == "signed"
        if signed and values.dtype.kind == "u" and len(values) and values.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{what} is signed; {values.max()} is beyond it")
        if not signed and values.dtype.kind == "i" and len(values) and values.min() < 0:
            raise ValueError(f"{what} is unsigned, but holds {values.min()}")
        return np.ascontiguousarray(values.astype(np.int64 if signed else np.uint64, copy=False)).view(np.uint64)

    @staticmethod
    def _whole(values, field, what):
        """Floats as the stored integers: a scaled field's values times 10**scale, each exactly a whole number."""
        scaled = values * np.float64(10) ** field["scale"] if field["scale"] else values
        whole = np.rint(scaled)
        # Beyond a float's own rounding, digits past the scale would be lost: refused.
        bad = ~np.isfinite(scaled) | (np.abs(scaled - whole) > np.abs(scaled) * 4e-16)
        if field["type"] != "signed":
            bad |= whole < 0
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"{what} cannot hold {values[k]!r} exactly" +
                             (f" (it keeps {field['scale']} fraction digits)" if field["scale"] else ""))
        return whole.astype(np.int64 if field["type"] == "signed" else np.uint64)

    def _named(self, record, field, values, what):
        """Names, characters or numbers as text (as read_pandas shows them) as the stored integers."""
        unique, codes = np.unique(values.astype(str), return_inverse=True)
        if field["naming"]:
            stored = self._writer.named_values(record, field["name"], list(unique))
        elif field["text"] == "chars":
            chars = field["chars"]
            stored = np.empty(len(unique), dtype=np.uint64)
            for k, u in enumerate(unique):
                if len(u) == 1 and u in chars:
                    stored[k] = chars.index(u)
                elif u.isdigit():  # a value past the characters, shown as its number
                    stored[k] = int(u)
                else:
                    raise ValueError(f"{what} takes one of the characters {chars!r}, not {u!r}")
        else:
            raise ValueError(f"{what} is a number, not text")
        return np.ascontiguousarray(stored[codes])

    def close(self):
        """Finishes the trace: the file is complete at `path` after this."""
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        # Otherwise the trace is dropped: nothing half-written is left.
        else:
            self._writer = None
