#!/usr/bin/env python3
"""Prove every exercise's 🧪 自检 works: ⏳ when empty, ✅ with the reference, never ✅ when wrong.

A thin command: the logic is coursetools/selfcheck.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.selfcheck import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
