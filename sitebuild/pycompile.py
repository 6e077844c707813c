"""Bytecode for what the browser kernel imports at start, written at build time by Pyodide in Node.js.

Pyodide's standard-library zip and the wheels from PyPI hold only sources, so the browser compiles
every module the kernel imports at start (about 700: IPython, prompt_toolkit, jedi, the stdlib they
use) on every start. Measured in chromium on the 2-core dev machine, under load, the first lite cell's
output came 16.5 s after the click instead of 25.5 s (3 A/B pairs) with this bytecode.
Cost: about 4 MB more to download when the kernel starts (see pycompile_inner.py for what is kept).

The result depends only on the Pyodide version and the boot wheels, so it is cached in
.site-cache/pyc/ and computed again only when one of those changes (about 30 s). Without Node.js, or
if the step fails, the site ships the archives as they are (the kernel then just starts slower).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).with_name("pycompile.mjs")
INNER = Path(__file__).with_name("pycompile_inner.py")
STDLIB = "python_stdlib.zip"


def _key(pyodide_dir: Path, archives: list[str], packages: list[str]) -> str:
    digest = hashlib.sha256()
    for text in (SCRIPT.read_bytes(), INNER.read_bytes(), json.dumps(packages).encode()):
        digest.update(text + b"\0")
    for name in archives:
        digest.update(name.encode() + b"\0" + hashlib.sha256((pyodide_dir / name).read_bytes()).digest())
    return digest.hexdigest()[:16]


def precompile(pyodide_dir: Path, packages: list[str], cache: Path, skip: tuple[str, ...] = ()) -> dict | None:
    """Replace, in `pyodide_dir` (core files, wheels, lock), the stdlib zip and the boot wheels by copies
    with bytecode for the modules the kernel imports at start; returns what was done, or None when the
    step could not run (the archives are then left as they are). `skip`: lock names left alone."""
    lock = json.loads((pyodide_dir / "pyodide-lock.json").read_text(encoding="utf-8"))
    archives = [STDLIB] + sorted(e["file_name"] for n, e in lock["packages"].items() if n not in skip)
    done = cache / "pyc" / _key(pyodide_dir, archives, packages)
    t0 = time.perf_counter()
    if not (done / "report.json").exists():
        node = shutil.which("node")
        if not node:
            print("WARNING Node.js is not installed: the kernel's start-up modules are not precompiled "
                  "(the browser kernel starts slower); install Node.js and rebuild", file=sys.stderr)
            return None
        tmp = done.with_name(done.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        print(f"* precompiling the browser kernel's start-up modules with Pyodide in Node.js "
              f"(once; cached in {cache.name}/pyc/)", file=sys.stderr)
        proc = subprocess.run([node, str(SCRIPT), str(pyodide_dir.resolve()), str(tmp.resolve()),
                               json.dumps(packages), str(INNER)], capture_output=True, text=True, timeout=600)
        if proc.returncode or not (tmp / "report.json").exists():
            print(f"WARNING precompiling the kernel's start-up modules failed (exit {proc.returncode}); the site "
                  f"ships them as sources:\n{(proc.stdout + proc.stderr)[-1500:]}", file=sys.stderr)
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        shutil.rmtree(done, ignore_errors=True)
        tmp.rename(done)
    report = json.loads((done / "report.json").read_text(encoding="utf-8"))
    before = after = 0
    for name in report["archives"]:
        if name in archives:
            before += (pyodide_dir / name).stat().st_size
            shutil.copyfile(done / name, pyodide_dir / name)
            after += (pyodide_dir / name).stat().st_size
    return {"modules": sum(report["archives"].values()), "archives": len(report["archives"]),
            "bytes_added": after - before, "seconds": round(time.perf_counter() - t0, 1)}
