#!/usr/bin/env python3
"""Regenerate a part's 00_总目录 chapter table: tools/build_index.py 入门|进阶 [--check].

A thin command: the logic is coursetools/index_page.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.index_page import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
