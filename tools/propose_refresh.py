#!/usr/bin/env python3
"""Refresh every notebook, verify it again, and write a patch plus a pull-request body for review.

Usage: tools/propose_refresh.py [PATH ...] [--jax pinned|latest|VERSION] [--out DIR] [--jobs N]

Writes into --out (default refresh-proposal/): report.md always; refresh.patch and pr-body.md
only when some saved output changed. The refreshed notebooks stay in the work tree (review them
with `git diff`). --jax other than `pinned` refreshes in a side environment (as
tools/upgrade_check.py builds it) and proposes that environment's pins in pyproject.toml too.
Exit: 0 proposal written or nothing changed, 1 an assert or a cell failed (nothing proposed,
notebooks put back), 2 usage or environment error.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from verify.errors import VerifyError  # noqa: E402
from verify.proposal import propose  # noqa: E402
from verify.runner import find_notebooks  # noqa: E402

PINNED_WITH_JAX = ("jax", "jaxlib", "optax", "flax", "orbax-checkpoint")


def side_environment(version: str) -> tuple[str, dict]:
    """Python of a side environment with JAX `version`, and the versions it resolved."""
    import upgrade_check

    py = upgrade_check.build_env(ROOT / ".upgrade-envs" / f"jax-{version}", version)
    code = ("import json, importlib.metadata as m; "
            f"print(json.dumps({{n: m.version(n) for n in {PINNED_WITH_JAX!r}}}))")
    versions = json.loads(subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True).stdout)
    return str(py), versions


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="tools/propose_refresh.py", description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", type=Path, help="notebooks or folders (default: content/)")
    p.add_argument("--jax", default="pinned", help="pinned (default), latest, or a release such as 0.12.1")
    p.add_argument("--out", type=Path, default=ROOT / "refresh-proposal", help="where the files go")
    p.add_argument("--jobs", type=int, help="notebooks run at once (default: one per core)")
    p.add_argument("--repo", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        notebooks = find_notebooks(args.paths or [args.repo / "content"])
        if not notebooks:
            print("ERROR no notebooks found. TIP check the paths", file=sys.stderr)
            return 2
        python, pins, title = sys.executable, None, "Refresh saved outputs on the pinned JAX"
        if args.jax != "pinned":
            python, pins = side_environment(args.jax)
            title = f"Refresh saved outputs on jax {pins['jax']}"
        return propose(args.repo, notebooks, args.out, python=python, jobs=args.jobs, title=title, pins=pins)
    except VerifyError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # upgrade_check.build_env could not build the side environment
        return int(exc.code or 2)


if __name__ == "__main__":
    sys.exit(main())
