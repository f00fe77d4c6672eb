#!/usr/bin/env bash
# Compares two builds of hatf_bench on this machine: runs them alternately
# (ROUNDS rounds of 3 interleaved repetitions each, default 2) and prints, per
# generated benchmark, the fastest time of each and its ratio to the same
# binary's hand-written codec. Alternating keeps a drift of the machine from
# favouring one build.
#
# Usage: bench/ab_compare.sh BEFORE_HATF_BENCH AFTER_HATF_BENCH [FILTER] [ROUNDS]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_HATF_BENCH AFTER_HATF_BENCH [FILTER] [ROUNDS]" >&2; exit 2; }
before=$1 after=$2 filter=${3:-.} rounds=${4:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export METATF_BENCH_DIR=${METATF_BENCH_DIR:-/dev/shm} METATF_BENCH_HEAP64_RECORDS=${METATF_BENCH_HEAP64_RECORDS:-1000000}
for i in $(seq "$rounds"); do
  for side in before after; do
    "${!side}" --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
      --benchmark_out="$out/$side-$i.json" --benchmark_out_format=json >/dev/null 2>&1
  done
done
python3 - "$out" <<'PY'
import glob, json, sys

def fastest(side):
    t = {}
    for path in glob.glob(f"{sys.argv[1]}/{side}-*.json"):
        for r in json.load(open(path))["benchmarks"]:
            if r.get("run_type") == "aggregate":
                continue
            name = r["run_name"].removesuffix("/real_time")
            ms = r["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[r["time_unit"]]
            t[name] = min(t.get(name, ms), ms)
    return t

before, after = fastest("before"), fastest("after")
for name in sorted(after):
    op, enc, kind = name.split("/")
    if kind in ("hand-written", "io-only") or name not in before:
        continue
    hand = f"{op}/{enc}/hand-written"
    print(f"{name:38s} before {before[name]:7.2f} ms ({before[name] / before[hand]:.2f}x)"
          f"   after {after[name]:7.2f} ms ({after[name] / after[hand]:.2f}x)")
PY
