#!/usr/bin/env python3
"""metatf-replay end to end (tests/replay/CMakeLists.txt).

1. A real program (cppcheck, or sort where it is not installed) traced by
   metatf-heaptrace, replayed under every
   allocator installed: each result names its own library, the peak RSS
   differ, and events and peak_live_bytes equal a count over `mtf dump`.
2. A 4-thread hand-off (replay_handoff) traced with --threads: replayed on as
   many threads under each allocator, with waits for blocks another thread
   made, and no call on a block before it existed.
3. A trace whose records do not fit (replay_misfits): counted and named with
   the indices `mtf dump` gives them; --strict stops at the first.
4. The seed corpus of the trace fuzzer (fuzz_hatf10_reader: every record
   type and metadata, both classes and byte orders, every container
   version), and damaged copies of it and of the traces above (cut, bytes
   flipped): a clean error or a replay, never a crash.
5. --series: rows every N events per allocator, the live bytes equal to an
   independent count, an existing file refused without --force; and
   examples/python/plot_replay_series.py draws it.
6. Bounded memory: a trace of 2,000,000 calls with one block live replays
   in a few MB, where --in-memory holds all of its 48 MB plan.
"""
import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import sys

ALLOCATORS = {"glibc": None, "jemalloc": "libjemalloc.so.2", "tcmalloc": "libtcmalloc_minimal.so.4", "mimalloc": "libmimalloc.so.2"}
LIBRARY_PREFIX = {"glibc": "libc.so", "jemalloc": "libjemalloc", "tcmalloc": "libtcmalloc", "mimalloc": "libmimalloc"}


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run(*command, expect=0):
    p = subprocess.run(command, capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(command)} exited {p.returncode}, not {expect}:\n{p.stdout}\n{p.stderr}")
    return p


def installed(allocator):
    """Whether the loader finds the allocator's library (ldconfig's cache)."""
    library = ALLOCATORS[allocator]
    return library is None or library in subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout


def live_count(mtf, trace, every=0):
    """Calls and peak live bytes over `mtf dump`, by the rules of docs/replay.md:
    a realloc record and the alloc and free that follow it on its thread are
    one call; the new block is made before the old one goes; a free ends the
    oldest live block at its address, or else waits, and ends the oldest block
    there (last changed by another thread) when an alloc at that address finds
    it still live, or at the end; a free that never finds one is left out.
    With `every`, also the live bytes after each `every` calls."""
    out = run(mtf, "dump", "--format", "jsonl", trace).stdout
    live, peak, calls, follow, series = 0, 0, 0, {}, []
    blocks = collections.defaultdict(collections.deque)  # address -> [size, thread of its last call], oldest first
    waiting = collections.defaultdict(list)  # address -> threads of frees waiting for a block

    def pair_oldest(address):
        nonlocal live
        for i, t in enumerate(waiting[address][:64]):
            if t != blocks[address][0][1]:
                del waiting[address][i]
                live -= blocks[address].popleft()[0]
                return True
        return False

    def allocate(thread, address, size):
        nonlocal live, peak
        if blocks[address]:
            pair_oldest(address)
        blocks[address].append([size, thread])
        live += size
        peak = max(peak, live)

    def release(thread, address):
        nonlocal live
        if blocks[address]:
            live -= blocks[address].popleft()[0]
        else:
            waiting[address].append(thread)

    for line in out.splitlines():
        if every and calls and calls % every == 0 and len(series) < calls // every:
            series.append(live)
        r = json.loads(line)
        kind, f = r["record"], r["fields"]
        thread = f.get("thread", 0)
        pending = follow.pop(thread, None)
        if kind == "alloc":
            if pending and pending.get("alloc") == f["address"]:
                if pending.get("free"):
                    follow[thread] = {"free": pending["free"]}
                continue
            calls += 1
            allocate(thread, f["address"], f["size"])
        elif kind == "free":
            if (pending and pending.get("free") == f["address"]) or f["address"] == 0:
                continue
            calls += 1
            release(thread, f["address"])
        elif kind == "reallocNoAlloc":
            if blocks[f["oldAddress"]]:
                calls += 1
                oldest = blocks[f["oldAddress"]][0]
                live += f["size"] - oldest[0]
                oldest[:] = [f["size"], thread]
                peak = max(peak, live)
        elif kind in ("reallocAllocFree", "reallocAlloc"):
            calls += 1
            follow[thread] = {"alloc": f["newAddress"], "free": f["oldAddress"] if kind == "reallocAllocFree" else 0}
            old = kind == "reallocAllocFree" and bool(blocks[f["oldAddress"]])
            allocate(thread, f["newAddress"], f["size"])
            if old:
                live -= blocks[f["oldAddress"]].popleft()[0]
        elif kind == "reallocFree":
            calls += 1
            follow[thread] = {"free": f["oldAddress"]}
            release(thread, f["oldAddress"])
    if every and calls and calls % every == 0 and len(series) < calls // every:
        series.append(live)
    for address in list(waiting):
        while blocks[address] and pair_oldest(address):
            pass
    calls -= sum(len(q) for q in waiting.values())
    return (calls, peak, series) if every else (calls, peak)


def replay(args, trace, allocators, *extra, expect=0):
    p = run(args.replay, "--json", "--allocator", ",".join(allocators), *extra, trace, expect=expect)
    return json.loads(p.stdout) if expect == 0 else p


def check_results(report, allocators, what):
    results = report["results"]
    if [r["allocator"] for r in results] != allocators:
        fail(f"{what}: results for {[r['allocator'] for r in results]}, not {allocators}")
    for r in results:
        if not r["library"].startswith(LIBRARY_PREFIX[r["allocator"]]):
            fail(f"{what}: {r['allocator']} ran with {r['library']}")
        if r["failed_calls"] != 0 or r["early_calls"] != 0 or r["peak_rss_bytes"] <= 0 or r["seconds"] <= 0:
            fail(f"{what}: implausible figures under {r['allocator']}: {r}")
        if sum(r["calls"].values()) != report["events"]:
            fail(f"{what}: {sum(r['calls'].values())} calls made under {r['allocator']}, the trace has {report['events']}")


def real_program(args, allocators):
    """The program of issue 43's test, cppcheck on one of our sources, where it is installed; else sort."""
    if shutil.which("cppcheck"):
        name = "cppcheck"
        # A short source: some 210,000 calls (reader.cpp, docs/replay.md's example, makes ten times as
        # many), which live_count() recounts in Python in seconds.
        command = ["cppcheck", "--quiet", os.path.join(args.source, "runtime/src/core/descriptor.cpp")]
    else:
        print("note: cppcheck is not installed; sort is traced instead")
        name = "sort"
        text = os.path.join(args.work, "input.txt")
        with open(text, "w") as f:
            rng = random.Random(7)
            for _ in range(40000):
                f.write("".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 60))) + "\n")
        command = ["/usr/bin/sort", text]
    trace = os.path.join(args.work, name + ".mtf")
    run(args.tracer, "-o", trace, "--", *command)
    report = replay(args, trace, allocators)
    check_results(report, allocators, name)
    calls, peak = live_count(args.mtf, trace)
    if (report["events"], report["peak_live_bytes"]) != (calls, peak):
        fail(f"{name}: replay counts {report['events']} calls and {report['peak_live_bytes']} peak live bytes, mtf dump {calls} and {peak}")
    if report["threads"] != 1 or report["misfits"]["count"] != 0:
        fail(f"{name}: {report['threads']} threads, {report['misfits']['count']} misfits")
    rss = {r["peak_rss_bytes"] for r in report["results"]}
    if len(allocators) > 1 and len(rss) == 1:
        fail(f"{name}: every allocator reached the same peak RSS {rss}")
    return [trace]


def handoff(args, allocators):
    trace = os.path.join(args.work, "handoff.mtf")
    run(args.tracer, "--threads", "-o", trace, "--", args.handoff, "5000")
    for allocator in allocators:
        report = replay(args, trace, [allocator])
        check_results(report, [allocator], "hand-off")
        r = report["results"][0]
        if report["threads"] < 4 or r["waits"] <= 0:
            fail(f"hand-off under {allocator}: {report['threads']} threads, {r['waits']} waits")
    # Blocks made by two threads and freed by two others: slots are reused across threads
    # (without that, one a block made: about 11,000 here).
    made = r["calls"]["malloc"] + r["calls"]["realloc"]
    if report["slots"] * 4 > made * 3:
        fail(f"hand-off: {report['slots']} slots for {made} blocks made")
    calls, peak = live_count(args.mtf, trace)
    if (report["events"], report["peak_live_bytes"]) != (calls, peak):
        fail(f"hand-off: replay counts {report['events']} calls and {report['peak_live_bytes']} bytes, mtf dump {calls} and {peak}")
    return [trace]


def misfits(args):
    trace = os.path.join(args.work, "misfits.mtf")
    run(args.misfits, trace)
    index = {}
    for line in run(args.mtf, "dump", "--format", "jsonl", trace).stdout.splitlines():
        r = json.loads(line)
        index[(r["record"], r["fields"].get("address", r["fields"].get("oldAddress")), r["fields"].get("size"))] = r["index"]
    want = [
        (index[("free", 0x9000, None)], "free of 0x9000, which is never live (left out)"),
        (index[("alloc", 0x1000, 70)], "alloc of 0x1000, which is still live (a free of it frees the older block)"),
        (index[("reallocNoAlloc", 0x7000, 10)], "realloc of 0x7000, which is not live (left out)"),
    ]
    report = replay(args, trace, ["glibc"])
    got = [(m["record"], m["what"]) for m in report["misfits"]["first"]]
    if got != want or report["misfits"]["count"] != 3 or report["peak_live_bytes"] != 220 or report["events"] != 5:
        fail(f"misfits: {report}")
    p = replay(args, trace, ["glibc"], "--strict", expect=1)
    message = f"metatf-replay: {trace}: record {want[0][0]}: {want[0][1]}\n"
    if p.stderr != message or p.stdout:
        fail(f"--strict said {p.stderr!r}, not {message!r}")
    p = run(args.replay, "--allocator", "glibc", trace)
    if f"record {want[1][0]}: {want[1][1]}" not in p.stdout:
        fail(f"the table does not name the misfits:\n{p.stdout}")
    # --series counts the calls replayed: the free left out is not one, and no row follows it.
    csv_path = os.path.join(args.work, "misfits.csv")
    run(args.replay, "--series", csv_path, "--every", "1", "-f", trace)
    rows = [tuple(map(int, r.split(",")[1:3])) for r in open(csv_path).read().splitlines()[1:]]
    if rows != [(1, 100), (2, 150), (3, 220), (4, 120), (5, 70)]:
        fail(f"--series of the misfits: {rows}")


def series(args, trace, allocators, every):
    csv_path = os.path.join(args.work, "series.csv")
    if os.path.exists(csv_path):
        os.remove(csv_path)
    report = replay(args, trace, allocators, "--series", csv_path, "--every", str(every))
    rows = open(csv_path).read().splitlines()
    if rows[0] != "allocator,event,live_bytes,rss_bytes":
        fail(f"--series header {rows[0]!r}")
    _, _, live = live_count(args.mtf, trace, every)
    want = len(live)
    if want != report["events"] // every or want < 10:
        fail(f"--series: {want} samples counted over mtf dump, {report['events']} events")
    for allocator in allocators:
        mine = [r.split(",") for r in rows[1:] if r.startswith(allocator + ",")]
        if [int(r[1]) for r in mine] != [every * (k + 1) for k in range(want)]:
            fail(f"--series: the events of {allocator}'s rows: {[r[1] for r in mine][:5]}...")
        if [int(r[2]) for r in mine] != live:
            fail(f"--series: {allocator}'s live bytes differ from the count over mtf dump")
        if max(int(r[3]) for r in mine) <= 0:
            fail(f"--series: {allocator}'s RSS is never above the start")
    p = run(args.replay, "--series", csv_path, trace, expect=1)
    if p.stderr != f"metatf-replay: {csv_path}: exists; use -f (--force) to replace it\n":
        fail(f"--series over an existing file said {p.stderr!r}")
    run(args.replay, "--series", csv_path, "--force", "--every", str(every * 2), trace)
    if len(open(csv_path).read().splitlines()) != 1 + report["events"] // (every * 2):
        fail("--series --force did not replace the file")
    replay(args, trace, allocators, "--series", csv_path, "--force", "--every", str(every))
    svg = os.path.join(args.work, "series.svg")
    p = run(sys.executable, args.plot, csv_path, svg)
    drawn = open(svg).read()
    if "matplotlib" not in p.stdout and drawn.count("<polyline") != len(allocators) + 1:
        fail(f"the plot has {drawn.count('<polyline')} lines for {len(allocators)} allocators and the live bytes")


def peak_memory_kib(command):
    """The largest RSS of `command` and its children, through a Python of its own."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(run(sys.executable, "-c", probe, *command).stdout)


def bounded(args):
    trace = os.path.join(args.work, "churn.mtf")
    run(args.misfits, trace, "churn", "1000000")
    streamed = peak_memory_kib([args.replay, trace])
    whole = peak_memory_kib([args.replay, "--in-memory", trace])
    if replay(args, trace, ["glibc"])["slots"] != 1:
        fail("one block live at a time, but more than one slot")
    if streamed > 24 * 1024 or whole < 48 * 1000:
        fail(f"2,000,000 calls with one block live: {streamed} KiB streamed, {whole} KiB with --in-memory")
    os.remove(trace)


def fuzz_seeds(args):
    """The fuzzer's seeds, each replayed (they are valid traces, with misfits)."""
    seeds = os.path.join(args.work, "seeds")
    run(args.seeds, seeds)
    paths = sorted(os.path.join(seeds, name) for name in os.listdir(seeds))
    if len(paths) < 6:
        fail(f"the fuzzer's seed corpus has {len(paths)} traces")
    for path in paths:
        report = replay(args, path, ["glibc"])
        if report["events"] <= 0:
            fail(f"the seed {path} replayed no calls")
    return paths


def damaged(args, traces):
    rng = random.Random(41)
    copy = os.path.join(args.work, "damaged.mtf")
    for trace in traces:
        data = open(trace, "rb").read()
        for i in range(60 if os.path.getsize(trace) > 4096 else 30):
            if i % 3 == 0:
                bad = data[: rng.randrange(len(data))]
            else:
                b = bytearray(data)
                for _ in range(rng.randint(1, 4)):
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
                bad = bytes(b)
            with open(copy, "wb") as f:
                f.write(bad)
            p = run(args.replay, "--json", copy, expect=None)
            crashed = "killed by signal" in p.stderr or "failed (exit status" in p.stderr  # the replaying child
            if crashed or p.returncode not in (0, 1) or (p.returncode == 1 and not p.stderr.startswith("metatf-replay: ")):
                fail(f"a damaged copy of {trace} (case {i}) ended with status {p.returncode}: {p.stderr}")


def main():
    parser = argparse.ArgumentParser()
    for name in ("replay", "tracer", "mtf", "handoff", "misfits", "plot", "source", "seeds", "work"):
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    allocators = [a for a in ALLOCATORS if installed(a)]
    if len(allocators) < len(ALLOCATORS):
        print(f"note: not installed, not replayed: {sorted(set(ALLOCATORS) - set(allocators))}")
    traces = real_program(args, allocators) + handoff(args, allocators)
    misfits(args)
    series(args, traces[1], allocators, 1000)
    bounded(args)
    damaged(args, traces + fuzz_seeds(args))
    print(f"replayed under {', '.join(allocators)}")


if __name__ == "__main__":
    main()
