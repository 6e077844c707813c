"""Skip notebooks that already passed with the same sources, helpers and environment."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

from . import HARNESS_VERSION
from .normalize import repo_root

CACHE_DIR_NAME = ".verify-cache"
ENV_PACKAGES = ("jax", "jaxlib", "numpy", "nbclient", "ipykernel")


def environment() -> dict:
    """The parts of the environment that can change a notebook's outputs."""
    env = {"python": platform.python_version(), "platform": f"{sys.platform}-{platform.machine()}",
           "harness": HARNESS_VERSION, "xla_flags": os.environ.get("XLA_FLAGS", "")}
    for name in ENV_PACKAGES:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            env[name] = None
    return env


PROVENANCE_KEYS = ("jax", "jaxlib", "numpy", "python", "platform", "xla_flags", "harness")
COMPARED_KEYS = ("jax", "jaxlib", "numpy", "python", "platform", "xla_flags")


def provenance() -> dict:
    """What refresh records in a notebook's metadata: the environment that produced its outputs."""
    env = environment()
    env["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    return {k: env.get(k) for k in PROVENANCE_KEYS}


def provenance_mismatch(recorded: dict | None, current: dict) -> str:
    """'' when recorded matches current; otherwise what differs, for the failure message."""
    if not recorded:
        return "the notebook records no environment (metadata.verify.environment)"

    def norm(key, value):
        return ".".join(str(value).split(".")[:2]) if key == "python" and value else value

    diffs = [f"{k}: saved outputs from {recorded.get(k)!r}, this run {current.get(k)!r}"
             for k in COMPARED_KEYS if norm(k, recorded.get(k)) != norm(k, current.get(k))]
    return "; ".join(diffs)


def helper_digest(root: Path | None = None) -> str:
    """Digest of the course helper package and the harness code, which notebooks depend on."""
    root = root or repo_root()
    h = hashlib.sha256()
    for folder in (root / "content" / "jaxcourse", root / "verify"):
        for file in sorted(folder.rglob("*.py")):
            h.update(str(file.relative_to(root)).encode())
            h.update(file.read_bytes())
    return h.hexdigest()


def cache_key(path: Path, *, helpers: str, env: dict, options: dict) -> str:
    """Key over the notebook bytes, helper code, environment and run options."""
    h = hashlib.sha256()
    h.update(Path(path).read_bytes())
    h.update(helpers.encode())
    h.update(json.dumps(env, sort_keys=True).encode())
    h.update(json.dumps(options, sort_keys=True).encode())
    return h.hexdigest()


class Cache:
    """One small JSON file per notebook under .verify-cache/, holding the last passing key."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(folder) if folder else repo_root() / CACHE_DIR_NAME

    def _file(self, path: Path) -> Path:
        name = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:24]
        return self.folder / f"{name}.json"

    def hit(self, path: Path, key: str) -> bool:
        """True when the notebook last passed with exactly this key."""
        try:
            return json.loads(self._file(path).read_text())["key"] == key
        except (OSError, ValueError, KeyError):
            return False

    def store(self, path: Path, key: str, seconds: float | None = None) -> None:
        """Remember a passing run (and how long it took, for the runner's longest-first order)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        record = {"path": str(path), "key": key}
        if seconds is None:
            seconds = self.seconds(path)
        if seconds is not None:
            record["seconds"] = round(seconds, 1)
        self._file(path).write_text(json.dumps(record))

    def seconds(self, path: Path) -> float | None:
        """How long the notebook's last passing real run took here, if one is remembered."""
        try:
            return float(json.loads(self._file(path).read_text())["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
