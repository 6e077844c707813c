#!/usr/bin/env python3
"""Maintainer entry point: verify (or --refresh) course notebooks. See `--help`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
