"""Runs pytest on the given arguments, or exits 77 (CTest's skip) with a
message when pytest or a package the tests need is not installed."""
import sys

try:
    import pytest  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
except ImportError as e:
    print(f"skipped: {e.name} is not installed for {sys.executable}")
    sys.exit(77)

sys.exit(pytest.main(sys.argv[1:]))
