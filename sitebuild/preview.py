"""Quick preview: the chapter's text and saved outputs, drawn by a small script while JupyterLab starts.

course-preview.js renders the notebook (the reader's saved copy if there is one, else the deployed file)
into a read-only layer, and removes it once JupyterLab shows the same notebook. Markdown goes through
marked, the library JupyterLab itself uses, fetched once from npm into the build cache. Only the reading
app's page (notebooks/) gets it; see README 「启动速度」.
"""

from __future__ import annotations

import re
import shutil
import tarfile
from pathlib import Path

from . import npm

MARKED_VERSION = "18.3.0"
SCRIPT = "course-preview.js"
MARKED = "course-marked.js"
STYLE = Path(__file__).with_name("course-preview.css")
SOURCE_MAP = re.compile(r"\n//# sourceMappingURL=\S+\s*$")


def fetch_marked(cache: Path) -> Path:
    """marked's npm tarball, downloaded into the build cache the first time."""
    return npm.pack(cache, "marked", MARKED_VERSION, "the reading site's quick preview")


def install(output: Path, cache: Path) -> None:
    """Copy the preview script and marked (its license header kept, no source map) to the site root."""
    tgz = fetch_marked(cache)
    with tarfile.open(tgz) as tar:
        js = tar.extractfile("package/lib/marked.umd.js").read().decode("utf-8")
    if "MIT License" not in js[:400]:
        raise SystemExit(f"ERROR marked {MARKED_VERSION}'s marked.umd.js lost its license header; "
                         "check sitebuild/preview.py against this version")
    (output / MARKED).write_text(SOURCE_MAP.sub("\n", js), encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name(SCRIPT), output / SCRIPT)


def tags() -> str:
    """What goes first into the reading page's <head>: the notebook download starts before anything else."""
    return f'<script src="../{SCRIPT}"></script>\n    <link rel="preload" as="script" href="../{MARKED}">'


def style() -> str:
    """The preview's CSS, inlined just before </head> (kept out of the first 1024 bytes, where
    browsers look for <meta charset>)."""
    return f'<style id="course-preview-style">\n{STYLE.read_text(encoding="utf-8")}    </style>\n  '
