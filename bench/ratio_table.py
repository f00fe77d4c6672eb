#!/usr/bin/env python3
"""Prints the generated / hand-written ratios of a hatf_bench JSON output
(--benchmark_out=FILE --benchmark_out_format=json) as a Markdown table.

Usage: bench/ratio_table.py FILE [--statistic min|median|mean]

Each benchmark's time is the chosen aggregate (default: min, the fastest
repetition); a file without aggregates uses the fastest run. 'write' compares
write/<enc>/generated with write/<enc>/hand-written, 'read (next())' and
'read (visit())' compare read/<enc>/generated and read/<enc>/generated-visit
with read/<enc>/hand-written. 'beyond I/O' subtracts the io-only time first.
"""
import argparse
import json
import sys

ENCODINGS = ["paper", "compact", "heap64", "heap64-compact"]
ROWS = [("write", "write", "generated"), ("read (`next()`)", "read", "generated"), ("read (`visit()`)", "read", "generated-visit")]


def times(path, statistic):
    """Seconds per iteration of each benchmark, by name without /real_time."""
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    chosen, fastest = {}, {}
    for r in runs:
        name = r["run_name"].removesuffix("/real_time")
        t = r["real_time"] * scale[r["time_unit"]]
        if r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == statistic:
                chosen[name] = t
        elif name not in fastest or t < fastest[name]:
            fastest[name] = t
    return chosen or fastest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--statistic", default="min", choices=["min", "median", "mean"])
    args = parser.parse_args()
    t = times(args.file, args.statistic)
    if not t:
        sys.exit(f"{args.file}: no benchmark runs (or none with the '{args.statistic}' aggregate)")
    print("| operation | encoding | generated ms | hand-written ms | ratio | beyond I/O |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for label, op, generated in ROWS:
        for enc in ENCODINGS:
            g, h, io = (t.get(f"{op}/{enc}/{x}") for x in (generated, "hand-written", "io-only"))
            if g is None or h is None:
                continue
            beyond = f"{(g - io) / (h - io):.2f}" if io is not None and h > io else "-"
            print(f"| {label} | {enc} | {g * 1e3:.1f} | {h * 1e3:.1f} | **{g / h:.2f}** | {beyond} |")


if __name__ == "__main__":
    main()
