#!/usr/bin/env python3
"""Generate content/入门/关键词索引.ipynb: concept or API → chapter and section links.

A thin command: the logic is coursetools/keyword_index.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.keyword_index import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
