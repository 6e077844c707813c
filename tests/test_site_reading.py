"""The static reading edition without a browser: every saved output shown as saved, every anchor lands.

Pages are written by sitebuild/reading.py from content/ into a temp folder (no JupyterLite build
needed: a stand-in root page carries the config block the landing page must keep).
"""

from __future__ import annotations

import collections
import functools
import json
import urllib.parse
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent

from coursetools.indexing import GENERIC_HEADINGS, heading_anchor, headings, read_notebook
from sitebuild import CONTENT, LANDING, reading, render  # noqa: E402

CFG = {"repository": "owner/repo", "branch": "main", "source": "test"}
STAND_IN = '<html><head><script id="jupyter-config-data" type="application/json">{"appName": "x"}</script></head></html>'


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("reading")
    (out / "index.html").write_text(STAND_IN, encoding="utf-8")
    written = reading.write_site(CONTENT, out, CFG)
    return out, written


def _soup(path: Path) -> BeautifulSoup:
    """The parsed page, parsed once for all tests (html.parser is pure Python: the 23 pages take ~20 s each pass).
    Tests only read it."""
    return _parsed(Path(path).resolve())


@functools.lru_cache(maxsize=None)
def _parsed(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _notebooks():
    return sorted(p.relative_to(CONTENT).as_posix() for p in CONTENT.rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts)


@pytest.mark.parametrize("rel", _notebooks())
def test_every_text_output_is_shown_exactly_as_saved(pages, rel):
    out, _ = pages
    nb = json.loads((CONTENT / rel).read_text(encoding="utf-8"))
    want = [render.output_text(o) for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    want = [t for t in want if t is not None]
    page = _soup(out / (rel[: -len(".ipynb")] + ".html"))
    # as a browser reads <pre>: the newline right after the start tag is not part of the text (html.parser keeps it)
    shown = [el.get_text().removeprefix("\n") if el.name == "pre" else el.get_text()
             for el in page.select('[data-output="text"]')]
    assert len(shown) == len(want), f"{rel}: {len(shown)} text outputs on the page, {len(want)} in the notebook"
    for i, (got, saved) in enumerate(zip(shown, want)):
        assert got == saved, f"{rel}: text output {i} differs:\n{got[:300]!r}\n!=\n{saved[:300]!r}"
    stray = [t for t in shown if any(line.startswith(",") for line in t.splitlines()[1:])]
    assert not stray, f"{rel}: lines starting with ',' (jupyterlite#1105 style): {stray[0][:200]!r}"


def test_heading_ids_are_the_anchors_the_notebooks_link_to(pages):
    out, written = pages
    for page in written:
        soup = _soup(out / page.html_path)
        every = collections.Counter(e["id"] for e in soup.select("[id]"))
        twice = sorted(i for i, n in every.items() if n > 1)
        assert not twice, f"{page.rel}: ids used more than once (a link would land on the first): {twice[:5]}"
        ids = {h["id"] for h in soup.select("h1[id],h2[id],h3[id],h4[id],h5[id],h6[id]")}
        for _, _, text in headings(read_notebook(CONTENT / page.rel)):
            if text in GENERIC_HEADINGS:   # 课程讲解 / 课程代码: one per section, id under the section's
                assert any(i.endswith("--" + heading_anchor(text)) for i in ids)
                continue
            assert heading_anchor(text) in ids, f"{page.rel}: heading {text!r} has no id {heading_anchor(text)!r}"


def test_every_internal_link_of_every_page_lands_on_a_page_and_an_id(pages):
    out, written = pages
    checked, ids_of = 0, {}
    for page in [*written, reading.Page(LANDING, "root")]:
        html_file = out / ("index.html" if page.title == "root" else page.html_path)
        soup = _soup(html_file)
        for a in soup.select("a[href]"):
            href = a["href"]
            if href.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, frag = href.partition("#")
            target = (html_file.parent / urllib.parse.unquote(path)).resolve() if path else html_file
            if "notebooks/index.html" in path:   # the run view: JupyterLite, not built here
                assert "?path=" in href
                continue
            assert target.exists(), f"{html_file.name}: link {href} goes to a missing page"
            if frag and target.suffix == ".html":
                if target not in ids_of:
                    ids_of[target] = {e["id"] for e in _soup(target).find_all(id=True)}
                assert urllib.parse.unquote(frag) in ids_of[target], f"{html_file.name}: link {href}: no id #{frag}"
            checked += 1
    assert checked > 100, f"only {checked} internal links checked"


def test_page_chrome_sidebar_pager_toc_and_run_links(pages):
    out, written = pages
    chapter = next(p for p in written if p.rel == "入门/01_JAX简介.ipynb")
    soup = _soup(out / chapter.html_path)
    parts = [p.get_text() for p in soup.select(".sidebar .part")]
    assert parts == list(reading.PARTS)
    assert soup.select_one('.sidebar a[aria-current="page"]').get_text() == chapter.title
    assert "00_" in soup.select_one(".pager a.prev")["href"] and "02_" in soup.select_one(".pager a.next")["href"]
    assert len(soup.select(".toc li")) >= 8
    assert soup.select_one(".page-actions a[href*='colab.research.google.com/github/owner/repo/blob/main/content/']")
    run = soup.select_one(".page-actions a[href^='../notebooks/index.html?path=']")["href"]
    assert urllib.parse.unquote(run).endswith("?path=入门/01_JAX简介.ipynb")
    lite = soup.select(".cell.code .cell-bar a.run")
    assert lite and all("#cell-" in a["href"] for a in lite)
    assert soup.find("html")["lang"] == "zh-CN" and soup.select_one("main[data-pagefind-body]")
    assert not soup.select("#cell-site-banner"), "the JupyterLab-only banner cell is on the reading page"
    # folded quiz answers are not indexed for search (a snippet would give them away)
    answers = soup.select("details.answer")
    assert answers and all(a.has_attr("data-pagefind-ignore") for a in answers)
    # maintainer cells are folded and stay out of the page's table of contents
    landing = _soup(out / next(p for p in written if p.rel == LANDING).html_path)
    assert landing.select("details.maintainer") and not [a for a in landing.select(".toc a") if "维护" in a.get_text()]


def test_the_front_door_says_what_this_is_and_offers_three_ways_in(pages):
    """The site root is not a copy of 入门 · 总目录: what the course is, for whom, read / lite / real JAX,
    and every chapter of both parts; known issues and maintenance stay on the index pages and README."""
    out, written = pages
    root = _soup(out / "index.html")
    assert root.select_one("script#jupyter-config-data"), "JupyterLite's apps read their config from the root page"
    assert not root.select_one("[data-pagefind-body]"), "the front door is not a course page for search"
    main = root.select_one("main")
    headings = [h.get_text() for h in main.select("h2")]
    assert headings[:3] == ["适合谁", "三种学法", "两部分"], headings
    assert not [h for h in headings if "维护" in h or "已知问题" in h or "自检" in h], headings
    assert not main.select("details.maintainer, .cell.code") and "正在逐章加入" not in main.get_text()
    hrefs = [urllib.parse.unquote(a["href"]) for a in main.select("a[href]")]
    # 1) read here  2) a lite cell of chapter 1 in the browser  3) Colab, or a clone of the configured repository
    assert "入门/01_JAX简介.html" in hrefs
    first = json.loads((CONTENT / "入门/01_JAX简介.ipynb").read_text(encoding="utf-8"))
    # the first lite cell that prints something (not the setup cell, which prints nothing when run)
    lite = [c for c in first["cells"] if "lite" in c.get("metadata", {}).get("tags", [])]
    printing = [c for c in lite[1:] if any(o.get("output_type") == "stream" for o in c.get("outputs", []))]
    assert f"notebooks/index.html?path=入门/01_JAX简介.ipynb#cell-{printing[0]['id']}" in hrefs
    assert f"notebooks/index.html?path=入门/01_JAX简介.ipynb#cell-{lite[0]['id']}" not in hrefs   # the setup cell
    assert any(h.startswith("https://colab.research.google.com/github/owner/repo/blob/main/content/入门/01_") for h in hrefs)
    assert "git clone https://github.com/owner/repo.git\ncd repo\n./dev setup" in main.select_one("pre").get_text()
    chapters = [p.html_path for p in written if p.chapter]
    assert len(chapters) >= 20 and all(c in hrefs for c in chapters), set(chapters) - set(hrefs)
    assert "https://github.com/owner/repo/blob/main/README.md" in hrefs
    assert root.select_one("h1").get("elementtiming") == reading.FIRST_TEXT and root.select_one("h1").get_text().startswith("中文 JAX 课程")


def test_links_math_images_and_maintainer_cells(tmp_path):
    links = render.Links("入门", "https://github.com/o/r/blob/main/", {"入门/02_x.ipynb", "进阶/01_y.ipynb"})
    assert links.rewrite("02_x.ipynb#2.1-节") == ("02_x.html#2.1-节", False)
    assert links.rewrite("../进阶/01_y.ipynb") == ("../进阶/01_y.html", False)
    assert links.rewrite("../../README.md#快速开始") == ("https://github.com/o/r/blob/main/README.md#快速开始", True)
    assert links.rewrite("../jaxcourse/checks.py")[0] == "https://github.com/o/r/blob/main/content/jaxcourse/checks.py"
    assert links.rewrite("#本节") == ("#本节", False)
    assert links.rewrite("https://jax.dev") == ("https://jax.dev", True)
    md = render.markdown_renderer(links)
    html = md.render("## 3.1 用 `jax.grad` 求 $f'(x)$\n\n见 [下一章](02_x.ipynb) 和 [JAX](https://jax.dev)。")
    assert 'id="3.1-用-jax.grad-求-f&#x27;(x)"' in html and "<math" in html and 'href="02_x.html"' in html
    assert 'target="_blank"' in html.split("https://jax.dev")[1].split(">")[0]
    # a line break inside a Chinese paragraph is no space; next to Latin text it still is
    assert md.render("表的每个元素\n都当成数组").strip() == "<p>表的每个元素都当成数组</p>"
    assert md.render("交给 XLA\n编译").strip() == "<p>交给 XLA\n编译</p>"
    images = render.ImageStore(tmp_path / "img")
    png = (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (640).to_bytes(4, "big") + (480).to_bytes(4, "big")
           + b"\x08\x02\x00\x00\x00")
    import base64
    out = {"output_type": "display_data", "metadata": {"image/png": {"width": 320, "height": 240}},
           "data": {"image/png": base64.b64encode(png).decode(), "text/plain": ["<Figure>"]}}
    tag = render.render_output(out, md, images, "../")
    assert 'width="320" height="240"' in tag and 'loading="lazy"' in tag and 'src="../img/' in tag
    assert len(list((tmp_path / "img").iterdir())) == 1
    cell = {"cell_type": "markdown", "id": "m", "metadata": {"tags": ["maintainer"]}, "source": "维护说明"}
    assert '<details class="maintainer"' in reading._cell_html(cell, md, {}, images, "../", "run")


def test_a_cell_folded_in_jupyterlab_is_folded_on_the_page_with_its_output_shown(tmp_path):
    md = render.markdown_renderer(render.Links("入门", "https://github.com/o/r/blob/main/", set()))
    images = render.ImageStore(tmp_path / "img")
    cell = {"cell_type": "code", "id": "p", "metadata": {"jupyter": {"source_hidden": True}}, "source": "probe()",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "结论：能复现\n"}]}
    page = BeautifulSoup(reading._cell_html(cell, md, {}, images, "../", "run"), "html.parser")
    folded = page.select_one("details.source-hidden")
    assert folded is not None and "probe" in folded.get_text()
    assert "结论：能复现" in page.select_one(".outputs").get_text() and not page.select_one(".outputs").find_parent("details")


def test_both_parts_are_one_course_landing_sidebar_and_pager_lead_into_进阶(pages):
    out, written = pages
    rels = [p.rel for p in written]
    assert "进阶/00_总目录.ipynb" in rels and rels.index("进阶/00_总目录.ipynb") > rels.index("入门/07_实战专题.ipynb")
    advanced_index = urllib.parse.quote("进阶/00_总目录.html")
    root = _soup(out / "index.html")   # the landing page: its sidebar and its text both lead to 进阶 00
    assert root.select_one(f'.sidebar a[href="{advanced_index}"]')
    assert root.select_one(f'main a[href="{advanced_index}"]')
    last = _soup(out / "入门/07_实战专题.html")
    assert last.select_one(".pager a.next")["href"] == "../" + advanced_index
    assert last.select_one(f'main a[href="../{advanced_index}"]')   # the chapter's last words point there too
    index = _soup(out / "进阶/00_总目录.html")
    assert index.select_one('.sidebar a[aria-current="page"]').get_text().startswith("进阶")
    assert "07_" in index.select_one(".pager a.prev")["href"]


def test_a_text_output_that_starts_with_a_newline_keeps_it():
    """HTML drops one newline right after <pre>: the renderer doubles a leading one, so the reader sees the blank line."""
    from markdown_it import MarkdownIt

    from sitebuild.render import render_output
    html_text = render_output({"output_type": "stream", "name": "stdout", "text": "\nx = 1\n"}, MarkdownIt(), None, "")
    assert ">\n\nx = 1\n</pre>" in html_text
    plain = render_output({"output_type": "execute_result", "data": {"text/plain": "y"}}, MarkdownIt(), None, "")
    assert plain == '<pre class="output text" data-output="text">y</pre>'
