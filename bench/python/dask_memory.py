"""Peak memory of Dask workers reading an SPC trace and one 10 times longer
(docs/performance.md, "Python"): metatf.dask.read_dask(...).groupby("asu")
["size"].sum() on a LocalCluster of two worker processes, a fresh cluster
per trace, with the same partition size. Prints each worker's peak resident
memory (getrusage's ru_maxrss) after the computation.

Usage: PYTHONPATH=build/python python3 bench/python/dask_memory.py BUILD_DIR RECORDS WORK_DIR [PARTITION_RECORDS]
(writes WORK_DIR/spc-RECORDS.mtf and WORK_DIR/spc-10xRECORDS.mtf once)
"""
import resource
import subprocess
import sys
import time
from pathlib import Path


def trace_of(build, source, records, path):
    if not path.exists():
        text = path.with_suffix(".txt")
        subprocess.run([build / "tests/big/make_text", "spc", str(records), text], check=True)
        subprocess.run([build / "tools/mtf/mtf", "convert", "--dtd", source / "dtds/spc.dtd", text, path], check=True)
        text.unlink()
    return path


def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main():
    from distributed import Client, LocalCluster

    import metatf
    import metatf.dask

    build, records, work = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    partition = int(sys.argv[4]) if len(sys.argv) > 4 else 2_000_000
    work.mkdir(parents=True, exist_ok=True)
    source = Path(__file__).resolve().parents[2]
    for n in (records, 10 * records):
        trace = trace_of(build, source, n, work / f"spc-{n}.mtf")
        frame = metatf.dask.read_dask(trace, "spc", partition_records=partition)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            before = client.run(peak_kib)
            start = time.perf_counter()
            sums = frame.groupby("asu")["size"].sum().compute()
            seconds = time.perf_counter() - start
            after = client.run(peak_kib)
        peaks = ", ".join(f"{after[w] / 1024:.0f} MiB (from {before[w] / 1024:.0f})" for w in sorted(after))
        print(f"{n:>11,} records, {trace.stat().st_size:>13,} bytes, {frame.npartitions:>3} partitions of ~{partition:,} records: "
              f"{seconds:6.2f} s, {len(sums)} groups; worker peaks {peaks}")


if __name__ == "__main__":
    main()
