#!/usr/bin/env python3
"""The seed's name for `tools/build_index.py 入门` (regenerate content/入门/00_总目录's chapter table)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.index_page import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(part="入门"))
