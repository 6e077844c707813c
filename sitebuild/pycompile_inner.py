"""Runs inside Pyodide (see pycompile.mjs): bytecode for the modules this kernel imported at start.

The standard library keeps its sources (tracebacks and `inspect` show stdlib code as usual): each
imported module gets a `.pyc` beside its `.py` in the zip, which zipimport tries first. In the
wheels of the kernel's own machinery (IPython, prompt_toolkit, jedi, ...) the `.pyc` replaces the `.py`
of an imported module (sourceless, half the bytes of keeping both). The bytecode is "unchecked hash"
based: never compared with a source file's timestamp, which unpacking a wheel in the browser changes.
"""

import importlib.util
import json
import sys
import sysconfig
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc


def precompile(src: str, out: str) -> str:
    imported = {m.__file__ for m in list(sys.modules.values()) if isinstance(getattr(m, "__file__", None), str)}
    stdlib_zip = next(p for p in sys.path if p.endswith(".zip"))
    site = "/" + sysconfig.get_paths()["purelib"].lstrip("/")   # Pyodide says "//lib/..."
    lock = json.load(open(f"{src}/pyodide-lock.json"))
    jobs = [("python_stdlib.zip", stdlib_zip, True)] + [
        (e["file_name"], site, False) for e in lock["packages"].values()]
    report = {"python": sys.version.split()[0], "imported": len(imported), "archives": {}}
    for name, root, keep_sources in jobs:
        compiled = 0
        with zipfile.ZipFile(f"{src}/{name}") as zin:
            members = [(info, zin.read(info)) for info in zin.infolist()]
        wanted = {info.filename for info, _ in members
                  if info.filename.endswith(".py") and f"{root}/{info.filename}" in imported}
        if not wanted:
            continue
        with zipfile.ZipFile(f"{out}/{name}", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
            for info, data in members:
                if info.filename not in wanted:
                    zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
                    continue
                code = compile(data, f"{root}/{info.filename}", "exec", dont_inherit=True)
                pyc = bytes(_code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False))
                if keep_sources:
                    zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
                zout.writestr(zipfile.ZipInfo(info.filename[:-3] + ".pyc", date_time=info.date_time), pyc,
                              compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
                compiled += 1
        report["archives"][name] = compiled
    with open(f"{out}/report.json", "w") as f:
        json.dump(report, f, indent=1)
    return json.dumps(report)
