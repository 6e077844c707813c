"""Preload hints: the scripts the reading page needs before a chapter's first saved output.

The notebook page discovers its scripts one step at a time (bundle, then config, then the core
bundle, then the chunks the notebook widget asks for once the file has arrived), so the browser
sits idle between steps. `preload.txt` lists those scripts in load order; the build puts a
`<link rel="preload" as="script">` for each one into notebooks/index.html, after hints for the config
module and the config files it reads (CONFIG_FILES), so they all start at once.

The list depends on the JupyterLite build (chunk names carry hashes). The browser test fails when a
script loaded before the first output is missing from it; re-record it then with
    .venv/bin/python tools/site.py preload
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

LIST = Path(__file__).with_name("preload.txt")
PAGE = "notebooks/index.html"
MARK = "<!-- course preload -->"
LINK = re.compile(r'\s*<link rel="(?:module)?preload"[^>]* data-course-preload>')
#: what JupyterLite's config-utils.js reads before the app can start: its own module and, for the app
#: folder and the site root, index.html, jupyter-lite.json and jupyter-lite.ipynb (via plain fetch()).
#: Without these hints they queue behind the scripts below and hold up the start by about 0.5 s.
CONFIG_FILES = ("jupyter-lite.json", "index.html", "jupyter-lite.ipynb")
IMPORT = re.compile(r"import\(\s*'(\.\./[^']+\.js[^']*)'")


def wanted(urls: list[str], base: str) -> list[str]:
    """Site-relative paths of the scripts among resource-timing URLs, in order.

    Pyodide itself is left out: it loads when the kernel starts, never before the first output.
    """
    out = []
    for url in urls:
        path = urllib.parse.urlsplit(url).path
        rel = url[len(base):] if url.startswith(base) else None
        if rel is None or "/static/pyodide/" in path:
            continue
        if path.endswith(".js") and rel not in out:
            out.append(rel)
    return out


def read_list() -> list[str]:
    """The recorded paths (comments and blank lines skipped)."""
    if not LIST.exists():
        return []
    lines = (line.strip() for line in LIST.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def inject(output: Path) -> dict:
    """Add the preload links to notebooks/index.html; returns {'injected': n, 'missing': [paths]}."""
    page = Path(output) / PAGE
    paths = read_list()
    if not page.exists():
        return {"injected": 0, "missing": []}
    html = strip(page.read_text(encoding="utf-8"))
    anchor = '<script id="jupyter-config-data"'
    if anchor not in html:
        raise SystemExit(f"ERROR {page} has no jupyter-config-data block; "
                         "update sitebuild/preload.py for this JupyterLite version")
    exists = [p for p in paths if (Path(output) / urllib.parse.unquote(p.split("?")[0])).is_file()]
    missing = [p for p in paths if p not in exists]
    present = [p for p in exists if not referenced(html, p)]
    links = "".join(f'<link rel="modulepreload" href="{m}" data-course-preload>\n    '
                    for m in IMPORT.findall(html))
    links += "".join(f'<link rel="preload" as="fetch" crossorigin="anonymous" href="{d}{name}" '
                     'data-course-preload>\n    '
                     for d, folder in (("./", page.parent), ("../", page.parent.parent))
                     for name in CONFIG_FILES if (folder / name).is_file())
    # low priority: the quick preview's notebook download (high priority) goes first; on a slow link
    # that is the difference between reading after ~1.6 s and after ~4.4 s (tools/site.py bench)
    links += "".join(f'<link rel="preload" as="script" fetchpriority="low" href="../{p}" data-course-preload>\n    '
                     for p in present)
    page.write_text(html.replace(anchor, f"{MARK}\n    {links}{anchor}", 1), encoding="utf-8")
    return {"injected": len(present), "missing": missing}


def referenced(html: str, path: str) -> bool:
    """True when the page itself names the script (its own preload of the bundle, its config import):
    those start at once already, and the config module would need modulepreload, not preload."""
    return path.split("?")[0].rsplit("/", 1)[-1] in html


def uncovered(urls: list[str], base: str, html: str) -> list[str]:
    """Scripts the page loaded (per resource timing) that neither the preload list nor the page names."""
    listed = set(read_list())
    return [p for p in wanted(urls, base) if p not in listed and not referenced(strip(html), p)]


def strip(html: str) -> str:
    """The page without the course's preload links."""
    return LINK.sub("", html).replace(MARK + "\n    ", "").replace(MARK, "")


def serve_page(page, html: str) -> None:
    """Make `page` get `html` instead of the built notebooks/index.html."""
    page.route(lambda url: urllib.parse.urlsplit(url).path == "/" + PAGE,
               lambda r: r.fulfill(body=html, content_type="text/html"))


def record(output: Path, chapter: str, exe: str) -> list[str]:
    """Open `chapter` in a cold headless chromium (preloads stripped) and list the scripts it loaded
    before the first saved output; written to preload.txt atomically."""
    from playwright.sync_api import sync_playwright

    from . import browser
    from .serve import running

    index = browser.first_output_cell(Path(output) / "files" / chapter)
    page_html = strip((Path(output) / PAGE).read_text(encoding="utf-8"))
    with running(output) as base:
        with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
            ctx = browser.launch(pw, profile, exe)
            page = ctx.new_page()
            serve_page(page, page_html)
            browser.time_first_output(page, browser.chapter_url(base, chapter), index, 60_000)
            urls = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
            ctx.close()
    paths = wanted(urls, base)
    head = (f"# scripts {PAGE} loads before the first saved output of {chapter}, in load order;\n"
            f"# recorded {time.strftime('%Y-%m-%d')} by: .venv/bin/python tools/site.py preload\n")
    tmp = LIST.with_name(LIST.name + ".tmp")
    tmp.write_text(head + "".join(p + "\n" for p in paths), encoding="utf-8")
    os.replace(tmp, LIST)
    print(f"* recorded {len(paths)} scripts into {LIST}", file=sys.stderr)
    return paths
