#!/usr/bin/env bash
# Sets up, builds with warnings as errors, and runs every test: in a normal
# build with GCC (with the benchmarks compiled and run briefly), under
# AddressSanitizer and UndefinedBehaviorSanitizer with Clang, and the
# libFuzzer harnesses briefly.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
jobs="$(nproc)"

# Line tables only (-g1): enough for the sanitizers' and libFuzzer's stack
# traces, and full debug information of the template-heavy tests would
# triple their compile time.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DMETATF_WERROR=ON -DMETATF_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build -j"$jobs"
# The benchmarks run once, on small workloads: that they work, not how fast.
METATF_BENCH_RECORDS=100000 METATF_BENCH_HEAP64_RECORDS=100000 build/bench/hatf_bench --benchmark_min_time=0.01 >/dev/null
ctest --test-dir build --output-on-failure --timeout 600 -j"$jobs"

# The two builds below run this build's make_test_traces, which only writes
# traces for their tests, rather than compiling it again.
traces_tool="$PWD/build/tests/mtf/make_test_traces"

# The large conversions cross several chunks with 200,000 records too;
# under the sanitizers a million would take minutes. Clang, with warnings as
# errors, so that the headers generated code includes compile clean under
# both compilers (GCC builds the tree above); it also builds this tree
# faster than GCC does. The libFuzzer harnesses are built in the same tree
# (METATF_FUZZ, at -O1: tests/CMakeLists.txt), sharing its mtfc and
# generated headers, and run briefly with its tests.
CXX=clang++ cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DMETATF_WERROR=ON -DMETATF_SANITIZE=ON \
      -DMETATF_FUZZ=ON -DMETATF_BIG_RECORDS=200000 -DMETATF_BUILD_PYTHON=OFF -DMETATF_TEST_TRACES_TOOL="$traces_tool" >/dev/null
cmake --build build-sanitize -j"$jobs"
# consumer_subdirectory builds all of mtfc again inside a project: the normal
# build has checked that, and under the sanitizers it would be the longest
# test of this run. consumer_installed still checks the sanitizer flags.
# mtf_lackey_ls (and mtf_pandas, which reads its trace) spend a minute under
# the sanitizers converting Valgrind's output of `ls`, text that the normal
# build converts, and fuzz_text_reader reads under them, already. mtf_cli
# runs mtf some 120 times, each compiling its DTD again: two minutes under
# the sanitizers for command lines whose code the mtf.* tests run there too.
# mtf_strace converts real strace logs with dtds/strace.dtd, which
# fuzz_text_reader and the text-shape tests of metatf_tests read there too.
ctest --test-dir build-sanitize --output-on-failure --timeout 900 -j"$jobs" -E '^(consumer_subdirectory|mtf_lackey_ls|mtf_pandas|mtf_cli|mtf_strace)$'
