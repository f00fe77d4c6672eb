"""The live heap over time of a program, from a HATF trace that
metatf-heaptrace recorded: bytes allocated and not yet freed after each
event, its peak, and (with matplotlib installed) a plot.

    metatf-heaptrace --time -o heap.mtf -- PROGRAM ARGS...
    python3 examples/python/live_heap.py heap.mtf [live-heap.png]
"""
import sys

import numpy as np
import pandas as pd

import metatf


def heap_events(trace):
    """One row per change of a block, in trace order: its address, and its
    new size (0 when it is freed). hatf10.dtd's convention, which
    metatf-heaptrace follows: a realloc that allocates or frees is followed
    by the alloc and free records of what it did, so only a realloc that
    resizes in place (reallocNoAlloc) changes a block by itself."""
    frame = metatf.read_pandas(trace, fields=["size", "address", "newAddress", "time"])
    has_time = "time" in frame.columns
    kind = frame["record"]
    parts = []
    for name, address, frees in (("alloc", "address", False), ("free", "address", True), ("reallocNoAlloc", "newAddress", False)):
        rows = frame[kind == name]
        parts.append(pd.DataFrame({
            "index": rows["index"].to_numpy(),
            "address": rows[address].astype("uint64").to_numpy(),
            "size": np.zeros(len(rows)) if frees else rows["size"].astype("float64").to_numpy(),
            "time": rows["time"].astype("float64").to_numpy() if has_time else np.full(len(rows), np.nan),
        }))
    events = pd.concat(parts, ignore_index=True).sort_values("index", kind="stable", ignore_index=True)
    return events, has_time


def live_heap(trace):
    events, has_time = heap_events(trace)
    # Each change replaces the size the block at its address had (0 before its first allocation).
    previous = events.groupby("address")["size"].shift().fillna(0)
    events["live"] = np.cumsum(events["size"] - previous)
    return events, has_time


def main():
    events, has_time = live_heap(sys.argv[1])
    peak = events["live"].idxmax()
    print(f"{len(events):,} heap events; peak live heap {int(events['live'][peak]):,} bytes at event {peak:,}; "
          f"{int(events['live'].iloc[-1]):,} bytes live at the end")
    if len(sys.argv) > 2:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            sys.exit("matplotlib is not installed: no plot (Debian: python3-matplotlib)")
        x = (events["time"] - events["time"].min()) / 1e9 if has_time else events.index
        plt.figure(figsize=(9, 4))
        plt.step(x, events["live"] / 2**20, where="post")
        plt.xlabel("seconds" if has_time else "heap event")
        plt.ylabel("live heap (MiB)")
        plt.title(sys.argv[1])
        plt.tight_layout()
        plt.savefig(sys.argv[2])
        print(f"plotted to {sys.argv[2]}")


if __name__ == "__main__":
    main()
