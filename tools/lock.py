#!/usr/bin/env python3
"""Write constraints.txt (every package of the course environment pinned), or check it with --check.

A thin command: the logic is verify/lock.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.lock import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
