"""Runs pytest on the given arguments, or exits 77 (CTest's skip) with a
message when pytest or a package the tests need is not installed."""
import sys


def main():
    try:
        import pytest
        import numpy  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e.name} is not installed for {sys.executable}")
        return 77
    return pytest.main(sys.argv[1:])


# The guard matters: Dask's worker processes start by importing this module
# (multiprocessing's spawn), and must not run the tests again.
if __name__ == "__main__":
    sys.exit(main())
