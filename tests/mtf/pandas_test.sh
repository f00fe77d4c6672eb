#!/usr/bin/env bash
# Loads the CSV of the Lackey trace mtf_lackey_ls made into pandas, with
# Debian's Python (the one its python3-pandas package serves). Exits 77
# (skipped) without it.
# Usage: pandas_test.sh MTF WORK_DIR_OF_THE_LACKEY_TEST
set -euo pipefail
mtf=$1 work=$2
python=/usr/bin/python3
[ -x "$python" ] || { echo "no $python: skipped"; exit 77; }
exec "$python" "$(dirname "$0")/pandas_check.py" "$mtf" "$work/ls.mtf" "$work/ls.lackey"
