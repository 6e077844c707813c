"""Fetch an npm package tarball once from the npm registry into the build cache; a rebuild needs no network.

Plain HTTPS with the registry's integrity hash checked: building the site needs no Node.js or npm.
NPM_CONFIG_REGISTRY (npm's own setting) points it at a mirror.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

DEFAULT_REGISTRY = "https://registry.npmjs.org"


def registry() -> str:
    return os.environ.get("NPM_CONFIG_REGISTRY", DEFAULT_REGISTRY).rstrip("/")


def pack(cache: Path, name: str, version: str, needed_for: str) -> Path:
    """Path of the cached tarball <name>-<version>.tgz, downloaded and checked the first time."""
    tgz = cache / f"{name}-{version}.tgz"
    if tgz.exists():
        return tgz
    url = f"{registry()}/{name}/{version}"
    print(f"* downloading {name}@{version} from {registry()} (once; cached in {cache.name}/)", file=sys.stderr)
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            dist = json.load(r)["dist"]
        with urllib.request.urlopen(dist["tarball"], timeout=300) as r:
            data = r.read()
    except (OSError, urllib.error.URLError, KeyError, ValueError) as e:
        raise SystemExit(f"ERROR {needed_for} needs {name}@{version} from the npm registry once ({url}): {e}\n"
                         "TIP  check the network to the registry (or set NPM_CONFIG_REGISTRY to a mirror); the tarball "
                         f"is then cached in {cache}/ and later builds need no network.") from None
    algo, _, want = dist.get("integrity", "").partition("-")
    if algo not in ("sha512", "sha384", "sha256"):
        raise SystemExit(f"ERROR the registry gave no integrity hash for {name}@{version} ({url}); refusing to use it")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise SystemExit(f"ERROR {name}@{version} from {dist['tarball']} does not match the registry's {algo} "
                         "integrity hash; nothing was cached. Try again, or check NPM_CONFIG_REGISTRY.")
    cache.mkdir(parents=True, exist_ok=True)
    part = tgz.with_name(tgz.name + ".part")
    part.write_bytes(data)
    part.replace(tgz)
    return tgz
