#!/usr/bin/env python3
"""Generate the course's term list from tools/glossary.toml: the reader's page content/入门/术语表.ipynb

A thin command: the logic is coursetools/glossary.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.glossary import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
