#!/usr/bin/env python3
"""Measures the tracers on real programs: wall time traced / untraced
(median of several interleaved runs) and bytes per event of each tool's output, raw and
under zstd -19. With --heaptrace: metatf-heaptrace, LTTng-UST's libc wrapper
and heaptrack on allocation-heavy programs. With --iotrace: metatf-iotrace on
tar and cp -r of a copy of a directory tree (/usr/share/doc by default).

Usage: bench/tracers.py [--heaptrace BUILD/tools/heaptrace/metatf-heaptrace]
                        [--iotrace BUILD/tools/iotrace/metatf-iotrace [--tree DIR]]
                        --mtf BUILD/tools/mtf/mtf [--runs N] [--out DIR]

Needs lttng-tools, liblttng-ust1, babeltrace2, heaptrack, cppcheck, zstd
(Debian packages); a tool that is missing is skipped with a note. Prints
Markdown tables (docs/tracers.md holds them).
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
    def __init__(self, launcher, mtf, options=("--time",), trace_name="heap.mtf"):
        self.launcher, self.mtf, self.options, self.trace_name = launcher, mtf, list(options), trace_name
        self.name = "metatf-heaptrace " + " ".join(options)

    def trace(self, argv, env, out):
        path = out / self.trace_name
        if path.exists():
            path.unlink()
        self.path = path
        return run([self.launcher] + self.options + ["-o", str(path), "--"] + argv, env)

    def sizes(self):
        """Events, bytes and bytes under zstd -19 of the last trace."""
        stats = json.loads(subprocess.run([self.mtf, "stats", "--json", str(self.path)], stdout=subprocess.PIPE, check=True).stdout)
        events = sum(r["count"] for r in stats["records"] if r["record"] not in ("comment", "section", "metadata"))
        return events, tree_bytes(self.path), zstd_bytes(self.path)


class Lttng:
    name = "LTTng-UST libc wrapper (CTF)"

    def __init__(self):
        # Where no init system started the session daemon (a container), start it.
        if subprocess.run(["lttng", "list"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            subprocess.run(["lttng-sessiond", "--daemonize"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

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


def table_head():
    print("| program | tool | time traced / untraced (median) | events | bytes/event raw | bytes/event zstd -19 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")


def io_programs(tree, out):
    """tar and cp -r of a copy of `tree` in `out`; each run starts from a clean slate."""
    source = out / "tree"
    if not source.exists():
        shutil.copytree(tree, source, symlinks=True)

    def clean():
        (out / "out.tar").unlink(missing_ok=True)
        shutil.rmtree(out / "copy", ignore_errors=True)

    return {
        f"tar cf out.tar ({tree})": ["tar", "cf", str(out / "out.tar"), "-C", str(out), "tree"],
        f"cp -r ({tree})": ["cp", "-r", str(source), str(out / "copy")],
    }, clean


def measure_io(args, out):
    """metatf-iotrace's overhead on file-heavy programs."""
    tool = MetaTF(args.iotrace, args.mtf, options=(), trace_name="io.mtf")
    programs, clean = io_programs(Path(args.tree), out)
    print()
    table_head()
    for program, argv in programs.items():
        untraced, traced = [], []
        for _ in range(args.runs):  # alternately, as for the heap tracers
            clean()
            untraced.append(run(argv))
            clean()
            traced.append(tool.trace(argv, {}, out))
        base = statistics.median(untraced)
        events, raw, packed = tool.sizes()
        print(f"| {program} | metatf-iotrace | {statistics.median(traced) / base:.2f} | {events} | {raw / events:.2f} | {packed / events:.2f} |")
        print(f"{program}: untraced median {base:.3f} s", file=sys.stderr)
    clean()


def measure_heap(args, out):
    """The heap tracers on allocation-heavy programs."""
    # As it writes by default (pool references, zstd segments on a thread), with --fast and with --no-compress.
    tools = [MetaTF(args.heaptrace, args.mtf), MetaTF(args.heaptrace, args.mtf, ("--time", "--fast"), "heap-fast.mtf"),
             MetaTF(args.heaptrace, args.mtf, ("--time", "--no-compress"), "heap-raw.mtf")]
    tools.append(Lttng()) if shutil.which("lttng") else print("note: lttng not found, skipped", file=sys.stderr)
    tools.append(Heaptrack()) if shutil.which("heaptrack") else print("note: heaptrack not found, skipped", file=sys.stderr)

    table_head()
    for program, (argv, env) in PROGRAMS.items():
        if not shutil.which(argv[0]):
            print(f"note: {argv[0]} not found, {program} skipped", file=sys.stderr)
            continue
        # Rounds of one run each, untraced and under each tool: a machine
        # that slows down or speeds up over minutes affects them all alike.
        times = [[] for _ in range(len(tools) + 1)]
        for _ in range(args.runs):
            times[0].append(run(argv, env))
            for tool, tool_times in zip(tools, times[1:]):
                tool_times.append(tool.trace(argv, env, out))
        base = statistics.median(times[0])
        mtf_events = None
        for tool, tool_times in zip(tools, times[1:]):
            ratio = statistics.median(tool_times) / base
            events, raw, packed = tool.sizes()
            if isinstance(tool, MetaTF):
                mtf_events = events
            per = events or mtf_events  # heaptrack: per event metatf-heaptrace saw in the same program
            shown = events if events is not None else f"({mtf_events})"
            print(f"| {program} | {tool.name} | {ratio:.2f} | {shown} | {raw / per:.2f} | {packed / per:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heaptrace")
    parser.add_argument("--iotrace")
    parser.add_argument("--tree", default="/usr/share/doc", help="the tree --iotrace copies, tars and copies again")
    parser.add_argument("--mtf", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=None, help="where traces go (default: a temporary directory)")
    args = parser.parse_args()
    if not args.heaptrace and not args.iotrace:
        parser.error("give --heaptrace, --iotrace or both")
    out = Path(args.out or tempfile.mkdtemp(prefix="metatf-tracers-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.heaptrace:
        measure_heap(args, out)
    if args.iotrace:
        measure_io(args, out)
    print(f"\nuntraced medians and traces in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
