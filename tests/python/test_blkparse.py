"""dtds/blkparse.dtd (issue 40, part 4): blkparse's default lines, whose
record type is the action after a shared head (mnemonicAfter), converted
both ways byte for byte, and read into pandas with numbers as numbers and
strings as str. On lines from bench/blkparse_lines.py, which prints them
with blkparse's own printf formats.

Run by CTest with PYTHONPATH at the built package and METATF_MTF and
METATF_SOURCE_DIR in the environment.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import metatf

MTF = os.environ["METATF_MTF"]
SOURCE = Path(os.environ["METATF_SOURCE_DIR"])
BLKPARSE = SOURCE / "dtds/blkparse.dtd"


def run(*args, check=True):
    return subprocess.run([str(a) for a in args], check=check, capture_output=True)


@pytest.fixture(scope="module")
def blk(tmp_path_factory):
    work = tmp_path_factory.mktemp("blkparse")
    text, trace = work / "blk.txt", work / "blk.mtf"
    text.write_bytes(run(sys.executable, SOURCE / "bench/blkparse_lines.py", 20000, 3).stdout)
    run(MTF, "convert", "--exact", "--dtd", BLKPARSE, text, trace)
    return text, trace


def test_every_action_converts_back_byte_for_byte(blk, tmp_path):
    text, trace = blk
    back = tmp_path / "back.txt"
    run(MTF, "convert", trace, back)
    assert back.read_bytes() == text.read_bytes()
    recoded, again = tmp_path / "small.mtf", tmp_path / "again.txt"
    run(MTF, "recode", "--compress", trace, recoded)
    run(MTF, "convert", recoded, again)
    assert again.read_bytes() == text.read_bytes()


def test_pandas_gets_numbers_and_strings(blk):
    text, trace = blk
    frame = metatf.read_pandas(trace)
    lines = text.read_text().splitlines()
    assert len(frame) == len(lines)
    actions = {"queue": "Q", "get": "G", "insert": "I", "issue": "D", "complete": "C", "plug": "P", "unplugTimer": "UT", "remap": "A",
               "split": "X", "message": "m"}
    for row, line in zip(frame.itertuples(), lines):
        head = line[:50].split()  # "%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s ": 50 characters
        assert f"{row.major},{row.minor}" == head[0] and row.cpu == int(head[1]) and row.sequence == int(head[2])
        assert row.pid == int(head[4])
        assert actions.get(row.record, head[5]) == head[5]
        assert head[6] == row.rwbs
    assert frame["time"].dtype == np.float64 and frame["sector"].dtype == "UInt64"
    assert "commandLength" not in frame.columns and "rwbsLength" not in frame.columns
    assert set(frame["command"].dropna().cat.categories) <= {"kjournald", "kworker/0:1H", "jbd2/sda1-8", "postgres", "dd", "fio", "swapper/0"}
    assert frame.loc[frame["record"] == "complete", "error"].isin([0, -5]).all()


def test_a_line_with_an_unknown_action_is_an_error_at_its_column(tmp_path):
    text, trace = tmp_path / "bad.txt", tmp_path / "bad.mtf"
    text.write_text("  8,0    3        1     0.000000000   697  Z   W 223490 + 8 [kjournald]\n")
    result = run(MTF, "convert", "--dtd", BLKPARSE, text, trace, check=False)
    assert result.returncode == 1
    assert result.stderr.decode().endswith("line 1, column 44: unknown record 'Z'\n")
    assert not trace.exists()
