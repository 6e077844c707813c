"""Post-process the built site: course scripts in the app pages, no source maps, sizes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from . import extension, preload, preview

APPS = ("notebooks", "tree", "lab", "edit", "consoles", "repl")
SCRIPT = "course-storage.js"
SCRIPT_SRC = Path(__file__).with_name(SCRIPT)

def fingerprint(notebook: Path) -> str:
    """What course-storage.js compares to tell a reader's edit from a mere autosave of a released chapter:
    32-bit FNV-1a of the UTF-8 bytes of every cell's source joined by NUL (the same function is in that file)."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    text = "\0".join("".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source") or "")
                      for c in cells)
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def inject_storage_script(output: Path, storage_prefix: str, release: str, cache: Path) -> None:
    """Copy the course scripts next to the apps and load them first in each app page.

    Every app gets the storage step; the reading app also gets the quick preview. (The run view's own
    adjustments are a JupyterLab plugin: sitebuild/extension.py.)"""
    deployed = sorted(p.relative_to(output / "files").as_posix()
                      for p in (output / "files").rglob("*") if p.is_file())
    cfg = {"prefix": storage_prefix, "current": f"{storage_prefix}/{release}", "deployed": deployed,
           "fingerprints": {p: fingerprint(output / "files" / p) for p in deployed if p.endswith(".ipynb")}}
    js = SCRIPT_SRC.read_text(encoding="utf-8").replace("/*CONFIG*/null", json.dumps(cfg, ensure_ascii=False))
    (output / SCRIPT).write_text(js, encoding="utf-8")
    preview.install(output, cache)
    for app in APPS:
        page = output / app / "index.html"
        if not page.exists():
            continue
        html = page.read_text(encoding="utf-8")
        tag = f'<script src="../{SCRIPT}"></script>'
        if tag in html:
            continue
        if "await import(" not in html or "<head>" not in html:
            raise SystemExit(f"ERROR {page} does not look like a JupyterLite 0.8 app page; "
                             "update sitebuild/post.py for this JupyterLite version")
        html = html.replace("<head>", "<head>\n    " + _tags(app), 1)
        html = html.replace("await import(", WAIT_FOR_STORAGE + "await import(", 1)
        if _reading(app):
            html = html.replace("</head>", preview.style() + "</head>", 1)
        page.write_text(html, encoding="utf-8")


#: start the app only after the storage script has finished (it waits at most 3 s) and, on the reading
#: page, after the quick preview is on screen (at most 1.5 s; see course-preview.js)
WAIT_FOR_STORAGE = ("await (window.courseStorageReady || null);\n        "
                    "await (window.coursePreviewReady || null);\n        ")


def _reading(app: str) -> bool:
    """The reading app's page: the one that gets the quick preview."""
    return f"{app}/index.html" == preload.PAGE


def _tags(app: str) -> str:
    tags = f'<script src="../{SCRIPT}"></script>'
    return preview.tags() + "\n    " + tags if _reading(app) else tags


def stock_page(html: str) -> str:
    """An app page as JupyterLite builds it: without the course's scripts and preload hints, and with the
    course's plugin (sitebuild/extension.py) disabled through the page's own config data.

    The baseline of `tools/site.py bench` (kernel starts on open, no preloads, no storage step)."""
    html = preload.strip(html)
    for tags in sorted({_tags(app) for app in APPS}, key=len, reverse=True):   # longest first: one contains another
        html = html.replace(tags + "\n    ", "")
    html, found = CONFIG_DATA.subn(lambda m: m.group(1) + json.dumps({"disabledExtensions": [extension.NAME]})
                                   + m.group(2), html, count=1)
    if not found:
        raise SystemExit("ERROR the app page has no empty jupyter-config-data block to disable the course's plugin in; "
                         "update sitebuild/post.py for this JupyterLite version")
    return html.replace(preview.style(), "").replace(WAIT_FOR_STORAGE, "")


#: the page's own config data (JupyterLite merges it with jupyter-lite.json; disabledExtensions are appended)
CONFIG_DATA = re.compile(r'(<script id="jupyter-config-data"[^>]*>\s*)\{\s*\}(\s*</script>)')


#: translation domains the site's front end uses (the zh_CN pack also covers many extensions it lacks)
CORE_DOMAINS = {"jupyterlab", "notebook"}
#: settings files JupyterLite 0.8 reads; the per-plugin copies next to them are never fetched
SETTINGS_FILES = {"all.json", "all_federated.json"}


#: files of the JupyterLite app's source tree that its build leaves at the site root
BUILD_INPUTS = ("package.json", "rspack.config.js", "rspack.config.analyze.js", "rspack.config.watch.js",
                "bootstrap.js", "jupyterlite.schema.v0.json")
#: the same inside each app folder: its bundler inputs (the page loads ../build/<app>/bundle.js instead)
APP_BUILD_INPUTS = ("package.json", "build/bootstrap.js", "build/index.js", "build/style.js")


def prune(output: Path) -> int:
    """Delete what a reader's browser never loads; returns bytes freed.

    - source maps;
    - legacy Font Awesome formats (eot/ttf/svg, and woff where a woff2 exists): its CSS lists woff2
      first, and every current browser takes it;
    - the per-plugin schema files under build/schemas/: JupyterLite reads only all.json and
      all_federated.json, which hold every schema;
    - the 310 KB multi-size favicon (replaced by the 32 KB one);
    - the app's own build inputs that jupyter lite copies to the root (BUILD_INPUTS): rspack configs,
      package.json, bootstrap.js (bundled into build/), the settings schema; and each app folder's package.json
      and build/{bootstrap,index,style}.js (APP_BUILD_INPUTS); no page or script loads them.
    Also rewrites api/translations/*.json and build/third-party-licenses.json compactly (same data),
    keeping only the translation domains of the core apps and the installed federated extensions.
    """
    build = output / "build"
    doomed = [*(output / name for name in BUILD_INPUTS if (output / name).exists()),
              *(output / app / name for app in APPS for name in APP_BUILD_INPUTS if (output / app / name).is_file()),
              *output.rglob("*.map"), *[p for ext in ("eot", "ttf", "svg") for p in build.glob(f"fa-*.{ext}")],
              *[p for p in build.glob("fa-*.woff") if p.with_suffix(".woff2").exists()]]
    schemas = build / "schemas"
    if (schemas / "all.json").exists():
        doomed += [p for p in schemas.rglob("*") if p.is_file() and p.parent != schemas]
    before = _total(output)
    for p in doomed:
        p.unlink()
    for d in [*sorted((d for d in schemas.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)),
              *(output / app / "build" for app in APPS)]:
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    big, small = output / "lab" / "favicon.ico", output / "static" / "favicons" / "favicon.ico"
    if big.exists() and small.exists() and big.stat().st_size > small.stat().st_size:
        shutil.copyfile(small, big)
    domains = CORE_DOMAINS | {_domain(p.parent.name) for p in (output / "extensions").rglob("package.json")
                              if p.parent.parent.name in ("extensions",) or p.parent.parent.name.startswith("@")}
    for path in (output / "api" / "translations").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if path.name != "all.json" and isinstance(data.get("data"), dict):
            data["data"] = {k: v for k, v in data["data"].items() if _domain(k) in domains}
            if path.stem == "zh_CN":
                fill_translations(data["data"])
        _write_compact(path, data)
    licenses = build / "third-party-licenses.json"
    if licenses.exists():
        _write_compact(licenses, json.loads(licenses.read_text(encoding="utf-8")))
    return before - _total(output)


#: strings the notebook app asks the `notebook` domain for, which the pack translates only under `jupyterlab`
BORROWED = ("No Kernel", "Download", "Table of Contents", "Close and Shut Down Notebook…", "More commands",
            "About %1", "Collapse %1 side panel", "Expand %1 side panel")


def fill_translations(data: dict) -> None:
    """Give every kept domain the BORROWED strings another domain translates.

    Strings the pack lacks, or that components write without any translator, are translated in the page
    by course-app.js (its ZH table): one hand-written table, not two."""
    for key in BORROWED:
        value = next((dom[key] for dom in data.values() if isinstance(dom, dict) and key in dom), None)
        for dom in data.values():
            if value is not None and isinstance(dom, dict):
                dom.setdefault(key, value)


def _domain(name: str) -> str:
    return name.replace("-", "_").lower()


def _write_compact(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _total(output: Path) -> int:
    return sum(p.stat().st_size for p in output.rglob("*") if p.is_file())


def finish(output: Path, *, storage_prefix: str, release: str, cache: Path) -> dict:
    """All post-build steps; returns what the preload step did (see preload.py)."""
    inject_storage_script(output, storage_prefix, release, cache)
    prune(output)
    return preload.inject(output)


def sizes(output: Path) -> dict:
    """Total bytes and file count of the output, and the bytes of the bundled Pyodide."""
    files = [p for p in output.rglob("*") if p.is_file()]
    pyo = output / "static" / "pyodide"
    return {"files": len(files), "total_bytes": sum(p.stat().st_size for p in files),
            "pyodide_bytes": sum(p.stat().st_size for p in pyo.rglob("*") if p.is_file()) if pyo.exists() else 0}
