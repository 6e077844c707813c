#!/usr/bin/env python3
"""Regenerate content/进阶/00_总目录.ipynb's chapter table from the chapters (--check: staleness only)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_page import config_for, main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(config_for("进阶")))
