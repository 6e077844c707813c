"""Build the JupyterLite reading site: stage contents, bundle Pyodide offline, post-process the output."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
LITE_DIR = ROOT / "lite"
OUTPUT = ROOT / "_output"
WORK = ROOT / ".site-build"      # staged contents and lite dir (git-ignored, rebuilt each time)
CACHE = ROOT / ".site-cache"     # npm / PyPI downloads (git-ignored, kept between builds)

#: the page the site opens on, relative to the contents root
LANDING = "入门/00_总目录.ipynb"
#: the first chapter: its first saved output is the site's load-time figure (see preload.py)
FIRST_CHAPTER = "入门/01_JAX简介.ipynb"
#: the helper package the notebooks import; it must land at the site root
PACKAGE = "jaxcourse"


def project_config() -> dict:
    """Read [tool.jaxcourse] from pyproject.toml (repository = "owner/name", branch)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    cfg = data.get("tool", {}).get("jaxcourse", {})
    repo = cfg.get("repository", "")
    if repo.count("/") != 1:
        raise SystemExit(f"ERROR pyproject.toml [tool.jaxcourse] repository = {repo!r} is not 'owner/name'; "
                         "set it to the GitHub repository of this course.")
    return {"repository": repo, "branch": cfg.get("branch", "main")}
