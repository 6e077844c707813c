#!/usr/bin/env python3
"""Build and serve the reading site: tools/site.py build|serve|preload|bench (see --help).

A thin command: the logic is sitebuild/cli.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitebuild.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
