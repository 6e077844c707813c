#!/usr/bin/env python3
"""Give Chinese prose standard Chinese punctuation (GB/T 15834): full-width ，：；？！（）。 next to Chinese.

A thin command: the logic is coursetools/zh_punct.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.zh_punct import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
