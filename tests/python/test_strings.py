"""Strings as values (issue 40, part 2): a text field's bytes come to pandas
as str, categorical when they repeat, with no column for a length the text
derives; metatf.Writer takes them back, and the text converts back to the
same bytes. On MSR Cambridge lines from bench/msr_lines.py.

Run by CTest with PYTHONPATH at the built package and METATF_MTF and
METATF_SOURCE_DIR in the environment.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metatf

MTF = os.environ["METATF_MTF"]
SOURCE = Path(os.environ["METATF_SOURCE_DIR"])
MSR = SOURCE / "dtds/msr.dtd"


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True).stdout


@pytest.fixture(scope="module")
def msr(tmp_path_factory):
    """20,000 MSR lines and their trace."""
    work = tmp_path_factory.mktemp("msr")
    text, trace = work / "msr.csv", work / "msr.mtf"
    text.write_bytes(run(sys.executable, SOURCE / "bench/msr_lines.py", 20000, 7))
    run(MTF, "convert", "--exact", "--dtd", MSR, text, trace)
    return text, trace


def test_msr_strings_are_str_categoricals_and_the_length_is_no_column(msr):
    text, trace = msr
    frame = metatf.read_pandas(trace)
    assert list(frame.columns) == ["index", "record", "timestamp", "hostname", "disk", "type", "offset", "size", "responseTime"]
    assert frame["hostname"].dtype == "category" and frame["type"].dtype == "category"
    assert all(isinstance(h, str) for h in frame["hostname"].cat.categories)
    assert set(frame["type"].cat.categories) == {"Read", "Write"}
    for field in ("timestamp", "disk", "offset", "size", "responseTime"):
        assert frame[field].dtype == np.uint64, field
    # The same values as pandas' own CSV reader gives.
    csv = pd.read_csv(text, names=["timestamp", "hostname", "disk", "type", "offset", "size", "responseTime"])
    for field in csv.columns:
        assert frame[field].astype(object).tolist() == csv[field].astype(object).tolist(), field
    # Named, the length is a column after all.
    lengths = metatf.read_pandas(trace, fields=["hostnameLength", "hostname"])
    assert lengths["hostnameLength"].tolist() == [len(h) for h in csv["hostname"]]


def test_msr_hosts_are_interned_and_read_alike_in_every_segment(msr, tmp_path):
    text, trace = msr
    small = tmp_path / "small.mtf"
    run(MTF, "recode", "--chunk-size", "4K", trace, small)  # some 80 segments, each naming its hosts afresh
    hosts = pd.read_csv(text, names=["timestamp", "hostname", "disk", "type", "offset", "size", "responseTime"])["hostname"].tolist()
    for path in (trace, small):
        assert metatf.read_pandas(path)["hostname"].astype(object).tolist() == hosts
    # A host costs its one-byte code; its name is stored once a segment.
    rows = {line.split()[1]: line.split() for line in run(MTF, "stats", small).decode().splitlines() if line.startswith("request ")}
    assert int(rows["hostnameLength"][-1]) < 20000 * 1.1
    assert int(rows["hostname"][-1]) < 20000 * 0.5


def test_msr_split_streams_read_as_the_plain_trace(msr, tmp_path):
    """Fields in sections of their own (sectionStride) come from their
    sections in the column reader's runs, across chunks of 4 KiB."""
    text, trace = msr
    split = tmp_path / "split.mtf"
    run(MTF, "recode", "--compress", "--chunk-size", "4K", "--split", "request.timestamp,request.size+request.disk", trace, split)
    assert "split_2" in run(MTF, "info", split).decode()
    pd.testing.assert_frame_equal(metatf.read_pandas(split).drop(columns="index"),
                                  metatf.read_pandas(trace).drop(columns="index"))


def test_msr_frame_written_back_converts_to_the_same_text(msr, tmp_path):
    text, trace = msr
    frame = metatf.read_pandas(trace)
    copy, back = tmp_path / "copy.mtf", tmp_path / "back.csv"
    with metatf.Writer(MSR, copy) as writer:
        writer.write(frame)  # no hostnameLength column: derived from the str
    run(MTF, "convert", copy, back)
    assert back.read_bytes() == text.read_bytes()


def test_read_numpy_keeps_a_string_as_bytes(msr):
    _, trace = msr
    rows = metatf.read_numpy(trace, "request", fields=["hostname"])
    assert rows["hostname"].dtype == object and all(isinstance(h, bytes) for h in rows["hostname"][:100])


def test_a_string_that_is_not_utf8_comes_back_byte_for_byte(tmp_path):
    text, trace, copy, back = (tmp_path / n for n in ("latin1.csv", "latin1.mtf", "copy.mtf", "back.csv"))
    lines = b"1,h\xe9,1,Read,0,512,9\n2,h\xe9,1,Write,512,512,9\n3,ok,0,Read,0,512,9\n"
    text.write_bytes(lines)
    run(MTF, "convert", "--exact", "--dtd", MSR, text, trace)
    frame = metatf.read_pandas(trace)
    assert frame["hostname"].tolist() == ["h\udce9", "h\udce9", "ok"]  # surrogateescape
    with metatf.Writer(MSR, copy) as writer:
        writer.write(frame)
    run(MTF, "convert", copy, back)
    assert back.read_bytes() == lines


def test_strings_that_rarely_repeat_are_an_object_column_of_str(tmp_path):
    text, trace = tmp_path / "hosts.csv", tmp_path / "hosts.mtf"
    text.write_text("".join(f"{k},host{k},0,Read,0,512,9\n" for k in range(50)))
    run(MTF, "convert", "--exact", "--dtd", MSR, text, trace)
    hosts = metatf.read_pandas(trace)["hostname"]
    assert hosts.dtype == object and hosts.tolist() == [f"host{k}" for k in range(50)]
