"""dtds/strace.dtd (issue 40, part 4) in pandas: a real `strace -f -tt -T`
run, converted with --exact, reads with numbers as numbers, names and
arguments as str, and no length columns; each row agrees with its line.
Skipped without strace, or where the machine does not let it trace.

Run by CTest with PYTHONPATH at the built package and METATF_MTF and
METATF_SOURCE_DIR in the environment.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import metatf

MTF = os.environ["METATF_MTF"]
STRACE_DTD = Path(os.environ["METATF_SOURCE_DIR"]) / "dtds/strace.dtd"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not shutil.which("strace"):
        pytest.skip("strace is not installed")
    work = tmp_path_factory.mktemp("strace")
    text, trace = work / "run.txt", work / "run.mtf"
    traced = subprocess.run(["strace", "-f", "-tt", "-T", "-o", str(text), "sh", "-c",
                             "ls /usr > /dev/null; cat /nonexistent 2> /dev/null; (exit 3); true"], capture_output=True)
    if traced.returncode != 0 or not text.exists():
        pytest.skip("strace cannot trace here: " + traced.stderr.decode(errors="replace"))
    subprocess.run([MTF, "convert", "--exact", "--dtd", str(STRACE_DTD), str(text), str(trace)], check=True)
    return text.read_text().splitlines(), trace


CALL = re.compile(r"^(\d+) +(\d\d):(\d\d):(\d\d\.\d+) (\w+)\((.*)\) +=( -?\d+)(?: (E\w+) \((.*)\))? <(\d+\.\d+)>$")


def test_columns_are_numbers_and_strings_without_lengths(run):
    lines, trace = run
    frame = metatf.read_pandas(trace)
    assert len(frame) == len(lines)
    assert not [c for c in frame.columns if c.endswith("Length")]
    calls = metatf.read_pandas(trace, record="call")
    assert str(calls["ret"].dtype) == "int64" and str(calls["pid"].dtype) == "uint64"
    assert calls["time"].dtype.kind == "f" and calls["duration"].dtype.kind == "f"
    assert isinstance(calls["name"].iloc[0], str) and isinstance(calls["args"].iloc[0], str)


def test_rows_agree_with_their_lines(run):
    lines, trace = run
    frame = metatf.read_pandas(trace)
    checked = 0
    for row, line in zip(frame.itertuples(), lines):
        m = CALL.match(line)
        if not m or row.record not in ("call", "callError"):
            continue
        pid, h, mi, sec, name, args, ret, errno, message, duration = m.groups()
        assert row.pid == int(pid) and row.name == name and row.args == args and row.ret == int(ret)
        assert row.time == pytest.approx(int(h) * 3600 + int(mi) * 60 + float(sec), abs=1e-6)
        assert row.duration == pytest.approx(float(duration), abs=1e-7)
        if row.record == "callError":
            assert row.errno == errno and row.message == message
        checked += 1
    assert checked > 50
    exited = metatf.read_pandas(trace, record="exited")
    assert 3 in set(exited["status"])
    assert "ENOENT" in set(metatf.read_pandas(trace, record="callError")["errno"])
