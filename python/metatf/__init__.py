"""Meta-TF traces in Python.

Reads a trace of any DTD (the DTD is compiled from the text the trace
carries) into NumPy arrays and pandas DataFrames. The decoding is the
runtime's, in C++: one pass over the trace, no Python object per record.
See docs/python.md.
"""

import functools
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
        # The DTD's text as the trace holds it, and as str: bytes that are
        # not UTF-8 (a Latin-1 comment) read as U+FFFD there.
        self.dtd_bytes = self._trace.dtd_bytes
        self.dtd_text = self._trace.dtd_text
        # Every record, the predefined ones (comments, metadata) included.
        self.record_count = self._trace.record_count
        self.records = {r["name"]: r for r in self._trace.records()}
        # The container version: from version 3 every segment of the file
        # decodes alone, so a read can start at any of them.
        self.version = self._trace.version
        # Per segment: (its first record, its number of records), in trace order.
        self.segments = list(self._trace.segments)

    @property
    def chunks(self):
        """The older name of `segments`."""
        return self.segments

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
                f"in {len(self.segments)} segments, types {', '.join(self.records)}>")


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


def _segment_range(info, segments):
    """(first, end) segment indices for the reader from `segments`: None (all),
    an index, a range with step 1 or a (start, stop) pair, as Python slices them."""
    if segments is None:
        return 0, -1
    count = len(info.segments)
    if isinstance(segments, int):
        first = segments + count if segments < 0 else segments
        if not 0 <= first < count:
            raise IndexError(f"segment {segments} is not in the trace's {count} segments")
        return first, first + 1
    if isinstance(segments, range):
        if segments.step != 1:
            raise ValueError("a segment range must have step 1")
        segments = (segments.start, segments.stop)
    start, stop, _ = slice(*segments).indices(count)
    return start, max(start, stop)


def _selection(segments, chunks):
    """`segments`, or `chunks`, its older name (the segments were called chunks before)."""
    if chunks is None:
        return segments
    if segments is not None:
        raise TypeError("segments and chunks name the same selection (chunks is its older name): pass one of them")
    return chunks


# A read's default memory budget: this much, plus so many times the file's
# size. A trace stores a record in a few bytes, compressed often in one or
# two, and a read returns 8 bytes per field of it: the read of a heap trace
# that zstd compressed is estimated at some 75 times the file's size (pandas
# peaks at twice that), which 256 covers, while a small file of one record
# repeated millions of times (zstd shrinks it a thousandfold) is refused
# instead of filling memory.
MEMORY_FLOOR = 256 << 20
MEMORY_PER_FILE_BYTE = 256


def _budget(info, max_memory):
    """The bytes a read may take: `max_memory`, or by default a floor plus a multiple of the file's size; 0 for no limit."""
    if max_memory is None:
        return MEMORY_FLOOR + MEMORY_PER_FILE_BYTE * os.path.getsize(info.path)
    if max_memory == float("inf"):
        return 0
    if not max_memory > 0:
        raise ValueError(f"max_memory is a number of bytes above 0 (float('inf') for no limit), not {max_memory!r}")
    return min(int(max_memory), (1 << 64) - 1)


def _read_options(info, progress, segments, threads, max_memory):
    """The reader's arguments for a progress flag, a segment selection, a thread count and a memory budget."""
    first, end = _segment_range(info, segments)
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return _progress(info, progress), first, end, threads or 0, _budget(info, max_memory)


def _read(info, records, fields, progress, segments=None, threads=None, max_memory=None):
    return info._trace.read(list(records), list(fields or []), *_read_options(info, progress, segments, threads, max_memory))


def _column_name(record, field):
    """A field's column: its name, or RECORD.FIELD for a field called index or record (as mtf dump's CSV does)."""
    return f"{record}.{field}" if field in ("index", "record") else field


def _scaled(values, field, scaled, in_place=False):
    """A scaled field's stored integers as float64 (or as they are with
    scaled="int"). With in_place, in the integers' own memory, which the
    caller gives up: a column of a large read is not allocated twice."""
    if field["scale"] == 0 or scaled == "int":
        return values
    if scaled != "float":
        raise ValueError(f"scaled is 'float' or 'int', not {scaled!r}")
    unit = np.float64(10) ** field["scale"]
    if in_place and values.dtype.itemsize == 8 and values.flags.c_contiguous and values.flags.writeable:
        return np.divide(values, unit, out=values.view(np.float64))
    return values / unit


def read_numpy(path, record, fields=None, segments=None, scaled="float", progress=None, threads=None, max_memory=None, *, chunks=None):
    """The records of type `record` as a NumPy structured array.

    Its fields are `index` (each record's position in the trace, as `mtf
    dump` counts records) and the record's fields (a field called index
    or record as RECORD.FIELD) (those `fields` names, in
    that order, or all outside repeated groups): unsigned fields as uint64,
    signed as int64, floats as float64, bytes as Python bytes (object). A
    field with a scale is float64 (its value) or, with scaled="int", the
    stored integer (the value times 10**scale). Enumerations, flags and
    parts are their numbers.

    `segments` reads part of the trace: the records of segment k (an int),
    of range(a, b) or of (a, b), where a segment is what a writer flushed
    at once (TraceInfo.segments lists them; `chunks=` is the older name of
    this argument). A version-3 trace or later (what the project's writers
    produce) starts reading at the segment itself; an older trace can only
    be read from its first segment. Since its segments decode alone, such a
    trace is read by `threads` threads at once (None: one per core), each a
    run of segments.

    A read that would take more than `max_memory` bytes is refused with
    MemoryError before it starts: by default 256 MiB plus 256 times the
    file's size (MEMORY_FLOOR, MEMORY_PER_FILE_BYTE); float('inf') for no limit.
    """
    info = path if isinstance(path, TraceInfo) else open(path)
    info._record(record)
    described = {f["name"]: f for f in info._record(record)["fields"]}
    options = _read_options(info, progress, _selection(segments, chunks), threads, max_memory)
    packed = info._trace.read_packed(record, list(fields or []), *options)
    if packed is not None:
        return _structured(packed, record, described, scaled)
    positions, columns = info._trace.read([record], list(fields or []), *options)[record]
    arrays = {"index": positions}
    for name, values in columns.items():
        if described[name]["type"] == "bytes":
            arrays[_column_name(record, name)] = _bytes_values(values)
        else:
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


def read_pandas(path, record=None, fields=None, segments=None, scaled="float", progress=None, threads=None, max_memory=None,
                bits="names", *, chunks=None):
    """The records of type `record` (every type when None) as one DataFrame.

    Columns: `index` (the record's position in the trace, as `mtf dump`
    counts records), `record` (its type, categorical), then the fields, as
    `mtf dump --format csv` shows them: integers as uint64/int64, scaled
    fields as float64 (or the stored integer with scaled="int"), floats as
    float64; as categoricals, a field's enumeration names, flags or parts
    (`read|write`, `fd:5,index:1`), the character of a `chars` text field,
    and bytes. With several record types, rows are in trace order and a
    field a row's type lacks is missing (<NA>: integer columns are pandas'
    nullable UInt64/Int64). `segments` reads part of the trace, `threads`
    sets how many threads read it, and `max_memory` bounds the memory the
    read may take, as in read_numpy().

    With bits="parts", a field of parts (a DTD's `bits` rule) gives a column
    per part instead, FIELD.PART, each the part's number (uint64); bits that
    no part holds are left out (read_numpy gives the whole value).
    """
    import pandas as pd

    if bits not in ("names", "parts"):
        raise ValueError(f"bits is 'names' or 'parts', not {bits!r}")
    info = path if isinstance(path, TraceInfo) else open(path)
    names = [record] if record is not None else list(info.records)
    if record is not None:
        info._record(record)
    tables = _read(info, names if record is not None else [], fields, progress, _selection(segments, chunks), threads, max_memory)
    frames = []
    for name in names:
        positions, columns = tables[name]
        frame = {"index": positions}
        described = {f["name"]: f for f in info._record(name)["fields"]}
        for field, values in columns.items():
            if fields is None and described[field]["measures"] and described[field]["text"] == "omit":
                continue  # the length of a string that its text derives: the str gives it
            column = _column_name(name, field)
            if bits == "parts" and described[field]["naming"] == "bits":
                frame.update(_bit_parts(values, described[field], column))
            else:
                frame[column] = _pandas_column(info, name, described[field], values, scaled)
        frames.append(frame)
    if len(frames) != 1:
        return _merge(frames, names)
    frame = frames[0]
    record = {"record": _from_codes(np.zeros(len(frame["index"]), dtype=np.int8), names)}
    # copy=False: the arrays are the frame's alone, and pandas would
    # otherwise copy every column to consolidate those of one dtype.
    return pd.DataFrame({"index": frame.pop("index"), **record, **frame}, copy=False)


def _pandas_column(info, record, field, values, scaled):
    if field["naming"]:
        return _categorical(values, lambda unique: info._trace.value_names(record, field["name"], unique.view(np.uint64)))
    if field["text"] == "chars":
        chars = field["chars"]
        return _categorical(values, lambda unique: [chars[v] if v < len(chars) else str(v) for v in unique])
    if field["type"] == "bytes":
        return _strings(values, field)
    return _scaled(values, field, scaled, in_place=True)  # the read's own column


def _bytes_values(column):
    """A bytes column as the reader gives it (a code per row and the distinct
    values) as an object array of bytes, one per row."""
    codes, distinct = column
    table = np.empty(len(distinct), dtype=object)
    table[:] = distinct
    return table[codes]


def _strings(column, field):
    """A bytes column for pandas: a field with a text form (`string`, `line`, `nested`)
    holds text, so its values are str (UTF-8; bytes that are not UTF-8 kept
    by surrogateescape, which Writer undoes); other bytes (a packet) stay
    bytes. A categorical when values repeat (at most one distinct value in
    two rows), made from the distinct values, not per row."""
    codes, distinct = column
    if field["text"] in ("string", "line", "nested"):
        distinct = [v.decode("utf-8", "surrogateescape") for v in distinct]
    if len(distinct) * 2 <= len(codes):
        return _from_codes(codes, distinct)
    table = np.empty(len(distinct), dtype=object)
    table[:] = distinct
    return table[codes]


def _bit_parts(values, field, column):
    """A field of parts as a column per part, COLUMN.PART: the bits its mask
    selects, shifted down to a number (the runtime packs parts from the least
    significant bit up, docs/dtd-language.md)."""
    out = {}
    for part, mask in field["names"].items():
        shift = (mask & -mask).bit_length() - 1
        out[f"{column}.{part}"] = (values & np.uint64(mask)) >> np.uint64(shift)
    return out


def _categorical(values, name_of):
    """`values` as a categorical whose categories are the names of its distinct values, in value order."""
    small = _metatf.small_codes(values) if values.dtype.kind == "u" else None
    if small is not None:
        # Small numbers (opcodes, enumerations): a table lookup, with no sort.
        unique, codes = small
    else:
        unique, codes = np.unique(values, return_inverse=True)
    return _from_codes(codes, name_of(unique))


def _from_codes(codes, categories):
    """A categorical of `codes` into `categories`; a short list of them (a
    record's name, opcodes, an enumeration) has its dtype made once, which
    would otherwise take longer than taking the codes of many rows."""
    import pandas as pd

    categories = tuple(categories)
    if len(categories) <= 64:
        return pd.Categorical.from_codes(codes, dtype=_category_dtype(categories))
    return pd.Categorical.from_codes(codes, categories)


@functools.lru_cache(maxsize=256)
def _category_dtype(categories):
    import pandas as pd

    return pd.CategoricalDtype(categories)


def _merge(frames, names):
    """Several record types' columns ({column: array or Categorical}, the
    record's positions as "index") as one DataFrame, in trace order.
    Integers become pandas' nullable types, a field unsigned in one type
    and signed in another Int64 (or Python ints past its range), and
    categoricals take the union of their categories, so no value changes on
    the way. Built column by column from each type's arrays, in the order a
    stable sort of the positions gives (each type's are sorted already):
    no frame per type, whose making would cost more than the merge."""
    import pandas as pd

    lengths = [len(frame["index"]) for frame in frames]
    positions = np.concatenate([frame["index"] for frame in frames])
    order = np.argsort(positions, kind="stable")
    code = np.promote_types(np.min_scalar_type(-len(frames)), np.int8)
    types = np.repeat(np.arange(len(frames), dtype=code), lengths)
    out = {"index": positions[order], "record": _from_codes(types[order], names)}
    ends = np.cumsum(lengths)
    spans = [slice(end - length, end) for end, length in zip(ends, lengths)]
    for column in dict.fromkeys(c for frame in frames for c in frame if c != "index"):
        out[column] = _merged_column(frames, spans, column, order)
    return pd.DataFrame(out, copy=False)


def _merged_column(frames, spans, column, order):
    """One column of _merge(), its rows taken in `order` (type k's rows
    are rows spans[k] before it): missing in the types without it.
    Categoricals, integers and floats are assembled from the types' arrays;
    other mixes as pandas.concat joins them."""
    import pandas as pd
    from pandas.api.types import union_categoricals

    total = len(order)
    pieces = [(span, frame[column]) for span, frame in zip(spans, frames) if column in frame]
    kinds = {"c" if isinstance(values, pd.Categorical) else values.dtype.kind for _, values in pieces}
    int64_max = np.uint64(np.iinfo(np.int64).max)  # compared as uint64: exact
    fits = kinds != {"u", "i"} or all(v.dtype.kind != "u" or not len(v) or v.max() <= int64_max for _, v in pieces)
    if kinds == {"c"}:
        dtype = pd.CategoricalDtype(union_categoricals([values for _, values in pieces]).categories)
        codes = np.full(total, -1, dtype=np.int32)
        for span, values in pieces:
            codes[span] = values.set_categories(dtype.categories).codes
        return pd.Categorical.from_codes(codes[order], dtype=dtype)
    if kinds == {"f"} or (kinds <= {"u", "i"} and (kinds == {"u"} or fits)):
        dtype = np.float64 if kinds == {"f"} else np.uint64 if kinds == {"u"} else np.int64
        values, mask = np.zeros(total, dtype=dtype), np.ones(total, dtype=bool)
        for span, piece in pieces:
            values[span], mask[span] = piece, False
        if kinds == {"f"}:
            values[mask] = np.nan
            return values[order]
        return pd.arrays.IntegerArray(values[order], mask[order])
    # Integers past Int64 (as Python ints), or a mix of kinds: as concat joins them.
    past = kinds <= {"u", "i"}
    parts = [pd.DataFrame({column: frame[column]}).astype(object) if past and column in frame
             else pd.DataFrame({column: frame[column]}) if column in frame
             else pd.DataFrame(index=pd.RangeIndex(len(frame["index"]))) for frame in frames]
    return pd.concat(parts, ignore_index=True, sort=False)[column].take(order).reset_index(drop=True)


def _chunk_bytes(chunk_size):
    """A chunk size in bytes, from an int or from text as mtf takes it ("64K", "4M")."""
    if isinstance(chunk_size, str):
        unit = {"K": 1 << 10, "M": 1 << 20}.get(chunk_size[-1:], 1)
        digits = chunk_size[:-1] if unit != 1 else chunk_size
        n = int(digits) * unit if digits.isdigit() else 0
    else:
        n = int(chunk_size)
    if not 4 << 10 <= n <= 64 << 20:
        raise ValueError(f"chunk_size takes a size from 4K to 64M (bytes, or text with K or M for KiB or MiB), not {chunk_size!r}")
    return n


class Writer:
    """Writes a trace of a DTD to `path` from DataFrames, structured arrays or dicts of arrays.

    `dtd` is a DTD file, or the name of a DTD the project ships ("spc",
    "hatf10") when no file of that name exists. The options are those of
    `mtf recode`: `encoding` "auto" chooses each field's encoding from the
    data ("initial" keeps the DTD's, widened where a value needs it), `live`
    lets auto use references to live values (as `predict` fields: `mtf
    recode --references predict`); `compress` is a zstd level (1-22, True
    for 19, 0 for none); `chunk_size` the bytes of records a chunk holds
    (4K-64M, an int or text such as "4M"; None: 16M when compressing, else
    1M); `split` the fields
    ("record.field") that get a value section of their own;
    `container_version` the layout (None: the newest). The file appears at
    `path` when the writer closes (use `with`); an existing file is replaced
    only with overwrite=True, and a writer that is never closed, or whose
    `with` block raises, leaves nothing.
    """

    def __init__(self, dtd, path, overwrite=False, compress=0, chunk_size=None, split=(), container_version=None,
                 encoding="auto", live=True):
        if not overwrite and os.path.lexists(path):
            # Said here in Python's terms; the runtime refuses it too, in mtf's (-f).
            raise FileExistsError(f"{os.fspath(path)}: exists; pass overwrite=True to replace it")
        level = 19 if compress is True else int(compress)
        if not 0 <= level <= 22:
            raise ValueError(f"compress takes a zstd level from 1 to 22 (True: 19), or 0 for none, not {compress!r}")
        if chunk_size is None:
            chunk_size = "16M" if level else "1M"
        if encoding not in ("auto", "initial"):
            raise ValueError(f"encoding is 'auto' or 'initial', not {encoding!r}")
        if not live and encoding != "auto":
            raise ValueError("live=False applies to encoding='auto'")
        split = split.split(",") if isinstance(split, str) else list(split)
        version = 0 if container_version is None else int(container_version)
        self._writer = _metatf.Writer(os.fspath(dtd), os.fspath(path), bool(overwrite), level, _chunk_bytes(chunk_size), split,
                                      version, encoding == "auto", bool(live))
        self._records = {r["name"]: r for r in self._writer.records()}

    def write(self, data, record=None):
        """Appends the rows of `data` (a DataFrame, a structured array or a
        dict of arrays), in order: each row as the record type its `record`
        column names, as read_pandas() gives it, or every row as type
        `record` when that is given. write(record, data), the older order,
        is write(data, record).

        Columns are the fields outside repeated groups, named as read_pandas
        names them (others, such as `index`, are ignored), with values as it
        gives them: numbers, names of enum/flags/parts, characters of chars
        fields, scaled fields as their value or as the stored integer, bytes
        fields as bytes or str (UTF-8). A field may be left out when the DTD
        gives it a value by default, when it is the length of a later bytes
        field (it is then that field's length; the bytes field, left out,
        is empty), or when it counts a repeated group. Repeated groups are
        written empty: a count must be 0. A value a field cannot hold
        exactly (a fraction, a negative number in an unsigned field, NaN, a
        digit past the scale, a missing value) is a ValueError; one found
        as the rows are written stops the call at its row, and a `with`
        block that raises drops the trace."""
        if isinstance(data, str):
            data, record = record, data
        table = _Table(data)
        if record is not None:
            self._described(record)
            if "record" in table:
                names, codes, counts = self._record_codes(table)
                other = next((name for name, count in zip(names, counts) if count and name != record), None)
                if other is not None:
                    raise ValueError(f"write(record={record!r}) was given rows of record type {other!r}; "
                                     "leave record out to write each row as the type its record column names")
            types, codes, groups = [record], None, [None]
        else:
            if "record" not in table:
                raise ValueError("write() takes a 'record' column naming each row's record type (as read_pandas gives it), "
                                 "or record=NAME for rows of one type")
            types, codes, counts = self._record_codes(table)
            order = np.argsort(codes, kind="stable")
            bounds = np.concatenate(([0], np.cumsum(counts)))
            groups = [order[bounds[t]:bounds[t + 1]] if counts[t] else False for t in range(len(types))]
        columns = [None if rows is False else self._columns(table, name, rows) for name, rows in zip(types, groups)]
        if table.n is None:
            raise ValueError(f"record type '{record}' has no column to take a row count from: give a DataFrame or a structured array")
        self._writer.write(types, codes, columns, table.n)

    def _described(self, record):
        if record not in self._records:
            raise KeyError(f"the DTD has no record type '{record}' (it has {', '.join(self._records)})")
        return self._records[record]["fields"]

    def _record_codes(self, table):
        """The record types the `record` column names, each row's as a code among them, and their row counts."""
        import pandas as pd

        column = table.column("record")
        if column.codes is not None:
            names, codes = [str(c) for c in column.categories], column.codes
        else:
            codes, uniques = pd.factorize(column.values)
            names = [str(u) for u in uniques]
        if len(codes) and codes.min() < 0:
            raise ValueError(f"row {int(np.argmax(codes < 0))} has no record type")
        codes = codes.astype(np.int32)
        counts = np.bincount(codes, minlength=len(names))
        for name, count in zip(names, counts):
            if count:
                self._described(name)
        return names, codes, counts

    def _columns(self, table, record, rows):
        """Per field of `record`: its stored values at `rows` (None: every row), or None where the frame has no column."""
        out = []
        for field in self._described(record):
            name = _column_name(record, field["name"])
            if field["repeated"] or name not in table:
                out.append(None)
                continue
            out.append(self._stored(record, field, table.column(name).take(rows)))
        return out

    def _stored(self, record, field, column):
        """A column as the module takes it: uint64 (two's complement for signed
        fields), float64, or objects (bytes or str) for bytes; refuses what it cannot store exactly."""
        import pandas as pd

        what = f"field '{field['name']}' of record type '{record}'"
        missing = column.codes < 0 if column.codes is not None else column.missing
        if missing is None and column.values.dtype == object:
            missing = pd.isna(column.values)  # None or NaN among objects
        if missing is not None and missing.any():
            raise ValueError(f"{what} has a missing value (row {column.row(int(np.argmax(missing)))})")
        if column.codes is None:
            return self._stored_values(record, field, column.values, what)
        # A categorical: its categories the rows use, each stored once.
        used = np.flatnonzero(np.bincount(column.codes, minlength=len(column.categories)))
        stored = self._stored_values(record, field, column.categories[used], what)
        lookup = np.zeros(len(column.categories), dtype=stored.dtype)
        lookup[used] = stored
        return lookup[column.codes]

    def _stored_values(self, record, field, values, what):
        if field["type"] == "bytes":
            return np.ascontiguousarray(values, dtype=object)  # the module takes bytes and str, and refuses the rest
        if field["type"] == "float":
            return np.ascontiguousarray(values, dtype=np.float64)
        if values.dtype.kind == "O":
            return self._from_objects(record, field, values, what)
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

    def _from_objects(self, record, field, values, what):
        """Text (names, characters, numbers as read_pandas shows them) or
        Python ints (past int64, as read_pandas gives them) as the stored integers."""
        import pandas as pd

        codes, unique = pd.factorize(values)
        if all(isinstance(u, (int, np.integer)) and not isinstance(u, bool) for u in unique):
            signed = field["type"] == "signed"
            low, high = (-(1 << 63), (1 << 63) - 1) if signed else (0, (1 << 64) - 1)
            bad = next((u for u in unique if not low <= u <= high), None)
            if bad is not None:
                raise ValueError(f"{what} cannot hold {bad}")
            stored = np.array([int(u) & ((1 << 64) - 1) for u in unique], dtype=np.uint64)
        else:
            stored = self._named(record, field, [str(u) for u in unique], what)
        return np.ascontiguousarray(stored[codes])

    def _named(self, record, field, names, what):
        """Names or characters (and unnamed values as their numbers) as the stored integers."""
        if field["naming"]:
            return self._writer.named_values(record, field["name"], names)
        if field["text"] != "chars":
            raise ValueError(f"{what} is a number, not text")
        chars = field["chars"]
        stored = np.empty(len(names), dtype=np.uint64)
        for k, u in enumerate(names):
            if len(u) == 1 and u in chars:
                stored[k] = chars.index(u)
            elif u.isdigit():  # a value past the characters, shown as its number
                stored[k] = int(u)
            else:
                raise ValueError(f"{what} takes one of the characters {chars!r}, not {u!r}")
        return stored

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


class _Table:
    """The columns of a DataFrame, a structured array or a dict of arrays, each read once."""

    def __init__(self, data):
        if hasattr(data, "columns"):
            names = list(data.columns)
        elif getattr(getattr(data, "dtype", None), "names", None):
            names = list(data.dtype.names)
        elif hasattr(data, "keys"):
            names = list(data.keys())
        else:
            raise TypeError(f"write() takes a DataFrame, a structured array or a dict of arrays, not {type(data).__name__}")
        self._data, self._names, self._columns = data, set(names), {}
        # A dict's row count is its first column's length.
        self.n = None if hasattr(data, "keys") and not hasattr(data, "columns") else len(data)

    def __contains__(self, name):
        return name in self._names

    def column(self, name):
        if name not in self._columns:
            column = _Column(name, self._data[name])
            if self.n is None:
                self.n = len(column)
            if len(column) != self.n:
                raise ValueError(f"column '{name}' has {len(column)} rows, not {self.n}")
            self._columns[name] = column
        return self._columns[name]


class _Column:
    """A column's values as NumPy arrays: the values (with a mask of missing
    ones for pandas' nullable types), or a categorical's codes and categories;
    take(rows) gives those of some rows, which remember their rows in the frame."""

    def __init__(self, name, values, rows=None):
        import pandas as pd

        self.values = self.missing = self.codes = self.categories = None
        self.rows = rows
        dtype = getattr(values, "dtype", None)
        if isinstance(dtype, pd.CategoricalDtype):
            categorical = values.array if isinstance(values, pd.Series) else values
            self.codes, self.categories = np.asarray(categorical.codes), categorical.categories.to_numpy()
            return
        if isinstance(dtype, pd.api.extensions.ExtensionDtype):
            # Nullable integers, floats and booleans, strings: values and where some are missing.
            self.missing = np.asarray(pd.isna(values))
            numpy_dtype = getattr(dtype, "numpy_dtype", None)
            if numpy_dtype is not None and numpy_dtype.kind in "iufb":
                self.values = values.to_numpy(dtype=numpy_dtype, na_value=0)
            else:
                self.values = values.to_numpy(dtype=object, na_value=None)
            return
        if isinstance(values, pd.Series):
            values = values.to_numpy()
        array = np.asarray(values)
        if array.dtype.kind in "SU":
            # As objects: a list of bytes would otherwise lose its trailing NULs in a fixed-width array.
            array = np.empty(len(values), dtype=object)
            array[:] = list(values)
        if array.ndim != 1:
            raise ValueError(f"column '{name}': a column is one-dimensional, not of shape {array.shape}")
        self.values = array

    def __len__(self):
        return len(self.codes if self.codes is not None else self.values)

    def take(self, rows):
        if rows is None:
            return self
        out = _Column.__new__(_Column)
        out.rows = rows
        out.categories = self.categories
        out.codes, out.values, out.missing = (None if a is None else a[rows] for a in (self.codes, self.values, self.missing))
        return out

    def row(self, k):
        """The frame's row of this column's k-th value."""
        return k if self.rows is None else int(self.rows[k])
