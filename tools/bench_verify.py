#!/usr/bin/env python3
"""Benchmark the harness against sequential `jupyter nbconvert --execute`.

A thin command: the logic is verify/bench.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
