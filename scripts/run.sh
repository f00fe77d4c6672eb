#!/usr/bin/env bash
# Sets up, builds mtfc and mtf, installs them into install/ in the repository,
# and runs mtfc. With no arguments it compiles the shipped HATF 1.0 DTD and
# prints its resolved model; any arguments go to mtfc. Standard output is
# mtfc's alone; the line that says where the tools are goes to standard error.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target mtfc mtf >/dev/null
prefix="$PWD/install"
cmake --install build --prefix "$prefix" >/dev/null
echo "run.sh: the tools are in $prefix/bin; export PATH=\"$prefix/bin:\$PATH\"" >&2

if [ $# -eq 0 ]; then
  set -- --emit=ir dtds/hatf10.dtd
fi
exec "$prefix/bin/mtfc" "$@"
