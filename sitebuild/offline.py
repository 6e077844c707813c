"""Bundle Pyodide for a site that runs without the CDN: npm core + the boot wheels from PyPI.

Downloads are cached in .site-cache/ (npm tarball, wheels), so a rebuild needs no network.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

from . import npm

#: the files of the npm package the kernel loads (no source maps, no node-only files)
CORE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
#: what the kernel installs at boot and must find in the lock (their dependencies follow from it)
BOOT_PACKAGES = ("micropip", "ipython", "jedi")
#: files of boot wheels that the browser never reads, dropped from the shipped copy (about 0.55 MB):
#: jedi's Django stubs, its Python 2 standard-library stubs (jedi on Python 3 reads stdlib/2and3, 3, 3.N)
#: and its third-party stubs (jedi then infers those packages from their source, as for any other)
SLIM = {"jedi": ("jedi/third_party/django-stubs/", "jedi/third_party/typeshed/stdlib/2/",
                 "jedi/third_party/typeshed/third_party/")}
#: jedi lists this folder unconditionally; a placeholder keeps it in the unpacked wheel
KEEP_DIRS = {"jedi": ("jedi/third_party/typeshed/third_party/README.txt",)}
#: boot wheels that are not in Pyodide's lock; piplite serves them from the lite dir's pypi/
PIPLITE_WHEELS = ("comm==0.2.3",)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def fetch_pyodide(cache: Path) -> Path:
    """The npm tarball pyodide@<kernel's version>."""
    return npm.pack(cache, "pyodide", PYODIDE_VERSION, "the offline build (or build with --cdn)")


def boot_closure(lock: dict) -> list[str]:
    """Lock entries the kernel needs at boot: BOOT_PACKAGES and everything they depend on."""
    pkgs = {_norm(k): k for k in lock["packages"]}
    todo, seen = [_norm(p) for p in BOOT_PACKAGES], []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in pkgs:
            raise SystemExit(f"ERROR Pyodide {PYODIDE_VERSION}'s lock has no package {name!r}")
        seen.append(name)
        entry = lock["packages"][pkgs[name]]
        if not entry["file_name"].endswith("py3-none-any.whl"):
            raise SystemExit(f"ERROR boot package {name} is not pure Python in the lock "
                             f"({entry['file_name']}); it cannot come from PyPI")
        todo += [_norm(d) for d in entry.get("depends", [])]
    return sorted(pkgs[n] for n in seen)


def pip_download(specs: list[str], dest: Path) -> None:
    """Download pure-Python wheels (no dependencies) into `dest` unless already there."""
    have = {_norm(p.name.split("-")[0]) + "==" + p.name.split("-")[1] for p in dest.glob("*.whl")}
    missing = [s for s in specs if _norm(s.split("==")[0]) + "==" + s.split("==")[1] not in have]
    if not missing:
        return
    dest.mkdir(parents=True, exist_ok=True)
    print(f"* pip download {len(missing)} wheels (once; cached in {dest.parent.name}/{dest.name}/)",
          file=sys.stderr)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--only-binary=:all:", "--dest", str(dest), *missing],
                          capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"ERROR pip download of {' '.join(missing)} failed (output above); "
                         "the offline build needs PyPI once, or build with --cdn")


def find_wheel(dest: Path, name: str, version: str) -> Path:
    """The cached wheel of name==version."""
    for p in dest.glob("*.whl"):
        parts = p.name.split("-")
        if _norm(parts[0]) == _norm(name) and parts[1] == version:
            return p
    raise SystemExit(f"ERROR wheel {name}=={version} missing in {dest}; delete .site-cache and rebuild")


def slim(src: Path, dest: Path, name: str) -> None:
    """Copy a wheel, leaving out the SLIM prefixes of `name` (and their RECORD lines)."""
    drop = SLIM.get(name)
    if not drop:
        shutil.copy2(src, dest)
        return
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        for info in zin.infolist():
            if info.filename.startswith(drop):
                continue
            data = zin.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if not line.decode("utf-8").startswith(drop))
            zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
        for keep in KEEP_DIRS.get(name, ()):
            zout.writestr(zipfile.ZipInfo(keep, date_time=(1980, 1, 1, 0, 0, 0)), "Left out of the reading site's copy of this wheel (sitebuild/offline.py).\n")


def bundle(lite: Path, cache: Path) -> dict:
    """Put Pyodide core, a lock of only the bundled wheels, and piplite wheels into the staged lite dir."""
    tgz = fetch_pyodide(cache)
    out = lite / "static" / "pyodide"
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tgz) as tar:
        lock = json.load(tar.extractfile("package/pyodide-lock.json"))
        for name in CORE_FILES:
            (out / name).write_bytes(tar.extractfile(f"package/{name}").read())
    names = boot_closure(lock)
    wheels = cache / "wheels"
    entries = {n: lock["packages"][n] for n in names}
    pip_download([f"{e['name']}=={e['version']}" for e in entries.values()] + list(PIPLITE_WHEELS), wheels)
    for entry in entries.values():
        whl = find_wheel(wheels, entry["name"], entry["version"])
        slim(whl, out / whl.name, _norm(entry["name"]))
        entry["file_name"] = whl.name
        entry["sha256"] = hashlib.sha256((out / whl.name).read_bytes()).hexdigest()  # not Pyodide's build
    (out / "pyodide-lock.json").write_text(json.dumps({"info": lock["info"], "packages": entries}, indent=1))
    pypi = lite / "pypi"
    pypi.mkdir(parents=True, exist_ok=True)
    for spec in PIPLITE_WHEELS:
        shutil.copy2(find_wheel(wheels, *spec.split("==")), pypi)
    return {"pyodide": PYODIDE_VERSION, "lock": names, "piplite": list(PIPLITE_WHEELS)}
