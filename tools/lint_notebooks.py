#!/usr/bin/env python3
"""Lint what a published notebook shows: clean, ordered outputs that leak nothing of this machine.

A thin command: the logic is coursetools/lint.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.lint import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
