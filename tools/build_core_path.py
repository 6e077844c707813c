#!/usr/bin/env python3
"""Generate content/入门/核心学习路径.ipynb: course sections plus every 🟢 必读 supplement, in order.

A thin command: the logic is coursetools/core_path.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.core_path import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
