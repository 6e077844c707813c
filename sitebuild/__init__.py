"""Build the JupyterLite reading site: stage contents, bundle Pyodide offline, post-process the output."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def github_remote(root: Path = ROOT) -> str | None:
    """'owner/name' of the git remote `origin` when it is a GitHub URL (https or ssh), else None."""
    import re
    import subprocess

    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=root, capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.fullmatch(r"(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([\w.-]+/[\w.-]+?)(?:\.git)?/?", url)
    return m.group(1) if m else None


def project_config(env: dict | None = None, *, remote: str | None = None) -> dict:
    """The repository the site's Colab links point to: {"repository": "owner/name", "branch", "source"}.

    On GitHub Actions (GITHUB_REPOSITORY is set) the repository that builds the site wins, so a
    fork's site links to the fork; its branch too, when the run is on a branch push. Elsewhere the
    GitHub remote `origin` (passed as `remote` by the build), else [tool.jaxcourse] of pyproject.toml,
    says which repository a local build assumes; "source" names which one was used.
    """
    env = os.environ if env is None else env
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    cfg = data.get("tool", {}).get("jaxcourse", {})
    repo, branch, source = cfg.get("repository", ""), cfg.get("branch", "main"), "pyproject.toml [tool.jaxcourse]"
    if env.get("GITHUB_REPOSITORY"):
        repo, source = env["GITHUB_REPOSITORY"], "GITHUB_REPOSITORY"
        if env.get("GITHUB_REF_TYPE") == "branch" and not env.get("GITHUB_HEAD_REF") and env.get("GITHUB_REF_NAME"):
            branch = env["GITHUB_REF_NAME"]
    elif remote:
        repo, source = remote, "git remote origin"
    if repo.count("/") != 1:
        raise SystemExit(f"ERROR repository {repo!r} (from {source}) is not 'owner/name'; "
                         "set [tool.jaxcourse] repository in pyproject.toml to the GitHub repository of this course.")
    return {"repository": repo, "branch": branch, "source": source}
