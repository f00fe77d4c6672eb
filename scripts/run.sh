#!/usr/bin/env bash
# Sets up, builds mtfc and mtf, and runs mtfc. With no arguments it compiles the shipped
# HATF 1.0 DTD and prints its resolved model; any arguments go to mtfc.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target mtfc mtf >/dev/null

if [ $# -eq 0 ]; then
  set -- --emit=ir dtds/hatf10.dtd
fi
exec build/compiler/mtfc "$@"
