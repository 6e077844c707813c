"""Stage a copy of the contents for the site: Colab banner, browser kernelspec, helper package config.

The chapter sources are never edited; everything here happens on a copy under .site-build/.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.parse
from pathlib import Path

from . import PACKAGE, render

BANNER_ID = "site-banner"
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}
SKIP_FILES = {"pyproject.toml"}   # content/pyproject.toml packages jaxcourse for pip (Colab), not for readers
NEEDS_JAX = "needs-jax"   # metadata.course.browser of a cell course-app.js does not run
BROWSER_KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}

STARTUP = '''\
# 站点构建时生成：Pyodide 内核启动时由 IPython 执行（PYTHONSTARTUP，见 lite/jupyter-lite.json）。
# 即使读者没先运行本章的设置格，导入 jax / numpy 失败时也显示中文提示。
# 离线站点的内核启动时已经把 jaxcourse 装进 site-packages（sitebuild/offline.py），这里从本文件所在的那份导入：
# 它在内存里，比从 /drive 逐个文件读快得多。
def _jaxcourse_startup():
    import os
    import sys
    # 离线站点的 sitecustomize 让内核启动期间的 import 不去 /drive 里找；启动到这里，撤掉它
    if getattr(sys.path_importer_cache.get("/drive"), "course_skip", False):
        del sys.path_importer_cache["/drive"]
    if "/drive" not in sys.path:
        sys.path.append("/drive")
    home = os.path.dirname(os.path.dirname(os.path.abspath(globals().get("__file__", "/drive/jaxcourse/_startup.py"))))
    sys.path.insert(0, home)
    try:
        from jaxcourse import browser
        browser.install()
    except Exception:
        pass
    finally:
        sys.path.remove(home)


_jaxcourse_startup()
del _jaxcourse_startup
'''


def colab_url(repo: str, branch: str, rel_path: str) -> str:
    """Colab link to a notebook at content/<rel_path> in the configured GitHub repository."""
    path = urllib.parse.quote(f"content/{rel_path}")
    return f"https://colab.research.google.com/github/{repo}/blob/{branch}/{path}"


def banner_source(url: str) -> str:
    """Markdown of the note put at the top of each chapter in the site."""
    return (
        f"**[🚀 在 Colab 中打开本章]({url})**\n\n"
        "> 🧪 这是浏览器里的运行版：下面保存的输出都来自真实的 JAX 0.12.0.1。"
        "标着「纯 Python · 可在浏览器里运行」的单元格可以直接运行；需要 JAX 的单元格不会运行，保存的输出保持原样，"
        "旁边会出现一行说明。你也可以新建单元格写纯 Python。"
        "想真正运行 JAX：点上面的 Colab 链接，或克隆仓库后按 README 运行 `./dev setup`。"
    )


def join_lines(nb: dict) -> dict:
    """Write every multi-line text of the notebook as one string, as JupyterLite needs it.

    nbformat stores sources and outputs as lists of lines; JupyterLite 0.8 shows a list-valued
    output as the lines joined by "," (jupyterlite#1105: `,JAX : 0.12.0.1` on every line but the
    first). Both forms are valid nbformat; the string is the one every front end reads right.
    Error tracebacks stay lists: that is their format, one entry per frame.
    """
    for cell in nb.get("cells", []):
        cell["source"] = render.joined(cell.get("source", ""))
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = render.joined(out["text"])
            for mime, value in out.get("data", {}).items():
                if not mime.endswith("json"):
                    out["data"][mime] = render.joined(value)
    return nb


def mark_jax_cells(nb: dict) -> dict:
    """Tag the course's code cells that need JAX (every code cell not tagged `lite`) for course-app.js,
    which shows a note beside their saved output instead of running them in the browser."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "lite" not in cell.get("metadata", {}).get("tags", []):
            cell.setdefault("metadata", {}).setdefault("course", {})["browser"] = NEEDS_JAX
    return nb


def stage_notebook(src: Path, dest: Path, rel: str, cfg: dict) -> None:
    """Copy one notebook, adding the Colab banner and the browser kernelspec, texts as strings,
    JAX cells marked."""
    nb = mark_jax_cells(join_lines(json.loads(src.read_text(encoding="utf-8"))))
    cells = [c for c in nb.get("cells", []) if c.get("id") != BANNER_ID]
    banner = {
        "cell_type": "markdown",
        "id": BANNER_ID,
        "metadata": {"editable": False, "deletable": False, "tags": [BANNER_ID]},
        "source": banner_source(colab_url(cfg["repository"], cfg["branch"], rel)),
    }
    nb["cells"] = [banner, *cells]
    if nb.get("nbformat", 4) == 4 and nb.get("nbformat_minor", 0) < 5:
        nb["nbformat_minor"] = 5          # cell ids need nbformat 4.5
    meta = nb.setdefault("metadata", {})
    meta["kernelspec"] = dict(BROWSER_KERNELSPEC)
    meta.setdefault("language_info", {"name": "python"})
    dest.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def first_printing_lite_cell(cells: list[dict]) -> tuple[int, str] | None:
    """(index, saved text) of the first `lite` cell after the setup cell (the first lite one) that has a saved
    printed output: the cell a newcomer is pointed to (landing page) and whose first run the bench and the browser
    tests time. None when there is none."""
    lite = [(i, c) for i, c in enumerate(cells)
            if c.get("cell_type") == "code" and "lite" in c.get("metadata", {}).get("tags", [])]
    for i, cell in lite[1:]:
        text = "".join("".join(o["text"]) if isinstance(o.get("text"), list) else o.get("text", "")
                       for o in cell.get("outputs", []) if o.get("output_type") == "stream").strip()
        if text:
            return i, text
    return None


def stage_contents(content: Path, dest: Path, cfg: dict) -> str:
    """Copy `content` to `dest` for the site; returns the release id (hash of the staged files)."""
    if dest.exists():
        shutil.rmtree(dest)
    digest = hashlib.sha256()
    for src in sorted(content.rglob("*")):
        rel = src.relative_to(content)
        if (any(part in SKIP_DIRS for part in rel.parts) or src.is_dir() or src.suffix == ".pyc"
                or rel.as_posix() in SKIP_FILES):
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".ipynb":
            stage_notebook(src, out, rel.as_posix(), cfg)
        else:
            shutil.copy2(src, out)
        digest.update(rel.as_posix().encode() + b"\0" + out.read_bytes() + b"\0")
    pkg = dest / PACKAGE
    if pkg.is_dir():
        (pkg / "_site.json").write_text(json.dumps(cfg, ensure_ascii=False) + "\n", encoding="utf-8")
        (pkg / "_startup.py").write_text(STARTUP, encoding="utf-8")
    return digest.hexdigest()[:12]


def unlinked_chapters(staged: Path, landing: str) -> list[str]:
    """Notebooks in the landing page's folder that the landing page does not link to."""
    page = staged / landing
    if not page.exists():
        return []
    text = urllib.parse.unquote("".join(
        "".join(c.get("source", "")) for c in json.loads(page.read_text(encoding="utf-8"))["cells"]
        if c.get("cell_type") == "markdown"))
    return sorted(p.name for p in page.parent.glob("*.ipynb")
                  if p.name != page.name and p.name not in text)
