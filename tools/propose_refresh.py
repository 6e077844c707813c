#!/usr/bin/env python3
"""Refresh every notebook, verify it again, and write a patch plus a pull-request body for review.

A thin command: the logic is verify/proposal.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.proposal import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
