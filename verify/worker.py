"""Subprocess entry point: run one notebook, write its result as JSON.

Each notebook runs in its own worker process so that a crash, a hang or Ctrl-C in one of them
never takes the others (or the runner) down.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from .execute import run_notebook


def _terminate(signum, frame):  # the runner stops workers with SIGTERM: clean up like Ctrl-C
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the notebook named on the command line; the result goes to --result."""
    parser = argparse.ArgumentParser(prog="python -m verify.worker")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--kernel", default="jax-study")
    parser.add_argument("--refresh", action="store_true")
    parser.add_argument("--keep-going", action="store_true")
    parser.add_argument("--probe", default=None, help="module:function run in the live kernel after the last cell")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    os.environ["JAXCOURSE_PUBLISH"] = "1"  # kernels inherit it: jaxcourse then names cells without temp paths
    try:
        result = run_notebook(args.notebook, timeout=args.timeout, kernel_name=args.kernel, refresh=args.refresh,
                              keep_going=args.keep_going, probe=args.probe)
    except KeyboardInterrupt:
        return 130
    args.result.write_text(json.dumps(result.to_dict(), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
