#!/usr/bin/env python3
"""Check every chapter notebook against the layout contract of CONTRIBUTING.md.

A thin command: the logic is coursetools/structure.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.structure import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
