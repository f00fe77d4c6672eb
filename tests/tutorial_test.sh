#!/usr/bin/env bash
# Runs every ```sh block of docs/tutorial.md, in order, in an empty
# directory, as a reader would: any failing command fails the test.
# Usage: tutorial_test.sh TUTORIAL WORK_DIR MTF MTFC PYTHON PYTHONPATH
# PYTHON is the interpreter the package at PYTHONPATH was built for.
set -euo pipefail
tutorial=$1 work=$2 mtf=$3 mtfc=$4 python=$5 pythonpath=$6
rm -rf "$work"
mkdir -p "$work/bin"
ln -s "$mtf" "$mtfc" "$work/bin/"
ln -s "$python" "$work/bin/python3"
# The blocks, joined: the lines between a line '```sh' and the next '```'.
awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0; next } on' "$tutorial" > "$work/steps.sh"
cd "$work"
PATH="$work/bin:$PATH" PYTHONPATH="$pythonpath" bash -euo pipefail steps.sh
