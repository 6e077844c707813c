"""The static reading edition: one HTML page per notebook, the site's default view.

Every notebook under content/ becomes <part>/<name>.html beside JupyterLite's folders; the site root
index.html is the front door, written from landing.md (it keeps JupyterLite's jupyter-config-data block, which every app
reads from the root page). Pages need no script to read: a course sidebar with both parts, previous /
next chapter, an in-page table of contents, the saved outputs as saved; course-read.js only adds copy
buttons, the search box (Pagefind, built by search.py) and the phone menu. Maintainer-only cells
(tag `maintainer`) are folded away on reader pages.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from string import Template

from verify.cells import MAINTAINER_TAG
from coursemodel.contract import FOLDED_ANSWER, GENERIC_HEADINGS, PARTS

from . import FIRST_CHAPTER, render, stage

CSS = Path(__file__).with_name("reading.css")
#: the front door's text (markdown; $names are filled in by render_landing)
LANDING_TEXT = Path(__file__).with_name("landing.md")
SCRIPT = "course-read.js"
SITE_TITLE = "中文 JAX 课程"
H1 = re.compile(r"^# +(.+?)\s*$", re.M)


@dataclass
class Page:
    """One notebook of the course and where its page goes."""

    rel: str          # path under content/, e.g. 入门/01_JAX简介.ipynb
    title: str        # its first level-1 heading

    @property
    def html_path(self) -> str:
        return self.rel[: -len(".ipynb")] + ".html"

    @property
    def chapter(self) -> bool:
        """Numbered pages (00_…, 01_…) form the previous/next chain; navigation pages do not."""
        return re.match(r"\d\d_", Path(self.rel).name) is not None


def course_pages(content: Path) -> list[Page]:
    """The notebooks of each part in reading order: numbered chapters, then the navigation pages."""
    pages = []
    for part in PARTS:
        folder = content / part
        if not folder.is_dir():
            continue
        files = sorted(folder.glob("*.ipynb"), key=lambda p: (not re.match(r"\d\d_", p.name), p.name))
        for path in files:
            nb = json.loads(path.read_text(encoding="utf-8"))
            pages.append(Page(f"{part}/{path.name}", _title(nb, path.stem)))
    return pages


def _title(nb: dict, fallback: str) -> str:
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown" and (m := H1.search(render.joined(cell.get("source")))):
            return m.group(1).replace("`", "").replace("**", "")
    return fallback


def _cell_html(cell: dict, md, env: dict, images, root: str, run_url: str, setup: bool = False) -> str:
    tags = cell.get("metadata", {}).get("tags", [])
    ident = html.escape(str(cell.get("id", "")), quote=True)
    source = render.joined(cell.get("source"))
    if cell.get("cell_type") == "markdown":
        # a maintainer cell's headings stay out of the page's table of contents (its own env)
        rendered = md.render(source, {} if MAINTAINER_TAG in tags else env)
        # folded quiz answers stay out of the search index: a result snippet would give them away
        rendered = FOLDED_ANSWER.sub(
            lambda m: m.group(0).replace("<details>", '<details class="answer" data-pagefind-ignore>', 1), rendered)
        body = f'<div class="cell md" id="cell-{ident}">{rendered}</div>'
    elif cell.get("cell_type") == "code":
        bar = ""
        if "lite" in tags:
            bar = (f'<div class="cell-bar" data-pagefind-ignore><span class="badge">纯 Python · 可在浏览器里运行</span>'
                   f'<a class="run" href="{html.escape(run_url, quote=True)}#cell-{ident}">在浏览器里运行</a></div>')
        elif "raises-exception" in tags:
            bar = '<div class="cell-bar" data-pagefind-ignore><span class="badge warn">预期报错</span></div>'
        outs = "".join(render.render_output(o, md, images, root) for o in cell.get("outputs", []))
        outs = f'<div class="outputs">{outs}</div>' if outs else ""
        code = render.render_code(source)
        if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):  # folded in JupyterLab: folded here too
            code = f'<details class="source-hidden"><summary>显示代码</summary>{code}</details>'
        body = f'<div class="cell code" id="cell-{ident}">{bar}{code}{outs}</div>'
    else:
        return ""
    if MAINTAINER_TAG in tags:
        return (f'<details class="maintainer" data-pagefind-ignore><summary>维护者说明（读者可跳过）</summary>'
                f"{body}</details>")
    if setup:   # the same few lines in every chapter: folded, one click away
        return (f'<details class="setup" data-pagefind-ignore><summary>准备单元格：导入课程辅助包 jaxcourse'
                f"（每章相同，点开查看）</summary>{body}</details>")
    return body


def _sidebar(pages: list[Page], current: Page | None, root: str) -> str:
    out = ['<nav class="sidebar" id="course-nav" aria-label="课程目录" data-pagefind-ignore>'
           '<label for="nav-toggle" class="close" role="button" tabindex="0" aria-label="关闭课程目录">关闭 ×</label>']
    for part in PARTS:
        items = [p for p in pages if p.rel.startswith(part + "/")]
        out.append(f'<p class="part">{part}</p><ul>')
        if not items:
            out.append('<li class="soon">编写中</li>')
        for p in items:
            here = ' aria-current="page"' if p is current else ""
            out.append(f'<li><a href="{_url(root, p.html_path)}"{here}>{html.escape(p.title)}</a></li>')
        out.append("</ul>")
    out.append("</nav>")
    return "".join(out)


def _url(root: str, path: str) -> str:
    return html.escape(root + urllib.parse.quote(path), quote=True)


def _pager(pages: list[Page], current: Page, root: str) -> str:
    chain = [p for p in pages if p.chapter]
    if current not in chain:
        return ""
    i = chain.index(current)
    links = []
    if i > 0:
        links.append(f'<a class="prev" rel="prev" href="{_url(root, chain[i - 1].html_path)}">'
                     f'<small>上一章</small>{html.escape(chain[i - 1].title)}</a>')
    if i + 1 < len(chain):
        links.append(f'<a class="next" rel="next" href="{_url(root, chain[i + 1].html_path)}">'
                     f'<small>下一章</small>{html.escape(chain[i + 1].title)}</a>')
    return f'<nav class="pager" aria-label="翻页" data-pagefind-ignore>{"".join(links)}</nav>' if links else ""


def _toc(headings: list[tuple[int, str, str]]) -> str:
    items = [f'<li class="h{level}"><a href="#{html.escape(ident, quote=True)}">{html.escape(text)}</a></li>'
             for level, text, ident in headings if level in (2, 3) and text not in GENERIC_HEADINGS]
    if not items:
        return ""
    return ('<aside class="toc" aria-label="本页目录" data-pagefind-ignore><details open><summary>本页目录</summary>'
            f'<ul>{"".join(items)}</ul></details></aside>')


def render_page(page: Page, nb: dict, pages: list[Page], *, root: str, links_cfg: dict,
                images: render.ImageStore, extra_head: str = "", indexed: bool = True) -> str:
    """The whole HTML page of one notebook.

    root: relative URL of the site root from this page ("../" for 入门/x.html)."""
    part_dir = page.rel.rsplit("/", 1)[0]
    links = render.Links(part_dir, links_cfg["github"], {p.rel for p in pages})
    md = render.markdown_renderer(links)
    env: dict = {}
    run_url = f"{root}notebooks/index.html?path={urllib.parse.quote(page.rel)}"
    shown = [cell for cell in nb.get("cells", []) if cell.get("id") != stage.BANNER_ID]
    first_code = next((c for c in shown if c.get("cell_type") == "code"), None)
    setup = first_code if first_code and "import jaxcourse" in render.joined(first_code.get("source")) else None
    cells = [_cell_html(cell, md, env, images, root, run_url, setup=cell is setup) for cell in shown]
    has_code = any(c.get("cell_type") == "code" for c in nb.get("cells", []))
    colab = stage.colab_url(links_cfg["repository"], links_cfg["branch"], page.rel)
    actions = ""
    if has_code:
        actions = ('<div class="page-actions" data-pagefind-ignore>'
                   f'<a class="button" href="{html.escape(run_url, quote=True)}">在浏览器里运行</a>'
                   f'<a class="button" href="{html.escape(colab, quote=True)}" target="_blank" rel="noopener">'
                   "在 Colab 中打开</a>"
                   '<span class="note">下面的输出都来自真实的 JAX 0.12.0.1；浏览器里只能运行标了「纯 Python」的单元格。'
                   "</span></div>")
    article = f'{actions}<article class="notebook">\n{mark_first("".join(cells))}\n</article>\n'
    return _shell(page.title, root, article + _pager(pages, page, root), _sidebar(pages, page, root),
                  toc=_toc(env.get("headings", [])), extra_head=extra_head, indexed=indexed)


def _shell(title: str, root: str, main: str, sidebar: str, *, toc: str = "", extra_head: str = "",
           indexed: bool = True) -> str:
    """The page around `main`: header with search, the course sidebar, the table of contents."""
    body_attr = " data-pagefind-body" if indexed else ""
    css = CSS.read_text(encoding="utf-8") + render.pygments_css()
    head_title = SITE_TITLE if title == SITE_TITLE else f"{html.escape(title)} · {SITE_TITLE}"
    return f"""<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{head_title}</title>
<meta name="color-scheme" content="light dark">
<link rel="icon" href="{root}static/favicons/favicon.ico">
<style>
{css}</style>
<script defer src="{root}{SCRIPT}" data-root="{root}"></script>
{extra_head}</head>
<body>
<a class="skip" href="#main">跳到正文</a>
<input type="checkbox" id="nav-toggle" class="nav-toggle" aria-hidden="true" tabindex="-1">
<header class="top" data-pagefind-ignore>
<label for="nav-toggle" class="menu" title="课程目录" aria-label="课程目录" role="button" tabindex="0">☰</label>
<a class="brand" href="{root}index.html">{SITE_TITLE}</a>
<div class="search" role="search"><input id="search" type="search" placeholder="搜索课程(中文或 API 名)" aria-label="搜索课程" autocomplete="off"><div id="search-results" class="search-results" hidden></div></div>
</header>
<div class="layout">
{sidebar}
{toc}
<main id="main"{body_attr}>
{main}</main>
</div>
</body>
</html>
"""


#: Element Timing names (Chromium reports when each was painted); tools/site.py bench reads them
FIRST_TEXT, FIRST_OUTPUT = "course-first-text", "course-first-output"


def mark_first(article: str) -> str:
    """Tag the page's title and first saved output for the Element Timing API."""
    article = re.sub(r"<h1 ", f'<h1 elementtiming="{FIRST_TEXT}" ', article, count=1)
    return re.sub(r'(<(?:pre|div) class="output[^"]*" )(data-output=)', rf'\1elementtiming="{FIRST_OUTPUT}" \2',
                  article, count=1)


def config_block(jupyterlite_index: str) -> str:
    """JupyterLite's <script id="jupyter-config-data"> from its root index.html (the apps read it there)."""
    m = re.search(r'<script id="jupyter-config-data".*?</script>', jupyterlite_index, re.S)
    if not m:
        raise SystemExit("ERROR JupyterLite's index.html has no jupyter-config-data block; "
                         "update sitebuild/reading.py for this JupyterLite version")
    return m.group(0) + "\n"


def render_landing(pages: list[Page], content: Path, links_cfg: dict, *, extra_head: str = "") -> str:
    """The site root: what the course is, for whom, three ways in, and both parts' chapters."""
    links = render.Links("", links_cfg["github"], {p.rel for p in pages})
    repo = links_cfg["repository"]
    first = json.loads((content / FIRST_CHAPTER).read_text(encoding="utf-8"))
    found = stage.first_printing_lite_cell(first.get("cells", []))   # not the setup cell: it prints nothing
    lite = first["cells"][found[0]].get("id") if found else None
    lite_url = f"notebooks/index.html?path={urllib.parse.quote(FIRST_CHAPTER)}" + (f"#cell-{lite}" if lite else "")
    text = Template(LANDING_TEXT.read_text(encoding="utf-8")).substitute(
        lite_url=html.escape(lite_url, quote=True), colab_url=stage.colab_url(repo, links_cfg["branch"], FIRST_CHAPTER),
        clone_url=f"https://github.com/{repo}.git", clone_dir=repo.split("/", 1)[1], parts=_parts_markdown(pages, content))
    # the lite link is a site URL, not a notebook or repository path: keep it as it is
    text = re.sub(r"\[([^\]]+)\]\((notebooks/[^)]+)\)", r'<a href="\2">\1</a>', text)
    body = mark_first(render.markdown_renderer(links).render(text, {}))
    article = f'<article class="notebook landing"><div class="cell md">\n{body}</div></article>\n'
    return _shell(SITE_TITLE, "", article, _sidebar(pages, None, ""), extra_head=extra_head, indexed=False)


def _parts_markdown(pages: list[Page], content: Path) -> str:
    """One list per part: each chapter's link and, from its metadata, what it covers."""
    out = []
    for part in PARTS:
        chapters = [p for p in pages if p.rel.startswith(part + "/") and p.chapter]
        if not chapters:
            continue
        numbers = [Path(p.rel).name[:2] for p in chapters]
        out.append(f"### {part}（第 {int(numbers[0])}–{int(numbers[-1])} 章）\n")
        for p in chapters:
            topics = json.loads((content / p.rel).read_text(encoding="utf-8")).get(
                "metadata", {}).get("course", {}).get("topics", "")
            out.append(f"- [{p.title}]({p.rel})" + (f"：{topics}" if topics else ""))
        out.append("")
    return "\n".join(out)


def write_site(content: Path, output: Path, cfg: dict) -> list[Page]:
    """Write every page, the root landing page and the script; returns the pages."""
    pages = course_pages(content)
    links_cfg = dict(cfg, github=f"https://github.com/{cfg['repository']}/blob/{cfg['branch']}/")
    images = render.ImageStore(output / "img")
    root_config = config_block((output / "index.html").read_text(encoding="utf-8"))
    for page in pages:
        nb = json.loads((content / page.rel).read_text(encoding="utf-8"))
        depth = page.rel.count("/")
        text = render_page(page, nb, pages, root="../" * depth, links_cfg=links_cfg, images=images)
        _write(output / page.html_path, text)
    _write(output / "index.html", render_landing(pages, content, links_cfg, extra_head=root_config))
    (output / SCRIPT).write_text(Path(__file__).with_name(SCRIPT).read_text(encoding="utf-8"), encoding="utf-8")
    icon = output / "static" / "favicons" / "favicon.ico"
    if icon.exists():   # browsers ask for /favicon.ico on their own
        (output / "favicon.ico").write_bytes(icon.read_bytes())
    return pages


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
