"""Meta-TF traces as Dask DataFrames, one partition per range of segments.

Each segment of a version-3 trace decodes alone, so each partition reads its
own segments with the same reader read_pandas() uses, on whichever worker
runs it: a trace larger than one machine's memory is read in parallel, and
a worker holds one partition at a time. See docs/python.md.
"""

import glob as _glob
import os

from . import open as _open
from . import read_pandas

__all__ = ["read_dask"]


def _paths(path_or_glob):
    path = os.fspath(path_or_glob)
    if not _glob.has_magic(path):
        return [path]
    paths = sorted(_glob.glob(path))
    if not paths:
        raise FileNotFoundError(f"no trace matches {path!r}")
    return paths


def _partitions(info, partition_records):
    """Ranges of segments of about `partition_records` records each, whole segments only.
    A trace older than version 3 reads from its start, so it is one partition."""
    count = len(info.segments)
    if info.version < 3 or count == 0:
        return [(0, count)]
    out, start, records = [], 0, 0
    for k, (_, n) in enumerate(info.segments):
        records += n
        if records >= partition_records:
            out.append((start, k + 1))
            start, records = k + 1, 0
    if start < count:
        out.append((start, count))
    return out


def _read_part(part, record, fields, scaled, max_memory):
    path, first, end = part
    # One thread: Dask runs as many partitions at once as its workers have threads.
    return read_pandas(path, record, fields, segments=(first, end), scaled=scaled, progress=False, threads=1, max_memory=max_memory)


def read_dask(path_or_glob, record=None, fields=None, partition_records=2_000_000, scaled="float", max_memory=None):
    """The records of type `record` (every type when None) of one trace, or
    of every trace a glob pattern matches (in name order), as a
    dask.dataframe.DataFrame with the columns read_pandas() gives.

    A partition is a range of whole segments holding about
    `partition_records` records (a segment holds what a writer flushed at
    once, 1 MiB of records or 16 MiB compressed: tens of thousands to
    millions), so a worker's memory follows that number, not the trace's
    length. Files are opened here to count their segments; the
    partitions are read where Dask runs them, so the paths must name the
    same files on every worker (a shared file system). The index of each
    partition is its own (0, 1, ...); the `index` column is the record's
    position in its trace. `max_memory` bounds each partition's read, as
    in read_pandas().
    """
    import dask.dataframe as dd
    from dask.dataframe.utils import clear_known_categories

    if partition_records < 1:
        raise ValueError("partition_records must be at least 1")
    parts = []
    for path in _paths(path_or_glob):
        info = _open(path)
        parts.extend((info.path, first, end) for first, end in _partitions(info, partition_records))
    # The columns and dtypes, from no records; categories differ by partition.
    meta = clear_known_categories(read_pandas(parts[0][0], record, fields, segments=(0, 0), scaled=scaled, progress=False))
    return dd.from_map(_read_part, parts, record=record, fields=fields, scaled=scaled, max_memory=max_memory, meta=meta,
                       label="metatf-read", enforce_metadata=False)
