"""Post-process the built site: landing redirect, storage-update script, no source maps, sizes."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

APPS = ("notebooks", "tree", "lab", "edit", "consoles", "repl")
SCRIPT = "course-storage.js"
SCRIPT_SRC = Path(__file__).with_name(SCRIPT)

REDIRECT = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>中文 JAX 课程</title>
<meta http-equiv="refresh" content="0; url={url}">
<script>location.replace({url_js} + location.hash);</script>
</head><body><p>正在打开 <a href="{url}">课程总目录</a>…</p></body></html>
"""


def landing_url(landing: str) -> str:
    """Relative URL of the landing notebook in the notebook reading UI."""
    return "notebooks/index.html?path=" + urllib.parse.quote(landing)


def write_redirect(output: Path, landing: str) -> None:
    """Make the site root open the landing notebook (JupyterLite's own index.html opens lab/)."""
    url = landing_url(landing)
    (output / "index.html").write_text(REDIRECT.format(url=url, url_js=json.dumps(url)), encoding="utf-8")


def inject_storage_script(output: Path, storage_prefix: str, release: str) -> None:
    """Copy the storage-update script next to the apps and load it first in each app page."""
    deployed = sorted(p.relative_to(output / "files").as_posix()
                      for p in (output / "files").rglob("*") if p.is_file())
    cfg = {"prefix": storage_prefix, "current": f"{storage_prefix}/{release}", "deployed": deployed}
    js = SCRIPT_SRC.read_text(encoding="utf-8").replace("/*CONFIG*/null", json.dumps(cfg, ensure_ascii=False))
    (output / SCRIPT).write_text(js, encoding="utf-8")
    for app in APPS:
        page = output / app / "index.html"
        if not page.exists():
            continue
        html = page.read_text(encoding="utf-8")
        tag = f'<script src="../{SCRIPT}"></script>'
        if tag not in html:
            html = html.replace("<head>", "<head>\n    " + tag, 1)
            page.write_text(html, encoding="utf-8")


def drop_sourcemaps(output: Path) -> int:
    """Delete any *.map left in the output (no_sourcemaps misses some); returns how many."""
    maps = list(output.rglob("*.map"))
    for p in maps:
        p.unlink()
    return len(maps)


def finish(output: Path, *, landing: str, storage_prefix: str, release: str) -> None:
    """All post-build steps."""
    write_redirect(output, landing)
    inject_storage_script(output, storage_prefix, release)
    drop_sourcemaps(output)


def sizes(output: Path) -> dict:
    """Total bytes and file count of the output, and the bytes of the bundled Pyodide."""
    files = [p for p in output.rglob("*") if p.is_file()]
    pyo = output / "static" / "pyodide"
    return {"files": len(files), "total_bytes": sum(p.stat().st_size for p in files),
            "pyodide_bytes": sum(p.stat().st_size for p in pyo.rglob("*") if p.is_file()) if pyo.exists() else 0}
