"""The course's search index: Pagefind (extended build, which segments Chinese) over the static pages.

Runs at build time on the reading edition's pages only (<part>/*.html, the parts of reading.PARTS);
the index and Pagefind's search script land in pagefind/ at the site root. course-read.js loads them
the first time a reader uses the search box. Headings carry ids, so results link to the section.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .reading import PARTS

FOLDER = "pagefind"
#: Pagefind's ready-made search interfaces and highlighter: course-read.js draws its own results
#: (Chinese, small) with the search API in pagefind.js, so these ~420 KB are never loaded
UNUSED = ("pagefind-ui.js", "pagefind-ui.css", "pagefind-component-ui.js", "pagefind-component-ui.css",
          "pagefind-modular-ui.js", "pagefind-modular-ui.css", "pagefind-highlight.js")


def index(output: Path) -> dict:
    """Build the index into output/pagefind; returns {'pages': n, 'bytes': size of pagefind/}."""
    parts = [p for p in PARTS if (output / p).is_dir()]
    glob = "{" + ",".join(parts) + "}/*.html" if len(parts) > 1 else f"{parts[0]}/*.html"
    cmd = [sys.executable, "-m", "pagefind", "--site", str(output), "--glob", glob, "--output-subdir", FOLDER]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"ERROR pagefind failed (exit {proc.returncode}); its output is above. "
                         "TIP  ./dev setup site installs it (pagefind[extended] in pyproject.toml, extra `site`)")
    pages = len([p for part in parts for p in (output / part).glob("*.html")])
    if "Indexed 0 pages" in proc.stdout:
        raise SystemExit(f"ERROR pagefind indexed no page of {output}; do the pages carry data-pagefind-body?")
    folder = output / FOLDER
    for name in UNUSED:
        (folder / name).unlink(missing_ok=True)
    return {"pages": pages, "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())}
