"""Fetch an npm package tarball once (`npm pack`) into the build cache; a rebuild needs no network."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def pack(cache: Path, name: str, version: str, needed_for: str) -> Path:
    """Path of the cached tarball <name>-<version>.tgz, fetched with `npm pack` the first time."""
    tgz = cache / f"{name}-{version}.tgz"
    if tgz.exists():
        return tgz
    if not shutil.which("npm"):
        raise SystemExit(f"ERROR {needed_for} needs npm to fetch {name}@{version} once (npm pack).\n"
                         "TIP  install Node.js/npm (e.g. apt-get install npm); the tarball is then cached in "
                         f"{cache.name}/ and later builds need no network.")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"* npm pack {name}@{version} (once; cached in {cache.name}/)", file=sys.stderr)
    subprocess.run(["npm", "pack", f"{name}@{version}", "--silent"], cwd=cache, check=True,
                   stdout=subprocess.DEVNULL)
    if not tgz.exists():
        raise SystemExit(f"ERROR npm pack did not produce {tgz.name} in {cache}")
    return tgz
