#!/usr/bin/env python3
"""Check that every link in every notebook under content/ resolves; list the external ones.

A thin command: the logic is coursetools/links.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.links import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
