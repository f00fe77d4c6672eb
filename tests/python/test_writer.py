"""metatf.Writer taking back what read_pandas gives, DTDs that are not
UTF-8, and the memory budget of reads. Run by CTest with the environment of
test_metatf.py."""

import os
import subprocess
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


def fields_of(frame):
    """A frame's records without their positions (metadata records take positions), categoricals as objects."""
    out = frame.drop(columns="index")
    return out.apply(lambda c: c.astype(object) if isinstance(c.dtype, pd.CategoricalDtype) else c)


@pytest.fixture(scope="module")
def heap(tmp_path_factory):
    """A HATF trace of a real program, with threads and times."""
    trace = tmp_path_factory.mktemp("heap") / "heap.mtf"
    subprocess.run([os.environ["METATF_HEAPTRACE"], "--threads", "--time", "-o", trace, "--", "sort", SOURCE / "README.md"],
                   check=True, stdout=subprocess.DEVNULL)
    return trace


@pytest.fixture(scope="module")
def spc(tmp_path_factory):
    work = tmp_path_factory.mktemp("spc")
    text, trace = work / "spc.txt", work / "spc.mtf"
    run(MAKE_TEXT, "spc", 5000, text)
    run(MTF, "convert", "--dtd", SOURCE / "dtds/spc.dtd", text, trace)
    return trace


def test_a_heap_trace_read_by_read_pandas_writes_back_in_one_call(heap, tmp_path):
    frame = metatf.read_pandas(heap)
    assert frame["record"].nunique() >= 2 and len(frame) > 100
    copy = tmp_path / "copy.mtf"
    with metatf.Writer("hatf10", copy) as writer:  # the shipped DTD, by its name
        writer.write(frame)
    back = metatf.read_pandas(copy)
    pd.testing.assert_frame_equal(fields_of(back), fields_of(frame))
    run(MTF, "check", copy)
    # The same records in the same order, as mtf prints them.
    assert run(MTF, "dump", "--no-meta", copy) == run(MTF, "dump", "--no-meta", heap)


def test_an_spc_frame_with_str_opcodes_writes(spc, tmp_path):
    frame = metatf.read_pandas(spc, "spc")
    plain = frame[frame["optionalCount"] == 0].drop(columns=["optionalCount"])
    assert 0 < len(plain) < len(frame)
    plain = plain.assign(opcode=plain["opcode"].astype(str).to_numpy(dtype=object))
    assert plain["opcode"].dtype == object and set(plain["opcode"]) == {"R", "W"}
    for how in ("record column", "record="):
        copy = tmp_path / f"{how}.mtf"
        with metatf.Writer(SOURCE / "dtds/spc.dtd", copy) as writer:
            writer.write(plain) if how == "record column" else writer.write(plain.drop(columns="record"), record="spc")
        back = metatf.read_pandas(copy, "spc")
        assert back["opcode"].astype(str).tolist() == plain["opcode"].tolist()
        for column in ("asu", "lba", "size", "timestamp"):
            assert back[column].tolist() == plain[column].tolist(), column
        assert (back["optionalCount"] == 0).all()  # a repeated group's count, left out: the group is empty


def test_a_repeated_group_with_elements_is_refused_with_its_row(spc, tmp_path):
    frame = metatf.read_pandas(spc, "spc")
    row = int(np.argmax(frame["optionalCount"].to_numpy() > 0))
    with pytest.raises(ValueError, match=rf"row {row}: field 'optionalCount' of record type 'spc' is \d+, but it counts a "
                                         "repeated group, whose fields have no column: a Writer writes such groups empty"):
        with metatf.Writer("spc", tmp_path / "bad.mtf") as writer:
            writer.write(frame)
    assert not (tmp_path / "bad.mtf").exists()


def test_defaults_and_lengths_may_be_left_out_and_bytes_take_str(tmp_path):
    out = tmp_path / "few.mtf"
    frame = pd.DataFrame({"record": ["createThread", "alloc", "alloc", "free"],
                          "thread": [7, 7, 7, 7],
                          "size": [None, 16, 24, None],
                          "address": [None, 4096, 8192, 4096],
                          "attributes.attributesData": ["", "é", b"a\x00", ""]})
    with metatf.Writer("hatf10", out) as writer:
        writer.write(frame)
    back = metatf.read_pandas(out)
    assert back["record"].tolist() == ["createThread", "alloc", "alloc", "free"]
    assert back["thread"].tolist() == [7, 7, 7, 7] and back["time"].tolist() == [0, 0, 0, 0] and back["heap"].tolist()[1:] == [0] * 3
    assert back["attributes.attributesData"].tolist() == [b"", "é".encode(), b"a\x00", b""]
    assert back["attributes.attributesLength"].tolist() == [0, 2, 2, 0]  # derived from the bytes
    assert back["size"].tolist()[1:3] == [16, 24]
    # Given with the bytes, a length must be theirs; a field with no default must have a column.
    with pytest.raises(ValueError, match="row 1: field 'attributes.attributesLength' of record type 'alloc' is 3, "
                                         "but 'attributes.attributesData' holds 2 bytes"):
        with metatf.Writer("hatf10", tmp_path / "bad.mtf") as writer:
            writer.write(frame.assign(**{"attributes.attributesLength": [0, 3, 2, 0]}))
    with pytest.raises(KeyError, match="no column for field 'address' of record type 'free'"):
        with metatf.Writer("hatf10", tmp_path / "bad.mtf") as writer:
            writer.write(pd.DataFrame({"record": ["free"], "time": [1]}))
    with pytest.raises(ValueError, match="holds bytes or str, not int"):
        with metatf.Writer("hatf10", tmp_path / "bad.mtf") as writer:
            writer.write({"size": [1], "address": [2], "attributes.attributesData": np.array([5], dtype=object)}, record="alloc")
    assert not (tmp_path / "bad.mtf").exists()


def test_mixed_frames_name_their_record_types(tmp_path):
    bad = tmp_path / "bad.mtf"
    with pytest.raises(ValueError, match="takes a 'record' column"):
        with metatf.Writer("hatf10", bad) as writer:
            writer.write(pd.DataFrame({"address": [1]}))
    with pytest.raises(KeyError, match="the DTD has no record type 'malloc'"):
        with metatf.Writer("hatf10", bad) as writer:
            writer.write(pd.DataFrame({"record": ["free", "malloc"], "address": [1, 2], "size": [0, 3]}))
    with pytest.raises(ValueError, match="row 1 has no record type"):
        with metatf.Writer("hatf10", bad) as writer:
            writer.write(pd.DataFrame({"record": ["free", None], "address": [1, 2]}))
    with pytest.raises(ValueError, match=r"write\(record='alloc'\) was given rows of record type 'free'"):
        with metatf.Writer("hatf10", bad) as writer:
            writer.write(pd.DataFrame({"record": ["alloc", "free"], "address": [1, 2], "size": [3, 4]}), record="alloc")
    with pytest.raises(ValueError, match=r"field 'size' of record type 'alloc' has a missing value \(row 2\)"):
        with metatf.Writer("hatf10", bad) as writer:
            writer.write(pd.DataFrame({"record": ["alloc", "free", "alloc"], "address": [1, 2, 3],
                                       "size": pd.array([3, None, None], dtype="UInt64")}))
    assert not bad.exists()


def test_a_dtd_name_finds_the_shipped_dtd_and_a_missing_one_says_where_it_looked(tmp_path):
    with metatf.Writer("spc", tmp_path / "a.mtf") as writer:
        writer.write({"asu": [1], "lba": [2], "size": [512], "opcode": ["W"], "timestamp": [0.5]}, record="spc")
    assert metatf.open(tmp_path / "a.mtf").dtd_name == "spc"
    with pytest.raises(FileNotFoundError, match="no-such-format: no such file, and no shipped DTD of that name in .*dtds"):
        metatf.Writer("no-such-format", tmp_path / "b.mtf")


def test_the_encoding_options_of_mtf_recode(spc, tmp_path):
    frame = metatf.read_pandas(spc, "spc")
    frame = frame[frame["optionalCount"] == 0]
    plain = tmp_path / "plain.mtf"
    with metatf.Writer("spc", plain) as writer:
        writer.write(frame)
    # Written from the frame with options, the trace is the one mtf recode writes of the same records with those options.
    written, recoded = tmp_path / "written.mtf", tmp_path / "recoded.mtf"
    for options, flags in [({"compress": True}, ["--compress", "--references", "predict", "--split", "none"]),
                           ({"compress": 3, "chunk_size": "8K", "split": "spc.lba", "container_version": 3},
                            ["--compress=3", "--chunk-size", "8K", "--split", "spc.lba", "--container-version", "3"]),
                           ({"encoding": "initial", "container_version": 2}, ["--encoding", "initial", "--container-version", "2"]),
                           ({"live": False, "chunk_size": 16384}, ["--no-live", "--chunk-size", "16K"])]:
        with metatf.Writer("spc", written, overwrite=True, **options) as writer:
            writer.write(frame)
        run(MTF, "recode", "-f", *flags, plain, recoded)
        assert written.read_bytes() == recoded.read_bytes(), options
        assert written.read_bytes() != plain.read_bytes(), options
        pd.testing.assert_frame_equal(fields_of(metatf.read_pandas(written)), fields_of(metatf.read_pandas(plain)))
    for options, message in [({"chunk_size": 100}, "chunk_size takes a size from 4K to 64M"),
                             ({"compress": 23}, "compress takes a zstd level from 1 to 22"),
                             ({"encoding": "keep"}, "encoding is 'auto' or 'initial'"),
                             ({"split": ["spc.nope"]}, "nope"),
                             ({"container_version": 1, "compress": 3}, "version-1 trace cannot hold compressed chunks")]:
        with pytest.raises(ValueError, match=message):
            metatf.Writer("spc", tmp_path / "bad.mtf", **options)
        assert not (tmp_path / "bad.mtf").exists()


# ---- a DTD that is not UTF-8

LATIN1_DTD = b"""// caf\xe9: a comment in Latin-1
tag.width = 1;
text { separator = " "; }
a.width = 1;
r : (tag, a) { tag.value = 4; tag.mnemonic = "r"; }
"""


def test_a_dtd_that_is_not_utf8_opens_with_its_bytes_kept(tmp_path):
    dtd, text, trace = tmp_path / "latin.dtd", tmp_path / "latin.txt", tmp_path / "latin.mtf"
    dtd.write_bytes(LATIN1_DTD)
    text.write_text("r 1\nr 2\nr 3\n")
    run(MTF, "convert", "--container-version", 3, "--dtd", dtd, text, trace)
    run(MTF, "check", trace)
    info = metatf.open(trace)
    assert info.dtd_bytes == LATIN1_DTD
    assert info.dtd_text.startswith("// caf\ufffd: a comment")
    assert metatf.read_pandas(trace)["a"].tolist() == [1, 2, 3]
    # An error in such a DTD says where it is, the byte that is not UTF-8 shown as \xe9.
    data = trace.read_bytes()
    at = data.index(b"a.width = 1;")
    trace.write_bytes(data[:at] + b"a.width = \xe9;" + data[at + len(b"a.width = 1;"):])
    with pytest.raises(ValueError, match=r"latin.mtf: the trace's embedded DTD has errors: latin.dtd:4:\d+: .*"):
        metatf.open(trace)


# ---- the memory budget of reads


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A small trace of 2,000,000 records of one byte (a tag), which zstd shrinks a thousandfold."""
    work = tmp_path_factory.mktemp("bomb")
    dtd, trace = work / "one.dtd", work / "one.mtf"
    dtd.write_text("tag.width = 1;\nr : (tag) { tag.value = 4; }\n")
    with metatf.Writer(dtd, trace, compress=19) as writer:
        writer.write(pd.DataFrame({"record": pd.Categorical.from_codes(np.zeros(2_000_000, dtype=np.int8), ["r"])}))
    assert trace.stat().st_size < 2_000_000 / 500
    return trace


def test_a_read_past_its_memory_budget_is_refused_and_says_how_to_raise_it(bomb):
    message = (r"one.mtf: the read would take about 16.0 MB \(2000000 records of up to 8 bytes each\), past its memory budget "
               r"of 1000000 bytes; pass max_memory=N \(bytes\) to raise it")
    for read in (metatf.read_pandas, lambda *a, **k: metatf.read_numpy(*a, "r", **k)):
        with pytest.raises(MemoryError, match=message):
            read(bomb, max_memory=1_000_000)
        assert len(read(bomb, max_memory=20_000_000)) == 2_000_000
        assert len(read(bomb, max_memory=float("inf"))) == 2_000_000
    with pytest.raises(ValueError, match="max_memory is a number of bytes above 0"):
        metatf.read_pandas(bomb, max_memory=0)


def test_the_default_budget_is_proportional_to_the_file(bomb, monkeypatch):
    assert len(metatf.read_numpy(bomb, "r")) == 2_000_000  # 16 MB: under the default budget
    monkeypatch.setattr(metatf, "MEMORY_FLOOR", 0)
    budget = metatf.MEMORY_PER_FILE_BYTE * bomb.stat().st_size
    with pytest.raises(MemoryError, match=f"past its memory budget of {budget} bytes"):
        metatf.read_numpy(bomb, "r")
