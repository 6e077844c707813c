"""Post-process the built site: landing redirect, storage-update script, no source maps, sizes."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path

APPS = ("notebooks", "tree", "lab", "edit", "consoles", "repl")
SCRIPT = "course-storage.js"
SCRIPT_SRC = Path(__file__).with_name(SCRIPT)

REDIRECT = """<meta http-equiv="refresh" content="0; url={url}">
    <script>location.replace({url_js} + location.hash);</script>
    <title>中文 JAX 课程</title>"""


def landing_url(landing: str) -> str:
    """Relative URL of the landing notebook in the notebook reading UI."""
    return "notebooks/index.html?path=" + urllib.parse.quote(landing)


def write_redirect(output: Path, landing: str) -> None:
    """Make the site root open the landing notebook (JupyterLite's own index.html opens lab/).

    The page keeps its jupyter-config-data block: every app reads the root page's config.
    """
    url = landing_url(landing)
    page = output / "index.html"
    html = page.read_text(encoding="utf-8")
    if "<head>" not in html or "jupyter-config-data" not in html:
        raise SystemExit(f"ERROR {page} has no <head> / jupyter-config-data; "
                         "update tools/sitebuild/post.py for this JupyterLite version")
    html = html.replace("<head>", "<head>\n    " + REDIRECT.format(url=url, url_js=json.dumps(url)), 1)
    page.write_text(html, encoding="utf-8")


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
        if tag in html:
            continue
        if "await import(" not in html or "<head>" not in html:
            raise SystemExit(f"ERROR {page} does not look like a JupyterLite 0.8 app page; "
                             "update tools/sitebuild/post.py for this JupyterLite version")
        html = html.replace("<head>", "<head>\n    " + tag, 1)
        # start the app only after the storage script has finished (it waits at most 3 s)
        html = html.replace("await import(", "await (window.courseStorageReady || null);\n        await import(", 1)
        page.write_text(html, encoding="utf-8")


def prune(output: Path) -> int:
    """Delete source maps and the legacy icon-font formats no current browser loads; returns bytes freed.

    Font Awesome's CSS lists woff2 before eot/ttf/svg, so browsers never request the others.
    """
    doomed = [*output.rglob("*.map"), *[p for ext in ("eot", "ttf", "svg")
                                        for p in (output / "build").glob(f"fa-*.{ext}")]]
    freed = sum(p.stat().st_size for p in doomed)
    for p in doomed:
        p.unlink()
    big, small = output / "lab" / "favicon.ico", output / "static" / "favicons" / "favicon.ico"
    if big.exists() and small.exists() and big.stat().st_size > small.stat().st_size:
        freed += big.stat().st_size - small.stat().st_size   # 310 KB multi-size icon → the 32 KB one
        shutil.copyfile(small, big)
    return freed


def finish(output: Path, *, landing: str, storage_prefix: str, release: str) -> None:
    """All post-build steps."""
    write_redirect(output, landing)
    inject_storage_script(output, storage_prefix, release)
    prune(output)


def sizes(output: Path) -> dict:
    """Total bytes and file count of the output, and the bytes of the bundled Pyodide."""
    files = [p for p in output.rglob("*") if p.is_file()]
    pyo = output / "static" / "pyodide"
    return {"files": len(files), "total_bytes": sum(p.stat().st_size for p in files),
            "pyodide_bytes": sum(p.stat().st_size for p in pyo.rglob("*") if p.is_file()) if pyo.exists() else 0}
