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
    """One row per block allocated (+size) or freed, in trace order, with its address."""
    frame = metatf.read_pandas(trace)
    has_time = "time" in frame.columns
    parts = []

    def add(rows, address, size):
        part = pd.DataFrame({"index": rows["index"].to_numpy(), "address": rows[address].astype("uint64").to_numpy(),
                             "size": size})
        part["time"] = rows["time"].astype("float64").to_numpy() if has_time else np.nan
        parts.append(part)

    kind = frame["record"]
    allocs = frame[kind == "alloc"]
    add(allocs, "address", allocs["size"].astype("float64").to_numpy())
    frees = frame[kind == "free"]
    add(frees, "address", np.nan)
    # A realloc frees its old block (but reallocAlloc, from NULL) and allocates its new one (but reallocFree, to size 0).
    for name in ("reallocNoAlloc", "reallocAllocFree", "reallocFree"):
        rows = frame[kind == name]
        add(rows, "oldAddress", np.nan)
    for name in ("reallocNoAlloc", "reallocAllocFree", "reallocAlloc"):
        rows = frame[kind == name]
        add(rows, "newAddress", rows["size"].astype("float64").to_numpy())
    # Frees before allocations at one trace position (a realloc's two halves).
    events = pd.concat(parts, ignore_index=True)
    events["freeing"] = events["size"].isna()
    return events.sort_values(["index", "freeing"], ascending=[True, False], kind="stable", ignore_index=True), has_time


def live_heap(trace):
    events, has_time = heap_events(trace)
    # A free takes back the size of the latest allocation at its address.
    last_size = events.groupby("address")["size"].ffill().fillna(0)
    delta = np.where(events["freeing"], -last_size, events["size"])
    events["live"] = np.cumsum(delta)
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
