"""Bundle Pyodide for a site that runs without the CDN: npm core + the boot wheels from PyPI.

Downloads are cached in .site-cache/ (npm tarball, wheels), so a rebuild needs no network.

The kernel boots faster when every wheel it needs at start is in the lock and named in
loadPyodideOptions.packages (kernel_options): Pyodide then fetches and unpacks them all at once while
Python itself initialises, instead of the kernel installing them one after another with micropip and
piplite. The course's helper package travels the same way (course_wheel), so importing it at kernel
start reads from memory instead of one request per file and lookup through the browser's file system.
"""

from __future__ import annotations

import base64
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


from . import npm, pycompile

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
#: what the kernel's worker installs at start (micropip, then piplite, then these one by one) unless
#: loadPyodideOptions.packages names them (JupyterLite 0.8's worker: initPackageManager, initKernel)
KERNEL_BOOT = ("micropip", "piplite", "ipykernel", "comm", "pyodide-kernel", "jedi", "ipython")
#: wheels the kernel extension ships for piplite (its static/pypi/); the lock gets them too
EXTENSION_WHEELS = ("piplite", "ipykernel", "pyodide-kernel")
EXTENSION = "@jupyterlite/pyodide-kernel-extension"


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


def extension_wheels() -> Path:
    """The kernel extension's folder of piplite wheels (piplite itself, pyodide-kernel, an ipykernel shim)."""
    from jupyter_core.paths import jupyter_path

    for root in jupyter_path("labextensions"):
        folder = Path(root) / EXTENSION / "static" / "pypi"
        if folder.is_dir():
            return folder
    raise SystemExit(f"ERROR the JupyterLite kernel extension {EXTENSION} is not installed; run ./dev setup site")


def wheel_metadata(whl: Path) -> tuple[str, str, list[str], list[str]]:
    """(name, version, top-level imports, dependencies without extras or markers) of a pure-Python wheel."""
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        text = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode("utf-8")
    tops = sorted({n.split("/")[0].removesuffix(".py") for n in names
                   if not n.split("/")[0].endswith((".dist-info", ".data")) and (n.endswith(".py") or "/" in n)})
    fields, deps = {}, []
    for line in text.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(": ")
        if key == "Requires-Dist" and ";" not in value:
            deps.append(_norm(re.split(r"[ <>=!~\[(]", value.strip(), maxsplit=1)[0]))
        fields.setdefault(key, value.strip())
    return fields["Name"], fields["Version"], tops, deps


def lock_entry(whl: Path, depends: list[str] | None = None) -> dict:
    """A pyodide-lock.json entry for a pure-Python wheel that sits next to the lock."""
    name, version, imports, deps = wheel_metadata(whl)
    return {"depends": deps if depends is None else depends, "file_name": whl.name, "imports": imports,
            "install_dir": "site", "name": name, "package_type": "package",
            "sha256": hashlib.sha256(whl.read_bytes()).hexdigest(), "unvendored_tests": False, "version": version}


#: a fixed timestamp for the files of the course wheel: the same sources give the same bytes
EPOCH = (1980, 1, 1, 0, 0, 0)


def course_wheel(package: Path, dest: Path, version: str) -> Path:
    """Pack the staged helper package (with the _site.json and _startup.py the build wrote) as a wheel."""
    name = package.name
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix != ".pyc")
    info = f"{name}-{version}.dist-info"
    whl = dest / f"{name}-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        def add(arc: str, data: bytes) -> None:
            z.writestr(zipfile.ZipInfo(arc, date_time=EPOCH), data, compress_type=zipfile.ZIP_DEFLATED,
                       compresslevel=9)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arc},sha256={digest},{len(data)}")
        for f in files:
            add(f"{name}/{f.relative_to(package).as_posix()}", f.read_bytes())
        add(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode())
        add(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: sitebuild\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        record.append(f"{info}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=EPOCH), "\n".join(record) + "\n")
    return whl


#: added to the offline site's standard-library zip. While the kernel starts, the working directory is the
#: browser's file system /drive, and every top-level import would first look there: each look is one
#: synchronous request that waits for the page's busy main thread (about 85 of them, some 4 s of the
#: start on the dev machine). This stands in for /drive in sys.path_importer_cache until the course's
#: start-up script (stage.STARTUP) takes it out again; notebooks then import from their folder as usual.
SITECUSTOMIZE = """\
# 阅读站点构建时加入（sitebuild/offline.py）：内核启动期间 import 不去浏览器文件系统 /drive 里找
# （每找一次都是一次要等页面主线程的同步请求）；课程的启动脚本（jaxcourse/_startup.py）最后撤掉它。
import sys


class CourseSkipDrive:
    \"\"\"A path-entry finder that finds nothing: stands for /drive while the kernel starts.\"\"\"

    course_skip = True

    def find_spec(self, fullname, target=None):
        return None

    def invalidate_caches(self):
        pass


sys.path_importer_cache["/drive"] = CourseSkipDrive()
"""


def add_sitecustomize(stdlib_zip: Path) -> None:
    """Put SITECUSTOMIZE into the standard-library zip (Pyodide ships no sitecustomize of its own)."""
    with zipfile.ZipFile(stdlib_zip) as z:
        if "sitecustomize.py" in z.namelist():
            raise SystemExit(f"ERROR {stdlib_zip.name} already has a sitecustomize.py; "
                             "update sitebuild/offline.py for this Pyodide version")
    with zipfile.ZipFile(stdlib_zip, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("sitecustomize.py", date_time=EPOCH), SITECUSTOMIZE,
                   compress_type=zipfile.ZIP_DEFLATED)


def kernel_options(lite: Path, bundled: dict) -> None:
    """Tell the kernel to load its boot wheels (and the course package) from the lock at start, and to run
    the course's start-up script from the installed package (jupyter-lite.json of the staged lite dir)."""
    path = lite / "jupyter-lite.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    kernel = cfg["jupyter-config-data"].setdefault("litePluginSettings", {}).setdefault(
        f"{EXTENSION}:kernel", {})
    opts = kernel.setdefault("loadPyodideOptions", {})
    opts["packages"] = list(bundled["packages"])
    if bundled.get("startup"):
        opts.setdefault("env", {})["PYTHONSTARTUP"] = bundled["startup"]
    path.write_text(json.dumps(cfg, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def download_boot_wheels(lock: dict, wheels: Path) -> dict:
    """The lock entries of the kernel's boot wheels, their wheels (and piplite's) downloaded into `wheels` once."""
    entries = {n: lock["packages"][n] for n in boot_closure(lock)}
    pip_download([f"{e['name']}=={e['version']}" for e in entries.values()] + list(PIPLITE_WHEELS), wheels)
    return entries


def prefetch(cache: Path) -> list[str]:
    """Download once everything an offline build downloads (Pyodide core, the kernel's boot wheels, marked)
    into `cache`: after ./dev setup, building the site and the tests need no network. Returns what is cached."""
    from . import preview

    tgz = fetch_pyodide(cache)
    with tarfile.open(tgz) as tar:
        lock = json.load(tar.extractfile("package/pyodide-lock.json"))
    download_boot_wheels(lock, cache / "wheels")
    return [tgz.name, preview.fetch_marked(cache).name, *sorted(p.name for p in (cache / "wheels").glob("*.whl"))]


def bundle(lite: Path, cache: Path, package: Path | None = None, version: str = "0") -> dict:
    """Put Pyodide core, a lock of only the bundled wheels, and piplite wheels into the staged lite dir.

    `package`: the staged helper package, bundled as a wheel the kernel installs at start."""
    tgz = fetch_pyodide(cache)
    out = lite / "static" / "pyodide"
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tgz) as tar:
        lock = json.load(tar.extractfile("package/pyodide-lock.json"))
        for name in CORE_FILES:
            (out / name).write_bytes(tar.extractfile(f"package/{name}").read())
    wheels = cache / "wheels"
    entries = download_boot_wheels(lock, wheels)
    for entry in entries.values():
        whl = find_wheel(wheels, entry["name"], entry["version"])
        slim(whl, out / whl.name, _norm(entry["name"]))
        entry["file_name"] = whl.name
        entry["sha256"] = hashlib.sha256((out / whl.name).read_bytes()).hexdigest()  # not Pyodide's build
    pypi = lite / "pypi"
    pypi.mkdir(parents=True, exist_ok=True)
    extra = [find_wheel(wheels, *spec.split("==")) for spec in PIPLITE_WHEELS]
    for whl in extra:
        shutil.copy2(whl, pypi)   # still there for `%pip install` through piplite
    ext = extension_wheels()
    extra += [next(p for p in ext.glob("*.whl") if _norm(p.name.split("-")[0]) == _norm(n)) for n in EXTENSION_WHEELS]
    for whl in extra:
        shutil.copy2(whl, out / whl.name)
        entry = lock_entry(out / whl.name)
        entries[_norm(entry["name"])] = entry
    boot = list(KERNEL_BOOT)
    startup = None
    if package is not None and package.is_dir():
        whl = course_wheel(package, out, version)
        entry = lock_entry(whl, depends=[])
        entries[_norm(entry["name"])] = entry
        boot.append(entry["name"])
        major, minor = lock["info"]["python"].split(".")[:2]
        startup = f"/lib/python{major}.{minor}/site-packages/{package.name}/_startup.py"
    known = {_norm(k) for k in entries}
    missing = sorted({d for e in entries.values() for d in e["depends"] if _norm(d) not in known}
                     | {b for b in boot if _norm(b) not in known})
    if missing:
        raise SystemExit(f"ERROR the kernel's boot wheels need {missing}, which are not bundled; "
                         "update sitebuild/offline.py for this JupyterLite version")
    write_lock = lambda: (out / "pyodide-lock.json").write_text(  # noqa: E731
        json.dumps({"info": lock["info"], "packages": entries}, indent=1))
    write_lock()
    skip = tuple(_norm(b) for b in boot if b not in KERNEL_BOOT)   # the course package changes with the content
    compiled = pycompile.precompile(out, list(KERNEL_BOOT), cache, skip=skip)
    if startup:   # the start-up script undoes it
        add_sitecustomize(out / pycompile.STDLIB)
    if compiled:
        for entry in entries.values():
            entry["sha256"] = hashlib.sha256((out / entry["file_name"]).read_bytes()).hexdigest()
        write_lock()
    return {"pyodide": PYODIDE_VERSION, "lock": sorted(entries), "piplite": list(PIPLITE_WHEELS),
            "packages": boot, "startup": startup, "precompiled": compiled}
