#!/usr/bin/env bash
# Sets up, builds everything `cmake --install` installs (mtfc, mtf, the
# runtime, the tracers, the Python package where its dependencies are
# present, the shipped DTDs), installs it into install/ in the repository,
# and runs mtfc. With no arguments it compiles the shipped HATF 1.0 DTD and
# prints its resolved model; any arguments go to mtfc. Standard output is
# mtfc's alone; the lines that say where the tools are go to standard error.
# METATF_WERROR=ON makes warnings errors (CI sets it, so that this build and
# scripts/test.sh's share their objects).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DMETATF_WERROR="${METATF_WERROR:-OFF}" >/dev/null
cmake --build build -j"$(nproc)" --target installables >/dev/null
prefix="$PWD/install"
cmake --install build --prefix "$prefix" >/dev/null
echo "run.sh: the tools are in $prefix/bin; export PATH=\"$prefix/bin:\$PATH\"" >&2
python_dir="$(find "$prefix/lib" -path '*/metatf/__init__.py' -printf '%h\n' -quit 2>/dev/null || true)"
if [ -n "$python_dir" ]; then
  echo "run.sh: the Python package is in $(dirname "$python_dir"); export PYTHONPATH=\"$(dirname "$python_dir"):\$PYTHONPATH\" (for /usr/bin/python3)" >&2
fi

if [ $# -eq 0 ]; then
  set -- --emit=ir dtds/hatf10.dtd
fi
exec "$prefix/bin/mtfc" "$@"
