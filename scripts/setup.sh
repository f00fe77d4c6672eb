#!/usr/bin/env bash
# Installs the Debian packages Meta-TF builds with, if any is missing.
# clang and libclang-rt-14-dev are for the sanitizer build and the fuzzer (libFuzzer), tcpdump and
# iputils-ping for a real loopback capture read as pcap, libbenchmark-dev
# for the benchmarks, valgrind and python3-pandas for the Lackey tests (a real
# program's memory trace, and its CSV loaded into pandas), xz-utils for
# docs/tutorial.md's size comparison, the allocators metatf-replay
# compares (libjemalloc2, libtcmalloc-minimal4, libmimalloc2.0), and
# cppcheck, the real program its test traces.
set -euo pipefail

packages=(g++ make cmake tao-pegtl-dev nlohmann-json3-dev libzstd-dev doctest-dev libbenchmark-dev clang libclang-rt-14-dev valgrind python3-pandas
          python3-dev pybind11-dev python3-numpy python3-pytest python3-dask python3-distributed python3-tqdm
          tcpdump iputils-ping xz-utils strace libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 cppcheck)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
