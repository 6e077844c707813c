#!/usr/bin/env python3
"""Run the harness on another JAX release in a side environment and print the behaviour changes.

A thin command: the logic is verify/upgrade.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.upgrade import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
