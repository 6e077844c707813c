"""Skip notebooks that already passed with the same sources, helpers and environment."""

from __future__ import annotations

import ast
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
# Outputs from another JAX are another course: that is upgrade_check's business, and a verify fails.
FATAL_KEYS = ("jax", "jaxlib")
# Another Python minor, NumPy, platform or XLA_FLAGS is what a reader's machine looks like: the outputs are
# compared under the usual rules and the difference is reported as a note.
NOTED_KEYS = ("numpy", "python", "platform", "xla_flags")
COMPARED_KEYS = FATAL_KEYS + NOTED_KEYS


def provenance() -> dict:
    """What refresh records in a notebook's metadata: the environment that produced its outputs."""
    env = environment()
    env["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    return {k: env.get(k) for k in PROVENANCE_KEYS}


def _differences(recorded: dict, current: dict, keys) -> list[str]:
    def norm(key, value):  # a Python patch release never changes an output the course shows
        return ".".join(str(value).split(".")[:2]) if key == "python" and value else value

    return [f"{k}: saved outputs from {recorded.get(k)!r}, this run {current.get(k)!r}"
            for k in keys if norm(k, recorded.get(k)) != norm(k, current.get(k))]


def provenance_check(recorded: dict | None, current: dict) -> tuple[str, str]:
    """(fatal, note) about the environment: fatal when JAX/jaxlib differ or nothing is recorded,
    note when only Python minor, NumPy, platform or XLA_FLAGS differ; '' where there is nothing to say."""
    if not recorded:
        return "the notebook records no environment (metadata.verify.environment)", ""
    return "; ".join(_differences(recorded, current, FATAL_KEYS)), "; ".join(_differences(recorded, current, NOTED_KEYS))


def provenance_mismatch(recorded: dict | None, current: dict) -> str:
    """'' when recorded matches current in every compared key; otherwise what differs (a refresh renews it)."""
    if not recorded:
        return "the notebook records no environment (metadata.verify.environment)"
    return "; ".join(_differences(recorded, current, COMPARED_KEYS))


#: the harness modules that run a notebook and decide its verdict; what they import from verify/ counts too
VERDICT_ENTRY = ("runner.py", "worker.py", "execute.py")


def imported_files(start: list[Path], root: Path) -> list[Path]:
    """The files in start and, transitively, the first-party modules they import (from the packages that are
    folders of root with an __init__.py: verify, coursemodel, coursetools …), read from import statements."""
    def module_files(base: Path, dotted: str) -> list[Path]:
        target = base.joinpath(*dotted.split(".")) if dotted else base
        return [target.with_suffix(".py"), target / "__init__.py"]

    seen: set[Path] = set()
    todo = list(start)
    while todo:
        file = todo.pop()
        if file in seen or not file.is_file():
            continue
        seen.add(file)
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = file.parent
                    for _ in range(node.level - 1):
                        base = base.parent
                    dotted = node.module or ""
                elif (root / (node.module or "").split(".")[0] / "__init__.py").is_file():
                    base, dotted = root, node.module
                else:
                    continue
                todo += module_files(base, dotted)
                todo += [f for alias in node.names for f in module_files(base, f"{dotted}.{alias.name}".lstrip("."))]
            elif isinstance(node, ast.Import):
                todo += [f for a in node.names if (root / a.name.split(".")[0] / "__init__.py").is_file()
                         for f in module_files(root, a.name)]
    return sorted(seen)


def verdict_files(verify_dir: Path) -> list[Path]:
    """The files of verify/ a verdict depends on: VERDICT_ENTRY and, transitively, the verify modules they
    import. Editing another module (the lock writer, the CLI, the upgrade check) does not make every notebook
    run again."""
    return [f for f in imported_files([verify_dir / name for name in VERDICT_ENTRY], verify_dir.parent)
            if verify_dir in f.parents]


def probe_digest(spec: str, root: Path | None = None) -> str:
    """Digest of a probe's module ('module:function') and the first-party modules it imports."""
    from importlib.util import find_spec

    root = root or repo_root()
    found = find_spec(spec.partition(":")[0])
    h = hashlib.sha256()
    for file in imported_files([Path(found.origin)] if found and found.origin else [], root):
        h.update(str(file.relative_to(root) if root in file.parents else file.name).encode())
        h.update(file.read_bytes())
    return h.hexdigest()


def helper_digest(root: Path | None = None) -> str:
    """Digest of the course helper package (every file: the FFI chapter compiles its .cc sources) and the
    harness code that decides a verdict (verdict_files)."""
    root = root or repo_root()
    h = hashlib.sha256()
    files = sorted(f for f in (root / "content" / "jaxcourse").rglob("*")
                   if f.is_file() and "__pycache__" not in f.parts) + verdict_files(root / "verify")
    for file in files:
        h.update(str(file.relative_to(root)).encode())
        h.update(file.read_bytes())
    return h.hexdigest()


#: environment variables the kernels inherit that can change what JAX computes or prints
MACHINE_ENV_PREFIXES = ("JAX_", "XLA_", "TF_CPP_", "OMP_", "MKL_")


def machine_identity() -> dict:
    """What else decides a verdict on this machine, for the cache key only: every installed distribution's
    version (optax, flax, … not just the ones environment() records), the CPU (its model and flags decide the
    code XLA generates, so the rounding) and the JAX_/XLA_/… variables the kernels inherit."""
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions())
    cpu: list[str] = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith(("model name", "flags", "Features", "CPU part")) and line not in cpu:
                    cpu.append(line)
                if not line.strip() and cpu:   # the first processor is enough
                    break
    except OSError:
        cpu = [platform.processor(), platform.machine()]
    return {"packages": hashlib.sha256("\n".join(dists).encode()).hexdigest(),
            "cpu": hashlib.sha256("".join(cpu).encode()).hexdigest(),
            "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(MACHINE_ENV_PREFIXES)}}


def cache_key(path: Path, *, helpers: str, env: dict, options: dict) -> str:
    """Key over the notebook bytes, helper code, environment and run options."""
    h = hashlib.sha256()
    h.update(Path(path).read_bytes())
    h.update(helpers.encode())
    h.update(json.dumps(env, sort_keys=True).encode())
    h.update(json.dumps(options, sort_keys=True).encode())
    return h.hexdigest()


#: a cache folder outside the checkout, shared by its clones (.ci/run sets it: each CI run is a fresh clone)
CACHE_DIR_ENV = "VERIFY_CACHE_DIR"


class Cache:
    """One small JSON file per notebook, holding the keys of its last passing runs (KEPT_RUNS of them: a plain
    run, the probe run and the other-CPU runs of .ci/run each have their own key and must not push each other
    out): under .verify-cache/ of the checkout, or under $VERIFY_CACHE_DIR. A notebook is named by its path
    inside the checkout, so two clones of the repository share entries; the key (notebook bytes, helper and
    harness code, environment, machine, run options) decides."""

    KEPT_RUNS = 8

    def __init__(self, folder: Path | None = None) -> None:
        shared = os.environ.get(CACHE_DIR_ENV)
        self.folder = Path(folder) if folder else Path(shared).expanduser() if shared else repo_root() / CACHE_DIR_NAME

    def _file(self, path: Path) -> Path:
        where = Path(path).resolve()
        root = repo_root()
        name = where.relative_to(root).as_posix() if root in where.parents else str(where)
        return self.folder / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.json"

    def _runs(self, path: Path) -> list[dict]:
        """The remembered passing runs, newest first ([] when none or unreadable)."""
        try:
            record = json.loads(self._file(path).read_text())
        except (OSError, ValueError):
            return []
        if not isinstance(record, dict):
            return []
        runs = record.get("runs", [record] if "key" in record else [])   # one run per file before KEPT_RUNS
        return [r for r in runs if isinstance(r, dict) and "key" in r]

    def _run(self, path: Path, key: str) -> dict | None:
        return next((r for r in self._runs(path) if r["key"] == key), None)

    def hit(self, path: Path, key: str) -> bool:
        """True when the notebook passed with exactly this key in one of its remembered runs."""
        return self._run(path, key) is not None

    def store(self, path: Path, key: str, seconds: float | None = None, notes: list[str] | None = None) -> None:
        """Remember a passing run (how long it took, for the runner's longest-first order, and its notes,
        which a cache hit reports again). Written atomically: parallel runs never leave half a file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        run = {"key": key, "notes": list(notes or [])}
        if seconds is None:
            seconds = self.seconds(path)
        if seconds is not None:
            run["seconds"] = round(seconds, 1)
        runs = [run] + [r for r in self._runs(path) if r["key"] != key]
        target = self._file(path)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"path": str(path), "runs": runs[:self.KEPT_RUNS]}))
        os.replace(tmp, target)

    def notes(self, path: Path, key: str | None = None) -> list[str]:
        """The notes (environment differences) of the passing run with this key (default: the newest)."""
        run = self._run(path, key) if key is not None else next(iter(self._runs(path)), None)
        notes = (run or {}).get("notes")
        return [str(n) for n in notes] if isinstance(notes, list) else []

    def seconds(self, path: Path) -> float | None:
        """How long the notebook's longest remembered passing run took here (the run with the probe, which
        judges every recorded answer, is the long one; the shard plan and longest-first order want that)."""
        times = []
        for run in self._runs(path):
            try:
                times.append(float(run["seconds"]))
            except (KeyError, ValueError, TypeError):
                pass
        return max(times) if times else None
