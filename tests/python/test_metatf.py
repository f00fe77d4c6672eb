"""The Python package metatf on traces made by the tools under test.

Run by CTest (tests/CMakeLists.txt) with PYTHONPATH at the built package and
METATF_MTF, METATF_MAKE_TEXT and METATF_SOURCE_DIR in the environment.
"""

import io
import os
import struct
import subprocess
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metatf

MTF = os.environ["METATF_MTF"]
MAKE_TEXT = os.environ["METATF_MAKE_TEXT"]
SOURCE = Path(os.environ["METATF_SOURCE_DIR"])


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def spc(tmp_path_factory):
    """An SPC trace from 20,000 generated lines: deltas, units and widened fields in its metadata."""
    work = tmp_path_factory.mktemp("spc")
    text, trace = work / "spc.txt", work / "spc.mtf"
    run(MAKE_TEXT, "spc", 20000, text)
    run(MTF, "convert", "--dtd", SOURCE / "dtds/spc.dtd", text, trace)
    return text, trace


# ---- an independent decoder of a trace with fixed encodings

FIXED_DTD = """tag.width = 1;
text { separator = " "; }
a.width = 1;
b.width = 2;
b.type = signed;
c.width = 8;
d.type = float;
d.width = 8;
r : (tag, a, b, c, d) { tag.value = 4; tag.mnemonic = "r"; }
"""


def crc32c(data):
    """CRC32C (Castagnoli), bit by bit from its definition."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def decode_fixed(data):
    """The (a, b, c, d) of each record of a FIXED_DTD trace, read from the
    container's bytes as docs/trace-format.md lays them out: no Meta-TF code.
    In version 4 it also checks every checksum (section 1.3)."""
    assert data[:4] == b"\x7fMTF" and data[7] in (2, 3, 4)
    v4 = data[7] == 4
    word = 4 if data[4] == 1 else 8
    order = "<" if data[5] == 1 else ">"
    w = order + ("I" if word == 4 else "Q")
    name_length = data[6]
    (text_length,) = struct.unpack_from(w, data, 16)
    at = 16 + word + (4 if v4 else 0) + name_length + text_length
    if v4:
        header = bytearray(data[:at])
        (want,) = struct.unpack_from(order + "I", header, 16 + word)
        header[16 + word:20 + word] = bytes(4)
        assert crc32c(header) == want
    rows = []
    while data[at:at + 1] == b"S":
        chunks = struct.unpack_from(order + "H", data, at + 2)[0]
        records, state = struct.unpack_from(order + ("II" if word == 4 else "QQ"), data, at + 8)
        assert state == 0
        frame_at = at
        at += 8 + 2 * word
        sizes, sums = [], []
        for _ in range(chunks):
            section, codec = data[at], data[at + 1]
            if v4:
                sums.append(struct.unpack_from(order + "I", data, at + 4)[0])
            stored, decoded = struct.unpack_from(order + ("II" if word == 4 else "QQ"), data, at + (8 if v4 else 4))
            assert (section, codec, stored) == (0, 0, decoded)
            sizes.append(stored)
            at += (8 if v4 else 4) + 2 * word
        if v4:
            frame = bytearray(data[frame_at:at])
            (want,) = struct.unpack_from(order + "I", frame, 4)
            frame[4:8] = bytes(4)
            assert crc32c(frame) == want
        for k, size in enumerate(sizes):
            end = at + size
            if v4:
                assert crc32c(data[at:end]) == sums[k]
            while at < end:
                assert data[at] == 4
                rows.append(struct.unpack_from(order + "BhQd", data, at + 1))
                at += 1 + 1 + 2 + 8 + 8
    assert data[at:at + 1] == b"E"
    return rows


def test_values_match_an_independent_decoder_of_the_bytes(tmp_path):
    dtd, text, trace = tmp_path / "fixed.dtd", tmp_path / "fixed.txt", tmp_path / "fixed.mtf"
    dtd.write_text(FIXED_DTD)
    rng = np.random.default_rng(7)
    lines = [f"r {rng.integers(0, 256)} {rng.integers(-32768, 32768)} {rng.integers(0, 2**64, dtype=np.uint64)} {rng.normal():.17g}"
             for _ in range(3000)]
    text.write_text("\n".join(lines) + "\n")
    run(MTF, "convert", "--encoding", "initial", "--chunk-size", "4096", "--dtd", dtd, text, trace)
    assert trace.read_bytes()[7] == 4  # the writers' default, whose checksums decode_fixed checks
    want = decode_fixed(trace.read_bytes())
    assert len(want) == 3000
    got = metatf.read_numpy(trace, "r")
    assert got.dtype.names == ("index", "a", "b", "c", "d")
    assert [got.dtype[k] for k in range(5)] == [np.uint64, np.uint64, np.int64, np.uint64, np.float64]
    assert got["index"].tolist() == list(range(3000))
    for k, name in enumerate("abcd"):
        assert got[name].tolist() == [row[k] for row in want], name


def test_open_tells_the_dtd_record_types_fields_and_count(spc):
    _, trace = spc
    info = metatf.open(trace)
    assert info.dtd_name == "spc"
    assert list(info.records) == ["spc"]
    assert info.fields("spc") == ["asu", "lba", "size", "opcode", "timestamp", "optionalCount"]
    records_line = next(line for line in run(MTF, "info", trace).splitlines() if line.startswith("records "))
    assert info.record_count == int(records_line.split()[1])
    assert "timestamp.scale = 9;" in info.dtd_text


def test_read_numpy_gives_the_text_lines_values(spc):
    text, trace = spc
    got = metatf.read_numpy(trace, "spc", scaled="int")
    rows = [line.split(",") for line in text.read_text().splitlines()]  # no separator inside a field
    assert len(got) == len(rows) == 20000
    assert got["asu"].tolist() == [int(r[0]) for r in rows]
    assert got["lba"].tolist() == [int(r[1]) for r in rows]
    assert got["size"].tolist() == [int(r[2]) for r in rows]
    assert got["opcode"].tolist() == ["RW".index(r[3].upper()) for r in rows]
    assert got["timestamp"].tolist() == [int(Decimal(r[4]) * 10**9) for r in rows]
    assert got["optionalCount"].tolist() == [len(r) - 5 for r in rows]
    seconds = metatf.read_numpy(trace, "spc", fields=["timestamp"])
    assert seconds.dtype.names == ("index", "timestamp") and seconds.dtype["timestamp"] == np.float64
    assert np.array_equal(seconds["timestamp"], got["timestamp"] / 1e9)


def test_read_pandas_equals_read_csv_of_mtf_dump(spc):
    _, trace = spc
    frame = metatf.read_pandas(trace, "spc")
    # Every row of the dump, metadata too (its fields empty), as text; then the spc rows in the DTD's types.
    dumped = pd.read_csv(io.StringIO(run(MTF, "dump", "--meta", "--format", "csv", trace)), dtype=str, keep_default_na=False)
    dtypes = {"index": np.uint64, "record": "category", "asu": np.uint64, "lba": np.uint64, "size": np.uint64,
              "opcode": "category", "timestamp": np.float64, "optionalCount": np.uint64}
    expected = dumped[dumped["record"] == "spc"].reset_index(drop=True)[list(dtypes)].astype(dtypes)
    assert len(frame) == 20000
    assert list(frame.columns) == ["index", "record", "asu", "lba", "size", "opcode", "timestamp", "optionalCount"]
    for column in frame.columns:
        assert frame[column].dtype == expected[column].dtype, column
        if frame[column].dtype == "category":
            assert frame[column].astype(str).tolist() == expected[column].astype(str).tolist(), column
        else:
            pd.testing.assert_series_equal(frame[column], expected[column], check_exact=True)


def test_several_record_types_in_trace_order_with_nullable_columns(tmp_path):
    text, trace = tmp_path / "ptf.txt", tmp_path / "ptf.mtf"
    run(MAKE_TEXT, "ptf", 2000, text)
    run(MTF, "convert", "--dtd", SOURCE / "dtds/ptf.dtd", text, trace)
    frame = metatf.read_pandas(trace)
    assert frame["index"].is_monotonic_increasing
    assert set(frame["record"].cat.categories) == set(metatf.open(trace).records)
    per_type = {name: metatf.read_pandas(trace, name) for name in frame["record"].cat.categories}
    assert sum(len(f) for f in per_type.values()) == len(frame)
    for name, alone in per_type.items():
        rows = frame[frame["record"] == name].reset_index(drop=True)
        for column in alone.columns:
            if column == "record":
                continue
            assert rows[column].astype(object).tolist() == alone[column].astype(object).tolist(), (name, column)


def test_merge_keeps_every_value_whatever_the_mix_of_types():
    # metatf._merge joins the columns of several record types (read_pandas of
    # every type); these mixes come from DTDs whose types share a field name.
    def frame(positions, **columns):
        return {"index": np.array(positions, dtype=np.uint64), **columns}

    big = metatf._merge([frame([0, 2], x=np.array([2**63, 2], dtype=np.uint64)),
                         frame([1], x=np.array([-1], dtype=np.int64))], ["a", "b"])
    assert big["x"].tolist() == [2**63, -1, 2]  # past Int64: Python ints, none wrapped
    mixed = metatf._merge([frame([1], x=np.array([1.5])), frame([0, 2], x=np.array([3, 4], dtype=np.uint64)),
                           frame([3], y=np.array([7], dtype=np.uint64))], ["a", "b", "c"])
    assert mixed["x"].dtype == np.float64 and mixed["x"].tolist()[:3] == [3.0, 1.5, 4.0] and np.isnan(mixed["x"][3])
    assert str(mixed["y"].dtype) == "UInt64" and mixed["y"].isna().tolist() == [True, True, True, False]
    names = [f"t{k}" for k in range(300)]  # more types than an int8 code holds
    many = metatf._merge([frame([299 - k], x=np.array([k], dtype=np.uint64)) for k in range(300)], names)
    assert many["record"].tolist() == names[::-1] and many["x"].tolist() == list(range(299, -1, -1))
    # A categorical beside bytes objects and a type without the field: joined as concat joins them.
    other = metatf._merge([frame([2], x=pd.Categorical(["q"])), frame([0], x=np.array([b"ab"], dtype=object)), frame([1])],
                          ["a", "b", "c"])
    assert other["x"][[0, 2]].tolist() == [b"ab", "q"] and pd.isna(other["x"][1])


def test_names_of_enums_flags_and_parts_as_dump_shows_them():
    trace = SOURCE / "tests/fixtures/native/bitfields-lsb.bin"
    converted = Path(os.environ.get("TMPDIR", "/tmp")) / f"metatf-bitfields-{os.getpid()}.mtf"
    try:
        run(MTF, "convert", "-f", "--native", "--form", "lsb", "--dtd", SOURCE / "tests/native/bitfields.dtd", trace, converted)
        frame = metatf.read_pandas(converted)
        assert frame["modeBits"].dtype == "category"
        assert frame["modeBits"][3] == "mode:3,level:21,zone:15,0x3000"
        raw = metatf.read_numpy(converted, "compressed")
        assert raw["modeBits"][3] == 0x3FAB
        # bits="parts": a number a part; the 0x3000 that no part holds is not in them.
        parts = metatf.read_pandas(converted, bits="parts")
        assert "modeBits" not in parts.columns
        assert [parts[f"modeBits.{p}"][3] for p in ("mode", "level", "zone")] == [3, 21, 15]
        assert parts["modeBits.mode"].dtype == np.uint64
        for field in ("fileDescBits", "indexBits", "modeBits"):
            names = metatf.open(converted).records["compressed"]["fields"]
            masks = next(f["names"] for f in names if f["name"] == field)
            rebuilt = sum(parts[f"{field}.{p}"].to_numpy() << np.uint64((m & -m).bit_length() - 1) for p, m in masks.items())
            covered = np.uint64(sum(masks.values()))
            assert (rebuilt == (raw[field] & covered)).all(), field
        with pytest.raises(ValueError, match="bits is 'names' or 'parts', not 'split'"):
            metatf.read_pandas(converted, bits="split")
    finally:
        converted.unlink(missing_ok=True)


def test_mistakes_are_errors_that_say_what_is_wrong(spc, tmp_path):
    _, trace = spc
    with pytest.raises(KeyError, match="the trace's DTD 'spc' has no record type 'read'"):
        metatf.read_numpy(trace, "read")
    with pytest.raises(KeyError, match="record type 'spc' has no field 'lbn'"):
        metatf.read_numpy(trace, "spc", fields=["lbn"])
    with pytest.raises(ValueError, match="inside a repeated group"):
        metatf.read_numpy(trace, "spc", fields=["optional.optionalText"])
    cut = tmp_path / "cut.mtf"
    cut.write_bytes(trace.read_bytes()[:5000])
    with pytest.raises(ValueError, match="cut.mtf: .*mtf recover"):
        metatf.open(cut)
    with pytest.raises(ValueError, match="not a Meta-TF trace|magic"):
        metatf.open(SOURCE / "README.md")


def test_a_writer_writes_back_what_read_pandas_read(spc, tmp_path):
    _, trace = spc
    frame = metatf.read_pandas(trace, "spc")
    copy = tmp_path / "copy.mtf"
    # Records with optional fields have a repeated group, which a writer leaves empty.
    plain = frame[frame["optionalCount"] == 0]
    with metatf.Writer(SOURCE / "dtds/spc.dtd", copy) as writer:
        writer.write("spc", plain)
    back = metatf.read_pandas(copy, "spc")
    assert len(back) == len(plain) > 10000
    for column in ("asu", "lba", "size", "timestamp", "optionalCount"):
        assert back[column].tolist() == plain[column].tolist(), column
    assert back["opcode"].astype(str).tolist() == plain["opcode"].astype(str).tolist()
    run(MTF, "check", copy)  # a whole trace, its rules kept


def test_a_writer_takes_names_and_refuses_what_it_cannot_store(tmp_path):
    out = tmp_path / "bits.mtf"
    with metatf.Writer(SOURCE / "tests/native/bitfields.dtd", out) as writer:
        writer.write("compressed", {"clientId": [1, 2], "fileDescBits": ["fileDesc:5,memStrideIndex:1", "fileDesc:63,memStrideIndex:3"],
                                    "indexBits": [0, 255], "duration": [10, 20], "modeBits": [0x3FAB, 0]})
    raw = metatf.read_numpy(out, "compressed")
    assert raw["fileDescBits"].tolist() == [0x45, 0xFF] and raw["modeBits"].tolist() == [0x3FAB, 0]
    with pytest.raises(FileExistsError, match="bits.mtf: exists; pass overwrite=True to replace it"):
        metatf.Writer(SOURCE / "tests/native/bitfields.dtd", out)
    metatf.Writer(SOURCE / "tests/native/bitfields.dtd", out, overwrite=True).close()
    assert metatf.open(out).record_count == 0
    assert len(metatf.read_pandas(out)) == 0 and metatf.read_numpy(out, "compressed").dtype.names[0] == "index"
    with pytest.raises(ValueError, match="'fileDesc:64,memStrideIndex:1' names no value of field 'fileDescBits'"):
        with metatf.Writer(SOURCE / "tests/native/bitfields.dtd", tmp_path / "bad.mtf") as writer:
            writer.write("compressed", {"clientId": [1], "fileDescBits": ["fileDesc:64,memStrideIndex:1"], "indexBits": [0],
                                        "duration": [1], "modeBits": [0]})
    with pytest.raises(ValueError, match="keeps 9 fraction digits"):
        with metatf.Writer(SOURCE / "dtds/spc.dtd", tmp_path / "bad.mtf") as writer:
            writer.write("spc", {"asu": [0], "lba": [1], "size": [512], "opcode": ["R"], "timestamp": [0.1234567891234],
                                 "optionalCount": [0]})
    with pytest.raises(KeyError, match="no column for field 'size'"):
        with metatf.Writer(SOURCE / "dtds/spc.dtd", tmp_path / "bad.mtf") as writer:
            writer.write("spc", {"asu": [0], "lba": [1]})
    assert not (tmp_path / "bad.mtf").exists()


def test_the_live_heap_example_agrees_with_a_count_over_mtf_dump(tmp_path):
    import importlib.util
    trace = tmp_path / "heap.mtf"
    subprocess.run([os.environ["METATF_HEAPTRACE"], "-o", trace, "--", "sort", SOURCE / "README.md"], check=True,
                   stdout=subprocess.DEVNULL)
    spec = importlib.util.spec_from_file_location("live_heap", SOURCE / "examples/python/live_heap.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    events, _ = example.live_heap(trace)
    live, total, peak = {}, 0, 0
    for line in run(MTF, "dump", "--no-meta", trace).splitlines():
        kind, *pairs = line.split()
        v = dict(p.split("=", 1) for p in pairs)
        if kind == "alloc":
            total += int(v["size"])
            live[v["address"]] = int(v["size"])
        elif kind == "free":
            total -= live.pop(v["address"], 0)
        elif kind == "reallocNoAlloc":
            total += int(v["size"]) - live.get(v["newAddress"], 0)
            live[v["newAddress"]] = int(v["size"])
        peak = max(peak, total)
    assert (int(events["live"].max()), int(events["live"].iloc[-1])) == (peak, total)


SIGNED_DTD = """tag.width = 1;
s.width = 1;
s.type = signed;
s.enum = { minus = -1, zero = 0, two = 2 };
u.width = 2;
k.width = 4;
k.scale = 3;
b.width = 2;
n.width = 1;
a : (tag, s, u, k, n, b) { tag.value = 4; b.width = n.value; }
e : (tag, u) { tag.value = 5; u.type = signed; u.width = 8; }
"""


def test_values_a_writer_cannot_store_exactly_are_refused_and_the_rest_come_back(tmp_path):
    dtd, out = tmp_path / "signed.dtd", tmp_path / "signed.mtf"
    dtd.write_text(SIGNED_DTD)
    rows = {"s": ["minus", "zero", "7", "two"], "u": [1, 2, 3, 65535], "k": [1.5, 0.001, 2.25, 0.0],
            "n": [2, 0, 1, 2], "b": [b"a\x00", b"", b"\x00", b"zz"]}
    with metatf.Writer(dtd, out) as writer:
        writer.write("a", rows)
        writer.write("e", {"u": np.array([-5, 2**62], dtype=np.int64)})
    a = metatf.read_pandas(out, "a")
    assert a["s"].astype(str).tolist() == ["minus", "zero", "7", "two"]  # an unnamed value is its number
    assert a["k"].tolist() == [1.5, 0.001, 2.25, 0.0]
    assert list(a["b"]) == [b"a\x00", b"", b"\x00", b"zz"]  # trailing NULs kept
    # read_numpy packs records with no bytes field in C++, and assembles the others from columns: the same values.
    with_bytes, packed = metatf.read_numpy(out, "a"), metatf.read_numpy(out, "a", fields=["u", "k"])
    assert list(with_bytes["b"]) == [b"a\x00", b"", b"\x00", b"zz"]
    assert packed.dtype.names == ("index", "u", "k") and packed["k"].dtype == np.float64
    for name in ("index", "u", "k"):
        assert packed[name].tolist() == with_bytes[name].tolist(), name
    assert packed["k"].tolist() == [1.5, 0.001, 2.25, 0.0]
    both = metatf.read_pandas(out, fields=["u"])
    assert str(both["u"].dtype) == "Int64" and both["u"].tolist() == [1, 2, 3, 65535, -5, 2**62]
    bad = tmp_path / "bad.mtf"
    for column, values, message in [
        ("u", [1.5, 2, 3, 4], "cannot hold 1.5 exactly"),
        ("u", [float("nan"), 2, 3, 4], "cannot hold nan exactly"),
        ("u", [-1, 2, 3, 4], "is unsigned, but holds -1"),
        ("k", [-0.5, 1, 1, 1], "cannot hold -0.5 exactly"),
        ("k", [0.0001, 1, 1, 1], r"cannot hold 0.0001 exactly \(it keeps 3 fraction digits\)"),
        ("s", ["plus", "zero", "zero", "zero"], "'plus' names no value of field 's'"),
        ("b", [1, 2, 3, 4], "holds bytes or str, not int"),
        ("u", np.zeros((4, 2)), r"one-dimensional, not of shape \(4, 2\)"),
    ]:
        with pytest.raises(ValueError, match=message):
            with metatf.Writer(dtd, bad) as writer:
                writer.write("a", {**rows, column: values})
        assert not bad.exists()
    with pytest.raises(ValueError, match="is signed; 18446744073709551615 is beyond it"):
        with metatf.Writer(dtd, bad) as writer:
            writer.write("e", {"u": np.array([2**64 - 1], dtype=np.uint64)})


# ---- segments that decode alone, and Dask over ranges of them


@pytest.fixture(scope="module")
def spc_segments(tmp_path_factory):
    """The SPC trace of `spc` again, in segments of 8 KiB: some forty, each opened by a state block."""
    work = tmp_path_factory.mktemp("spc_segments")
    text, trace = work / "spc.txt", work / "spc.mtf"
    run(MAKE_TEXT, "spc", 20000, text)
    run(MTF, "convert", "--chunk-size", "8192", "--dtd", SOURCE / "dtds/spc.dtd", text, trace)
    return trace


def plain(frame):
    """A frame with categoricals as strings: a part of a trace has fewer categories than the whole."""
    return frame.apply(lambda c: c.astype(object) if isinstance(c.dtype, pd.CategoricalDtype) else c).reset_index(drop=True)


def test_every_segment_read_alone_equals_the_same_rows_of_a_full_read(spc_segments):
    info = metatf.open(spc_segments)
    assert info.version == 4 and len(info.segments) >= 20
    assert sum(n for _, n in info.segments) == info.record_count
    whole = metatf.read_pandas(spc_segments, "spc")
    parts = []
    for k, (first, n) in enumerate(info.segments):
        part = metatf.read_pandas(info, "spc", segments=k)
        assert part["index"].between(first, first + n - 1).all()
        rows = whole[whole["index"].between(first, first + n - 1)]
        pd.testing.assert_frame_equal(plain(part), plain(rows))
        parts.append(part)
    pd.testing.assert_frame_equal(plain(pd.concat(parts)), plain(whole))


def test_a_segment_range_reads_in_numpy_as_in_pandas(spc_segments):
    info = metatf.open(spc_segments)
    first, end = 5, 9
    got = metatf.read_numpy(spc_segments, "spc", fields=["lba", "timestamp"], segments=range(first, end))
    whole = metatf.read_numpy(spc_segments, "spc", fields=["lba", "timestamp"])
    lo, hi = info.segments[first][0], info.segments[end][0]
    want = whole[(whole["index"] >= lo) & (whole["index"] < hi)]
    assert len(got) > 0 and got.tolist() == want.tolist()
    assert metatf.read_numpy(spc_segments, "spc", segments=(first, end)).tolist() == \
        metatf.read_numpy(spc_segments, "spc", segments=range(first, end)).tolist()
    assert len(metatf.read_numpy(spc_segments, "spc", segments=(3, 3))) == 0
    assert metatf.read_numpy(spc_segments, "spc", segments=-1).tolist() == \
        metatf.read_numpy(spc_segments, "spc", segments=len(info.segments) - 1).tolist()
    with pytest.raises(IndexError, match=f"segment 1000 is not in the trace's {len(info.segments)} segments"):
        metatf.read_numpy(spc_segments, "spc", segments=1000)
    with pytest.raises(ValueError, match="step 1"):
        metatf.read_numpy(spc_segments, "spc", segments=range(0, 10, 2))


def test_chunks_is_the_older_name_of_segments(spc_segments):
    info = metatf.open(spc_segments)
    assert info.chunks == info.segments
    assert metatf.read_numpy(spc_segments, "spc", chunks=(5, 9)).tolist() == \
        metatf.read_numpy(spc_segments, "spc", segments=(5, 9)).tolist()
    pd.testing.assert_frame_equal(metatf.read_pandas(spc_segments, "spc", chunks=3), metatf.read_pandas(spc_segments, "spc", segments=3))
    with pytest.raises(TypeError, match="segments and chunks name the same selection"):
        metatf.read_pandas(spc_segments, "spc", segments=1, chunks=1)


def test_read_dask_on_a_local_cluster_of_two_workers_equals_pandas(spc_segments, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    import metatf.dask

    whole = metatf.read_pandas(spc_segments, "spc")
    frame = metatf.dask.read_dask(spc_segments, "spc", partition_records=3000)
    assert isinstance(frame, dd.DataFrame) and frame.npartitions >= 5
    assert list(frame.columns) == list(whole.columns)
    # Two copies of the trace under a glob: each is partitioned alike.
    (tmp_path / "a.mtf").write_bytes(spc_segments.read_bytes())
    (tmp_path / "b.mtf").write_bytes(spc_segments.read_bytes())
    both = metatf.dask.read_dask(tmp_path / "*.mtf", "spc", partition_records=3000)
    assert both.npartitions == 2 * frame.npartitions
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        got = frame.groupby("asu")["size"].sum().compute()
        want = whole.groupby("asu")["size"].sum()
        pd.testing.assert_series_equal(got.sort_index(), want.sort_index())
        pd.testing.assert_series_equal(both.groupby("asu")["size"].sum().compute().sort_index(), 2 * want.sort_index())
        assert frame["opcode"].value_counts().compute().sort_index().to_dict() == \
            whole["opcode"].value_counts().sort_index().to_dict()


def test_older_layouts_read_as_one_chunk_and_from_their_start(spc, tmp_path):
    text, _ = spc
    whole = None
    for version in (1, 2):
        trace = tmp_path / f"v{version}.mtf"
        run(MTF, "convert", "--container-version", version, "--chunk-size", "8192", "--dtd", SOURCE / "dtds/spc.dtd", text, trace)
        info = metatf.open(trace)
        assert info.version == version
        frame = metatf.read_pandas(info, "spc")
        whole = frame if whole is None else whole
        pd.testing.assert_frame_equal(frame, whole)
        assert len(metatf.read_pandas(info, "spc", chunks=(0, 0))) == 0
        assert metatf.read_numpy(info, "spc", chunks=(0, 1)).tolist() == \
            metatf.read_numpy(info, "spc", chunks=(0, 1), threads=1).tolist()
        if version == 1:
            assert info.chunks == [(0, info.record_count)]
        else:
            assert len(info.chunks) > 1
            with pytest.raises(ValueError, match="needs the segments before it; read it from the start"):
                metatf.read_numpy(info, "spc", chunks=1)
        pytest.importorskip("dask.dataframe")
        from metatf import dask as metatf_dask
        lazy = metatf_dask.read_dask(trace, "spc", partition_records=3000)
        assert lazy.npartitions == 1
        assert lazy["size"].sum().compute() == whole["size"].sum()


def test_threads_read_alike(spc_segments):
    one = metatf.read_pandas(spc_segments, "spc", threads=1)
    for threads in (2, 3, 7):
        pd.testing.assert_frame_equal(metatf.read_pandas(spc_segments, "spc", threads=threads), one)
    pd.testing.assert_frame_equal(plain(metatf.read_pandas(spc_segments, "spc", chunks=range(3, 11), threads=3)),
                                  plain(one[one["index"].between(*[metatf.open(spc_segments).chunks[k][0] for k in (3, 11)], inclusive="left")]))
    with pytest.raises(ValueError, match="threads must be at least 1"):
        metatf.read_pandas(spc_segments, "spc", threads=0)


def test_threads_read_several_record_types_alike(tmp_path):
    # Each thread writes its rows where its records start; the rows of the
    # other types leave gaps that are closed up at the end.
    text, trace = tmp_path / "ptf.txt", tmp_path / "ptf.mtf"
    run(MAKE_TEXT, "ptf", 20000, text)
    run(MTF, "convert", "--chunk-size", "8192", "--dtd", SOURCE / "dtds/ptf.dtd", text, trace)
    info = metatf.open(trace)
    assert len(info.chunks) > 8 and len(info.records) > 2
    one = metatf.read_pandas(trace, threads=1)
    for threads in (2, 3, 7):
        pd.testing.assert_frame_equal(metatf.read_pandas(trace, threads=threads), one)
    for name in info.records:
        alone = metatf.read_pandas(trace, name, threads=3)
        pd.testing.assert_frame_equal(alone, metatf.read_pandas(trace, name, threads=1))
        assert alone["index"].tolist() == one.loc[one["record"] == name, "index"].tolist()
        fields = [f["name"] for f in info.records[name]["fields"] if not f["repeated"] and f["type"] != "bytes"]
        assert metatf.read_numpy(trace, name, fields=fields, threads=3).tolist() == \
            metatf.read_numpy(trace, name, fields=fields, threads=1).tolist()


def test_a_last_frame_that_counts_too_few_records_is_refused_by_every_thread_count(tmp_path):
    dtd, text, trace = tmp_path / "fixed.dtd", tmp_path / "fixed.txt", tmp_path / "fixed.mtf"
    dtd.write_text(FIXED_DTD)
    text.write_text("".join(f"r {k % 256} {k} {k * 3} 0.5\n" for k in range(3000)))
    # Version 3: in version 4 the frame's checksum would refuse the edited counts first.
    run(MTF, "convert", "--encoding", "initial", "--chunk-size", "4096", "--container-version", "3", "--dtd", dtd, text, trace)
    data = bytearray(trace.read_bytes())
    # The last segment frame and the end frame's total each count one record less.
    (text_length,) = struct.unpack_from("<Q", data, 16)
    at, last = 24 + data[6] + text_length, None
    while data[at:at + 1] == b"S":
        last = at
        chunks = struct.unpack_from("<H", data, at + 2)[0]
        state = struct.unpack_from("<Q", data, at + 16)[0]
        sizes = [struct.unpack_from("<Q", data, at + 24 + 20 * k + 4)[0] for k in range(chunks)]
        at += 24 + 20 * chunks + state + sum(sizes)
    assert data[at:at + 1] == b"E" and last is not None and last != 24 + data[6] + text_length
    struct.pack_into("<Q", data, last + 8, struct.unpack_from("<Q", data, last + 8)[0] - 1)
    struct.pack_into("<Q", data, at + 8, struct.unpack_from("<Q", data, at + 8)[0] - 1)
    trace.write_bytes(bytes(data))
    for threads in (1, 2):
        with pytest.raises(ValueError, match="records, but the trace holds"):
            metatf.read_numpy(trace, "r", threads=threads)


@pytest.mark.parametrize("capture, fraction", [("pcap-le-usec.pcap", 999999), ("pcap-be-nsec.pcap", 999999999)])
def test_a_pcap_capture_reads_its_packet_fields_as_numbers(tmp_path, capture, fraction):
    trace = tmp_path / "capture.mtf"
    run(MTF, "convert", "--native", "--dtd", SOURCE / "dtds/pcap.dtd", SOURCE / "tests/fixtures/native" / capture, trace)
    packets = metatf.read_pandas(trace, "packet")
    for field in ("ts_sec", "ts_usec", "incl_len", "orig_len"):
        assert packets[field].dtype == np.uint64, field
    assert packets["ts_sec"].tolist() == [1700000000, 1700000001, 1700000002, 1700000003]
    assert packets["ts_usec"].tolist() == [fraction - k for k in range(4)]  # nanoseconds in an _nsec file
    assert packets["incl_len"].tolist() == [0, 1, 60, 96]
    assert packets["orig_len"].tolist() == [0, 1, 60, 1514]
    header = metatf.read_pandas(trace, "fileHeader")
    assert header[["snaplen", "linktype", "thiszone"]].values.tolist() == [[96, 1, -3600]]
