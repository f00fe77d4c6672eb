#!/usr/bin/env python3
"""Measures the heap tracers on real programs: wall time traced / untraced
(median of several runs) and bytes per event of each tool's output, raw and
under zstd -19, for metatf-heaptrace, LTTng-UST's libc wrapper and heaptrack.

Usage: bench/tracers.py --heaptrace BUILD/tools/heaptrace/metatf-heaptrace
                        --mtf BUILD/tools/mtf/mtf [--runs N] [--out DIR]

Needs lttng-tools, liblttng-ust1, babeltrace2, heaptrack, cppcheck, zstd
(Debian packages); a tool that is missing is skipped with a note. Prints a
Markdown table (docs/tracers.md holds one).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSON_ROUND_TRIP = (
    "import json\n"
    "doc = [{'id': i, 'name': 'item%d' % i, 'tags': ['a', 'b', str(i)], 'nested': {'x': i * 0.5}} for i in range(20000)]\n"
    "for _ in range(10):\n"
    "    doc = json.loads(json.dumps(doc))\n"
)
# PYTHONMALLOC=malloc: every Python object from malloc, as an allocator study would want, not
# only the large ones pymalloc hands on (8 thousand events instead of millions).
PROGRAMS = {
    "cppcheck runtime compiler": (["cppcheck", "-q", "--enable=all", str(ROOT / "runtime"), str(ROOT / "compiler")], {}),
    "python3 JSON": (["/usr/bin/python3", "-c", JSON_ROUND_TRIP], {}),
    "python3 JSON, PYTHONMALLOC=malloc": (["/usr/bin/python3", "-c", JSON_ROUND_TRIP], {"PYTHONMALLOC": "malloc"}),
}
LTTNG_WRAPPER = "liblttng-ust-libc-wrapper.so"


def run(argv, env=None):
    """Wall seconds of one run; the program's output is discarded."""
    start = time.perf_counter()
    subprocess.run(argv, env=dict(os.environ, **(env or {})), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def zstd_bytes(path):
    out = subprocess.run(["zstd", "-19", "-q", "-c", str(path)], stdout=subprocess.PIPE, check=True).stdout
    return len(out)


def tree_bytes(path):
    p = Path(path)
    return p.stat().st_size if p.is_file() else sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def tar_zstd_bytes(directory):
    tar = subprocess.run(["tar", "cf", "-", "-C", str(directory), "."], stdout=subprocess.PIPE, check=True).stdout
    return len(subprocess.run(["zstd", "-19", "-q", "-c"], input=tar, stdout=subprocess.PIPE, check=True).stdout)


class MetaTF:
    name = "metatf-heaptrace --time"

    def __init__(self, launcher, mtf):
        self.launcher, self.mtf = launcher, mtf

    def trace(self, argv, env, out):
        path = out / "heap.mtf"
        if path.exists():
            path.unlink()
        self.path = path
        return run([self.launcher, "--time", "-o", str(path), "--"] + argv, env)

    def sizes(self):
        """Events, bytes and bytes under zstd -19 of the last trace."""
        stats = json.loads(subprocess.run([self.mtf, "stats", "--json", str(self.path)], stdout=subprocess.PIPE, check=True).stdout)
        events = sum(r["count"] for r in stats["records"] if r["record"] not in ("comment", "section", "metadata"))
        return events, tree_bytes(self.path), zstd_bytes(self.path)


class Lttng:
    name = "LTTng-UST libc wrapper (CTF)"

    def trace(self, argv, env, out):
        directory = out / "lttng"
        shutil.rmtree(directory, ignore_errors=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": True}
        subprocess.run(["lttng", "create", "metatf-bench", f"--output={directory}"], **quiet)
        try:
            subprocess.run(["lttng", "enable-event", "--userspace", "lttng_ust_libc:*"], **quiet)
            subprocess.run(["lttng", "start"], **quiet)
            seconds = run(argv, dict(env, LD_PRELOAD=LTTNG_WRAPPER))
            subprocess.run(["lttng", "stop"], **quiet)
        finally:
            subprocess.run(["lttng", "destroy", "metatf-bench"], **quiet)
        self.directory = directory
        return seconds

    def sizes(self):
        directory = self.directory
        counts = subprocess.run(["babeltrace2", str(directory), "-c", "sink.utils.counter"], stdout=subprocess.PIPE, check=True).stdout
        last = {}
        for line in counts.decode().splitlines():  # "   13921757 Event messages"; the last block is the total
            number, _, what = line.strip().partition(" ")
            if number.isdigit():
                last[what] = int(number)
        discarded = last.get("Discarded event messages", last.get("Discarded event message", 0))
        if discarded:
            print(f"note: LTTng reported discarded events ({discarded} times)", file=sys.stderr)
        return last.get("Event messages", 0), tree_bytes(directory), tar_zstd_bytes(directory)


class Heaptrack:
    name = "heaptrack (zstd text, with stacks)"

    def trace(self, argv, env, out):
        prefix = out / "heaptrack.out"
        for old in out.glob("heaptrack.out*"):
            old.unlink()
        self.out = out
        return run(["heaptrack", "-o", str(prefix)] + argv, env)

    def sizes(self):
        size = sum(f.stat().st_size for f in self.out.glob("heaptrack.out*"))
        return None, size, size  # already zstd-compressed; no event count of its own


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heaptrace", required=True)
    parser.add_argument("--mtf", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=None, help="where traces go (default: a temporary directory)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="metatf-tracers-"))
    out.mkdir(parents=True, exist_ok=True)

    tools = [MetaTF(args.heaptrace, args.mtf)]
    tools.append(Lttng()) if shutil.which("lttng") else print("note: lttng not found, skipped", file=sys.stderr)
    tools.append(Heaptrack()) if shutil.which("heaptrack") else print("note: heaptrack not found, skipped", file=sys.stderr)

    print("| program | tool | time traced / untraced (median) | events | bytes/event raw | bytes/event zstd -19 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for program, (argv, env) in PROGRAMS.items():
        if not shutil.which(argv[0]):
            print(f"note: {argv[0]} not found, {program} skipped", file=sys.stderr)
            continue
        base = statistics.median(run(argv, env) for _ in range(args.runs))
        mtf_events = None
        for tool in tools:
            ratio = statistics.median(tool.trace(argv, env, out) for _ in range(args.runs)) / base
            events, raw, packed = tool.sizes()
            if isinstance(tool, MetaTF):
                mtf_events = events
            per = events or mtf_events  # heaptrack: per event metatf-heaptrace saw in the same program
            shown = events if events is not None else f"({mtf_events})"
            print(f"| {program} | {tool.name} | {ratio:.2f} | {shown} | {raw / per:.2f} | {packed / per:.2f} |")
    print(f"\nuntraced medians and traces in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
