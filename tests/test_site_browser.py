"""The reading site in a real browser: Playwright (PyPI) driving Debian's chromium against 127.0.0.1.

Runs against content/ when 入门/00_总目录 and 01_JAX简介 exist there, else against the demo course of
sitebuild/demo.py. Screenshots go to test-artifacts/site/. Without chromium the test is skipped,
unless VERIFY_REQUIRE_BROWSER=1 (as in .ci/run), where it fails.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parent.parent

from sitebuild import FIRST_CHAPTER, LANDING, browser as sitebrowser, post, preload  # noqa: E402
from sitebuild.build import build  # noqa: E402
from sitefixtures import ARTIFACTS, _code_cells, _tags, _text, browser, built_site, site  # noqa: E402,F401
from verify.compare import numbers_close, tolerance_for  # noqa: E402

pytestmark = pytest.mark.browser
CHAPTER = FIRST_CHAPTER
FRIENDLY = "浏览器里的 Python\uff08Pyodide\uff09没有"


def _cell(page, index: int):
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.scroll_into_view_if_needed(timeout=20_000)
    return cell


def _run(page, index: int):
    cell = _cell(page, index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    return cell


def test_site_in_browser(site, browser):
    """Landing, Chinese UI, saved outputs without a kernel, friendly JAX message, lite cell, links."""
    base, ctx = site["base"], browser["ctx"]
    staged = site["output"] / "files"
    cells = _code_cells(staged / CHAPTER)

    # 0. the published folder holds no build inputs of the JupyterLite app (the app below still starts)
    from sitebuild.post import APP_BUILD_INPUTS, APPS, BUILD_INPUTS
    left = [name for name in BUILD_INPUTS if (site["output"] / name).exists()]
    left += [f"{app}/{name}" for app in APPS for name in APP_BUILD_INPUTS if (site["output"] / app / name).exists()]
    assert not left, f"build inputs published with the site: {left}"
    # 1. landing page: the site root is the static front door (sitebuild/landing.md), read without JupyterLab
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(base)
    page.locator("main .notebook h1").first.wait_for(timeout=30_000)
    print(f"\nlanding: static page's title after {time.perf_counter() - t0:.2f} s")
    scripts = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    assert not [u for u in scripts if "/build/" in u or "/static/pyodide/" in u], "reading loaded JupyterLab or Pyodide"
    page.screenshot(path=ARTIFACTS / "01_landing.png")

    # 2. a link on the landing page to a chapter opens its static page in the same tab; the page's
    #    「在浏览器里运行」 opens the same notebook in JupyterLab, whose menus are Chinese
    link = page.locator("main .notebook a[href*='01_']").first
    if not link.count():
        link = page.locator("main .notebook a[href$='.html']").first
    marker = urllib.parse.unquote(link.get_attribute("href")).split("/")[-1].split("#")[0].removesuffix(".html")
    link.click()
    page.wait_for_url(lambda u: marker in urllib.parse.unquote(u), timeout=20_000)
    assert [p for p in ctx.pages if p.url != "about:blank"] == [page], "the chapter link opened a new tab"
    page.locator("main .notebook h1").first.wait_for(timeout=20_000)
    page.screenshot(path=ARTIFACTS / "02_link_opened.png")
    page.locator(".page-actions a", has_text="在浏览器里运行").click()
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    assert marker in urllib.parse.unquote(page.url)
    menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    assert "文件" in menus and "运行" in menus and "File" not in menus, f"menu bar is not Chinese: {menus}"
    logo = "document.querySelector('a#jp-NotebookLogo, #jp-NotebookLogo a')"
    try:   # course-app.js rewrites the logo once the notebook's context is ready, which can trail the first cell
        page.wait_for_function(f"() => {{ const a = {logo}; return a && a.target === '_self'; }}", timeout=20_000)
    except PlaywrightTimeout:
        pass   # the assert below says what the logo still points at
    back = page.evaluate(f"() => {{ const a = {logo}; return a ? [a.getAttribute('href'), a.target] : null; }}")
    assert back and urllib.parse.unquote(back[0]).endswith(marker + ".html") and back[1] == "_self", (
        f"the logo does not lead back to the reading page: {back}")
    page.close()

    # 3. 01_JAX简介 shows its saved outputs with no kernel run (cold cache: fresh page and profile)
    saved = [c for c in cells if _text(c)]
    assert saved, f"{CHAPTER} has no saved text outputs to check"
    errors = [c for c in cells if any(o["output_type"] == "error" for o in c.get("outputs", []))]
    for p in ctx.pages:   # measured alone, in a browser of its own
        p.close()
    page = browser["fresh"]().new_page()
    t_saved, first = sitebrowser.time_first_output(page, sitebrowser.chapter_url(base, CHAPTER), saved[0]["index"])
    loaded = page.evaluate("""() => performance.getEntriesByType('resource').concat(
        performance.getEntriesByType('navigation')).map(e => [e.name, e.encodedBodySize])""")
    app = sum(n for u, n in loaded if "/static/pyodide/" not in u)
    kernel = sum(n for u, n in loaded if "/static/pyodide/" in u)
    print(f"01_JAX简介: the reading UI shows the first saved output after {t_saved:.2f} s "
          "(the quick preview shows it earlier: test_quick_preview); "
          f"downloaded by then: {app / 1e6:.1f} MB for the page "
          f"(+ {kernel / 1e6:.1f} MB of Pyodide; the kernel starts once the notebook shows)")
    # every script loaded before the first output was preloaded (a few small late ones may vary by timing)
    html = (site["output"] / preload.PAGE).read_text(encoding="utf-8")
    late = preload.uncovered([u for u, _ in loaded], base, html)
    late_bytes = sum(n for u, n in loaded if u[len(base):] in late)
    print(f"preload: {len(preload.read_list())} listed; loaded before the first output but not preloaded: "
          f"{len(late)} scripts, {late_bytes / 1e3:.0f} KB {late[:3]}")
    assert late_bytes <= 100_000, (
        f"{len(late)} scripts ({late_bytes / 1e3:.0f} KB) loaded before the first output are not in "
        f"sitebuild/preload.txt (JupyterLite changed?); re-record: .venv/bin/python tools/site.py preload")
    assert _text(saved[0]).splitlines()[0] in first.inner_text()
    # a multi-line output shows every line as saved, none with a stray leading "," (jupyterlite#1105)
    multi = next((c for c in saved if len(_text(c).splitlines()) >= 2), None)
    if multi is not None:
        shown = _cell(page, multi["index"]).locator(".jp-OutputArea-output").first.inner_text().splitlines()
        assert not [ln for ln in shown if ln.startswith(",")], f"stray commas in cell {multi['index']}: {shown[:4]}"
        missing = [ln for ln in _text(multi).splitlines() if ln.strip() and ln.strip() not in map(str.strip, shown)]
        assert not missing, f"saved lines not shown in cell {multi['index']}: {missing[:3]}"
    if errors:
        err = _cell(page, errors[0]["index"]).locator(".jp-OutputArea-output").first
        ename = next(o["ename"] for o in errors[0]["outputs"] if o["output_type"] == "error")
        from playwright.sync_api import expect
        expect(err, "saved error traceback is not shown").to_contain_text(ename, timeout=10_000)  # renders lazily
    assert page.locator(".jp-InputPrompt").filter(has_text="[*]").count() == 0
    page.screenshot(path=ARTIFACTS / "03_saved_outputs.png")

    # 4. a course cell that needs JAX is not run: its saved output stays, a Chinese note with working
    #    Colab and local links appears beside it (run before the setup cell, as a reader might)
    jax_cell = next(c for c in cells if "lite" not in _tags(c) and c.get("outputs") and _text(c))
    from playwright.sync_api import expect
    prompt = f"[{jax_cell['execution_count']}]:"   # the saved count: a run would give a new one
    cell = _run(page, jax_cell["index"])
    note = cell.locator(".course-jax-note")
    note.wait_for(timeout=10_000)
    page.wait_for_timeout(500)
    assert page.locator(".jp-InputPrompt").filter(has_text="[*]").count() == 0, "the JAX cell was sent to the kernel"
    assert cell.locator(".jp-InputPrompt").first.inner_text().strip() == prompt, "the JAX cell got a new execution count"
    assert page.locator(".jp-Cell.course-lite").count() >= 1, "no cell is marked as runnable in the browser"
    expect(cell.locator(".jp-OutputArea-output").first, "the saved output was replaced").to_contain_text(
        _text(jax_cell).splitlines()[0], timeout=10_000)
    hrefs = note.locator("a").evaluate_all("els => els.map(a => a.href)")
    assert any(h.startswith("https://colab.research.google.com/github/") and "01_JAX" in urllib.parse.unquote(h)
               for h in hrefs), hrefs
    assert any("github.com/" in h and "#" in h for h in hrefs), hrefs
    assert "JAX" in note.inner_text() and "Colab" in note.inner_text()
    page.screenshot(path=ARTIFACTS / "04_jax_cell_note.png")
    # a cell the reader adds runs for real; importing JAX there gives the short Chinese message,
    # and a later use of `jnp` gets the Chinese note instead of an English NameError traceback
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.type("import jax.numpy as jnp")
    t0 = time.perf_counter()
    page.keyboard.press("Shift+Enter")
    page.get_by_text(FRIENDLY).first.wait_for(timeout=120_000)
    print(f"reader's own JAX import: friendly message after {time.perf_counter() - t0:.2f} s "
          "(includes what was left of the kernel start)")
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.type("jnp.ones(3)")
    page.keyboard.press("Shift+Enter")
    mine = """src => { const c = window.jupyterapp.shell.currentWidget.content.widgets
        .find(w => w.model.sharedModel.getSource() === src);
        const o = c && c.node.querySelector('.jp-OutputArea-output'); return o ? o.textContent : ''; }"""
    end, said = time.monotonic() + 60, ""
    while "没有定义" not in said and time.monotonic() < end:
        said = page.evaluate(mine, "jnp.ones(3)")
        time.sleep(0.3)
    assert "没有定义" in said and "Traceback" not in said, f"the reader's `jnp.ones(3)` cell shows: {said[:300]!r}"

    # 5. the first click on a lite cell in a fresh browser (cold cache; the kernel starts in the background
    #    once the notebook shows, or on the click, whichever comes first): output, kernel start included,
    #    as printed by the real Python (01, or else the first chapter with such a cell). Every lite cell of
    #    every notebook runs in tests/test_site_lite_browser.py.
    where, probe = None, None
    for rel in [CHAPTER, *sorted(p.relative_to(staged).as_posix() for p in (staged / CHAPTER).parent.glob("*.ipynb"))]:
        try:
            probe = sitebrowser.lite_probe(staged / rel)
        except SystemExit:
            continue
        where = rel
        break
    assert probe, "no chapter has a lite cell with a saved printed output to compare"
    page.close()
    page = browser["fresh"]().new_page()
    lite_run = sitebrowser.time_first_lite_run(page, sitebrowser.chapter_url(base, where), probe[0])
    print(f"first lite cell ({where}, cell {probe[0]}): output {lite_run['click']:.2f} s after the first click "
          f"(clicked as soon as the cell showed, {lite_run['shown']:.2f} s after navigation; kernel start included), "
          f"{lite_run['nav']:.2f} s after navigation (cold cache)")
    rtol, atol = tolerance_for(probe[1])
    assert lite_run["text"] == probe[1] or numbers_close(probe[1], lite_run["text"], rtol, atol), (
        f"lite cell printed {lite_run['text']!r}, saved output is {probe[1]!r}")
    assert lite_run["click"] < 60, f"the first lite output took {lite_run['click']:.0f} s"
    page.screenshot(path=ARTIFACTS / "05_lite_cell.png")

    # the offline site asked nothing of the outside world
    assert browser["outside"] == [], f"requests left 127.0.0.1: {browser['outside'][:5]}"


IDB_FILES = """async (name) => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open(name);
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  if (!db.objectStoreNames.contains("files")) { db.close(); return {}; }
  const st = db.transaction("files").objectStore("files");
  const [keys, vals] = await Promise.all([st.getAllKeys(), st.getAll()].map(r =>
    new Promise(ok => { r.onsuccess = () => ok(r.result); })));
  db.close();
  return Object.fromEntries(keys.map((k, i) => [k, JSON.stringify(vals[i].content)]));
}"""


def _storage_name(output: Path) -> str:
    return json.loads((output / "jupyter-lite.json").read_text())["jupyter-config-data"]["contentsStorageName"]


def test_run_all_gives_one_summary_instead_of_a_note_per_jax_cell(site, browser):
    """运行所有单元格: the lite cells run, the JAX cells do not, and one note says so (not one per JAX cell);
    the lite badge gives way to the active cell's toolbar."""
    cells = _code_cells(site["output"] / "files" / CHAPTER)
    jax_cells = [c for c in cells if c.get("metadata", {}).get("course", {}).get("browser") == "needs-jax"]
    assert len(jax_cells) > 1
    page = browser["fresh"]().new_page()
    page.goto(sitebrowser.chapter_url(site["base"], CHAPTER))
    page.wait_for_function(sitebrowser.NOTEBOOK_READY, timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    summary = page.locator("#course-run-summary")
    summary.wait_for(timeout=240_000)
    text = summary.inner_text()
    assert f"运行了 {len(cells) - len(jax_cells)} 个纯 Python 单元格" in text and f"{len(jax_cells)} 个需要 JAX" in text, text
    assert page.locator(".course-jax-note").count() == 0, "run-all still puts a note on every JAX cell"
    assert summary.locator("a[href*='colab.research.google.com']").count() == 1
    page.screenshot(path=ARTIFACTS / "18_run_all_summary.png")
    summary.locator("button").click()
    assert page.locator("#course-run-summary").count() == 0
    lite = page.locator(".jp-Notebook .jp-Cell.course-lite").last
    lite.scroll_into_view_if_needed()
    badge = "c => getComputedStyle(c.querySelector('.jp-InputArea'), '::before').display"
    assert lite.evaluate(badge) != "none"
    lite.locator(".jp-InputPrompt").first.click()   # selected: JupyterLab's cell toolbar takes the corner
    page.wait_for_timeout(300)
    assert lite.evaluate("c => c.classList.contains('jp-mod-active')") and lite.evaluate(badge) == "none"
    page.close()


def test_quick_preview(site, browser):
    """The quick preview shows the saved outputs first, then hands over to the reading UI at the
    cell the reader had scrolled to; its links stay inside the site."""
    base, output = site["base"], site["output"]
    nb_path = output / "files" / CHAPTER
    cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    saved = [c for c in _code_cells(nb_path) if _text(c)]
    ctx = browser["fresh"]()
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(sitebrowser.chapter_url(base, CHAPTER))
    first = page.locator(sitebrowser.PREVIEW_OUTPUT).first
    first.wait_for(timeout=30_000)
    t_preview = sitebrowser.preview_shown(page)
    page.screenshot(path=ARTIFACTS / "07_quick_preview.png")
    layer = page.locator("#course-preview")
    assert _text(saved[0]).splitlines()[0] in layer.locator(f'.cpv-cell[data-index="{saved[0]["index"]}"]').inner_text()
    drawn = layer.locator(".cpv-cell").count()
    h1 = next(line[2:].strip() for c in cells if c["cell_type"] == "markdown"
              for line in "".join(c["source"]).splitlines() if line.startswith("# "))
    assert layer.locator("h1").filter(has_text=h1).count() == 1

    # the reader scrolls the preview to a cell far down; the reading UI takes over at that cell
    # (the preview draws cells as the reader scrolls towards them)
    target = saved[len(saved) * 2 // 3]["index"]
    more, at_top = page.evaluate("""async n => { const l = document.getElementById('course-preview');
        const sel = '.cpv-cell[data-index="' + n + '"]';
        for (let i = 0; i < 200 && !l.querySelector(sel); i++) {
          l.scrollTop = l.scrollHeight;
          await new Promise(ok => requestAnimationFrame(() => ok()));
        }
        const c = l.querySelector(sel);
        for (let i = 0; i < 3; i++) {   // the first scroll may stop short until the cells below are drawn
          l.scrollTop += c.getBoundingClientRect().top - l.querySelector('.cpv-bar').getBoundingClientRect().bottom;
          await new Promise(ok => requestAnimationFrame(() => ok()));
        }
        const rest = c.getBoundingClientRect().top - l.querySelector('.cpv-bar').getBoundingClientRect().bottom;
        return [l.querySelectorAll('.cpv-cell').length, Math.abs(rest) < 2]; }""", target)
    total = sum(c["cell_type"] in ("markdown", "code") for c in cells)
    assert drawn <= more <= total and (drawn < more or drawn == total), (drawn, more, total)
    layer.wait_for(state="detached", timeout=40_000)
    t_handover = time.perf_counter() - t0
    time.sleep(3)   # the pinning lasts 2.5 s; what matters is where the page rests
    offset = page.evaluate("""n => { const c = document.querySelector('.jp-Notebook .jp-Cell[data-windowed-list-index="' + n + '"]');
        const box = document.querySelector('.jp-WindowedPanel-outer');
        return c && box ? c.getBoundingClientRect().top - box.getBoundingClientRect().top : null; }""", target)
    page.screenshot(path=ARTIFACTS / "08_after_handover.png")
    if at_top:   # (in a short chapter the preview cannot scroll that cell to the top)
        assert offset is not None and abs(offset) < 40, f"cell {target} rests {offset} px from the top after the handover"
    rest = "not placed" if offset is None else f"{offset:.0f} px from the top"
    print(f"\nquick preview: first saved output after {t_preview:.2f} s (target ≤ 3 s); reading UI took over "
          f"after {t_handover:.2f} s at cell {target} ({rest})")

    # links in the preview open the static page of the chapter (same tab, inside the site)
    page.goto(sitebrowser.chapter_url(base, LANDING))
    link = page.locator('#course-preview a[href*="01_JAX"]').first
    link.wait_for(timeout=30_000)
    href = link.get_attribute("href")
    assert urllib.parse.unquote(href).startswith("../" + CHAPTER.removesuffix(".ipynb") + ".html"), href
    assert link.get_attribute("target") is None
    page.close()


#: a reader's own copy with HTML that must not run, and an anchor far down
UNSAFE_MD = """## 安全 锚点

<img src="x" onerror="window.__pwned = 'img'">
<a class="bad" href="jav&#9;ascript:window.__pwned = 'tab'">tab</a>
<svg><a class="bad" xlink:href="jav&#9;ascript:window.__pwned = 'svg'"><text y="20">svg</text></a></svg>
<img src="y.png" usemap="#m"><map name="m"><area class="bad" href="javascript:window.__pwned = 'area'" shape="default"></map>
"""
UNSAFE_HTML = "<iframe srcdoc=\"<script>parent.__pwned = 'iframe'</script>\"></iframe><b id=\"ok\">安全的粗体</b>"
PUT_FILE = """async ([name, key, model]) => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open(name);
    r.onupgradeneeded = () => r.result.createObjectStore("files");
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  await new Promise((ok, fail) => { const tx = db.transaction("files", "readwrite");
    tx.objectStore("files").put(model, key); tx.oncomplete = ok; tx.onerror = () => fail(tx.error); });
  db.close();
}"""


def test_quick_preview_of_a_readers_copy_is_safe(site, browser):
    """Script in a reader's saved copy never runs in the preview; an anchor in the URL is honoured."""
    base, output = site["base"], site["output"]
    path = "入门/预览安全检查.ipynb"
    filler = [{"cell_type": "markdown", "id": f"f{i}", "metadata": {}, "source": f"第 {i} 段。\n\n" + "文字。" * 40}
              for i in range(70)]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": filler[:60] + [
        {"cell_type": "markdown", "id": "unsafe", "metadata": {}, "source": UNSAFE_MD},
        {"cell_type": "code", "id": "out", "metadata": {}, "execution_count": 1, "source": "x",
         "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"text/html": UNSAFE_HTML}}]}]
        + filler[60:]}
    model = {"name": path.split("/")[-1], "path": path, "type": "notebook", "format": "json", "content": nb,
             "created": "2026-01-01T00:00:00Z", "last_modified": "2026-01-01T00:00:00Z", "mimetype": None,
             "writable": True}
    page = browser["fresh"]().new_page()
    page.goto(base)   # the storage script's page, on the site's origin
    page.evaluate(PUT_FILE, [_storage_name(output), path, model])
    page.goto(sitebrowser.chapter_url(base, path) + "#" + urllib.parse.quote("安全-锚点"))
    layer = page.locator("#course-preview")
    layer.locator("#ok").wait_for(timeout=30_000)
    time.sleep(0.5)
    found = page.evaluate("""() => { const l = document.getElementById('course-preview');
        const urls = [...l.querySelectorAll('*')].flatMap(e => ['href', 'xlink:href', 'src'].map(a => e.getAttribute(a)))
          .filter(v => v !== null).map(v => { try { return new URL(v, location.href).protocol; } catch (e) { return 'bad'; } });
        const h = [...l.querySelectorAll('h2')].find(x => x.textContent.trim() === '安全 锚点');
        return {pwned: window.__pwned || null, js: urls.filter(p => p === 'javascript:').length,
                dropped: l.querySelectorAll('iframe, area, map, [onerror]').length,
                anchorTop: h ? h.getBoundingClientRect().top - l.querySelector('.cpv-bar').getBoundingClientRect().bottom : null}; }""")
    page.screenshot(path=ARTIFACTS / "09_preview_readers_copy.png")
    assert found["pwned"] is None and found["js"] == 0 and found["dropped"] == 0, found
    assert found["anchorTop"] is not None and abs(found["anchorTop"]) < 5, found
    page.close()


def test_bench_loads_both_variants(site, browser):
    """`tools/site.py bench` in one run: this site and the JupyterLite-default page both show chapter 01."""
    from sitebuild import bench

    times = bench.bench(site["output"], CHAPTER, site["exe"], runs=1, pw=browser["pw"])
    assert [len(times[v]) for v in bench.FIGURES] == [1, 1, 1]
    assert all(0 < times[v][0] < 30 for v in bench.FIGURES), times
    assert times["preview"][0] < times["course"][0], "the quick preview came after the reading UI"
    print("\n" + bench.report(times))


def test_course_plugin_is_active_on_the_site_and_off_in_the_bench_baseline(site, browser):
    """The run view's adjustments arrive as a JupyterLab plugin (sitebuild/extension.py): JupyterLab activates it on
    the site's page; the bench's JupyterLite-default page (post.stock_page) disables it through its config data."""
    from sitebuild import extension

    plugin = f"{extension.NAME}:plugin"
    state = ("id => ({active: window.jupyterapp.isPluginActivated(id),"
             " style: !!document.getElementById('course-app-style')})")
    url = sitebrowser.chapter_url(site["base"], CHAPTER)
    stock = post.stock_page((site["output"] / preload.PAGE).read_text(encoding="utf-8"))
    got = {}
    for variant in ("site", "stock"):
        page = browser["fresh"]().new_page()
        if variant == "stock":
            preload.serve_page(page, stock)
        page.goto(url)
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=60_000)
        page.wait_for_function("() => window.jupyterapp.restored && document.querySelector('.jp-Notebook .jp-Cell')",
                               timeout=60_000)
        got[variant] = page.evaluate(state, plugin)
        page.close()
    assert got == {"site": {"active": True, "style": True}, "stock": {"active": False, "style": False}}, got


def test_update_keeps_reader_copy(site, browser):
    """A saved edit survives a new release as a visible copy, and the new release is what shows."""
    base, ctx, output = site["base"], browser["ctx"], site["output"]
    url = sitebrowser.chapter_url(base, CHAPTER)
    page = ctx.new_page()
    page.goto(url)
    setup = next(c for c in _code_cells(output / "files" / CHAPTER) if "lite" in _tags(c))
    editor = _cell(page, setup["index"]).locator(".jp-InputArea-editor")
    editor.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("# 读者笔记 42\n")
    page.keyboard.press("Control+s")
    old = _storage_name(output)
    end = time.monotonic() + 20
    while CHAPTER not in page.evaluate(IDB_FILES, old) and time.monotonic() < end:
        time.sleep(0.3)
    assert "读者笔记 42" in page.evaluate(IDB_FILES, old).get(CHAPTER, ""), "Ctrl+S did not save to browser storage"
    page.close()
    # the quick preview shows the reader's saved copy, the one JupyterLab then opens
    page = ctx.new_page()
    page.goto(url)
    page.locator("#course-preview .cpv-code").filter(has_text="读者笔记 42").first.wait_for(timeout=20_000)
    page.close()
    # another chapter saved with no source changed (what autosave does after running cells): not a copy later
    other = next(p.relative_to(output / "files").as_posix() for p in sorted((output / "files").rglob("*.ipynb"))
                 if p.relative_to(output / "files").as_posix() != CHAPTER)
    page = ctx.new_page()
    page.goto(sitebrowser.chapter_url(base, other))
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    page.locator("#course-preview").wait_for(state="detached", timeout=60_000)
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.keyboard.press("Control+s")
    page.wait_for_function("p => window.courseSavedFile(p).then(m => m !== null)", arg=other, timeout=15_000)
    saved = page.evaluate("p => window.courseSavedFile(p)", other)
    assert page.evaluate("m => window.courseFingerprint(m)", saved) == post.fingerprint(output / "files" / other), \
        "course-storage.js and sitebuild/post.py fingerprint the same notebook differently"
    page.close()

    # a new release: the chapter gains a cell
    newer = shutil.copytree(site["contents"], site["tmp"] / "contents-v2",
                            ignore=shutil.ignore_patterns("__pycache__"))
    nb = json.loads((newer / CHAPTER).read_text(encoding="utf-8"))
    nb["cells"].insert(1, {"cell_type": "markdown", "id": "release-2", "metadata": {},
                           "source": "## 新版本标记 v2"})
    (newer / CHAPTER).write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    build(offline_build=True, contents=newer, output=output, quiet=True, work=site["tmp"] / "work")
    assert _storage_name(output) != old

    page = ctx.new_page()
    page.goto(url)
    page.locator("#course-preview h2").filter(has_text="新版本标记 v2").first.wait_for(timeout=20_000)
    page.locator(".jp-RenderedMarkdown h2").filter(has_text="新版本标记 v2").first.wait_for(timeout=30_000)  # not shadowed
    notice = page.locator("#course-update-notice")
    notice.wait_for(timeout=10_000)
    page.screenshot(path=ARTIFACTS / "06_update_notice.png")
    copies = {k: v for k, v in page.evaluate(IDB_FILES, _storage_name(output)).items() if "我的副本" in k}
    assert len(copies) == 1, f"expected one reader copy (the edited chapter, not the one only saved), found {list(copies)}"
    path, content = next(iter(copies.items()))
    assert path.startswith("入门/01_JAX简介(我的副本 ") and path.endswith(".ipynb")
    assert "读者笔记 42" in content and path.split("/")[-1] in notice.inner_text()
    page.close()
