"""Every `lite` cell of every notebook, run in the real Pyodide kernel of the reading site in chromium.

For each notebook of the staged site that has lite cells (both parts, index pages too) the test opens
its run view, runs its lite cells in order in that page's one kernel (they share a namespace, as in the
harness's verify/lite.py) with JupyterLab's own run command, and compares what each printed (streams,
text/plain results) with the cell's saved outputs the way the harness does (verify/compare.py: numbers
within the float32 tolerance, metadata.course.volatile and .tolerance honoured); a cell whose saved
output is an error must raise the same exception type. Also: lite cells are marked on a phone, and the
note beside a JAX cell that was not run points to the nearest lite cell of its section.

Without chromium the tests are skipped, unless VERIFY_REQUIRE_BROWSER=1 (as in .ci/run).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from sitebuild import FIRST_CHAPTER, browser as sitebrowser
from sitefixtures import ARTIFACTS, _tags, _text, browser, built_site, site  # noqa: F401
from verify.cells import course_meta, volatile_mode
from verify.compare import canonical, error_name, same_outputs

pytestmark = pytest.mark.browser
BANNER = "site-banner"


def _notebooks(staged: Path) -> list[tuple[str, list[dict], list[int]]]:
    """(path under the site's files/, cells, indices of the lite code cells) of each notebook with any."""
    found = []
    for path in sorted(staged.rglob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        lite = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "lite" in _tags(c)
                and "".join(c["source"]).strip()]
        if lite:
            found.append((path.relative_to(staged).as_posix(), cells, lite))
    return found


def _where(cells: list[dict], i: int) -> str:
    """The cell as a maintainer finds it in content/: its index there (the site adds a banner cell) and id."""
    shift = 1 if cells and cells[0].get("id") == BANNER else 0
    return f"cell {i - shift} (id {cells[i].get('id')})"


def printed(outputs: list[dict]) -> list[dict]:
    """What a cell printed: its streams and the text/plain form of its results (no error outputs, no
    other MIME types: the browser's IPython may offer different ones)."""
    kept = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            kept.append({"output_type": "stream", "name": out.get("name"), "text": out.get("text", "")})
        elif kind in ("execute_result", "display_data") and "text/plain" in out.get("data", {}):
            kept.append({"output_type": kind, "metadata": {}, "data": {"text/plain": out["data"]["text/plain"]}})
    return kept


def first_difference(saved: list[dict], got: list[dict]) -> str:
    """The first line where the normalised texts differ: 'line N: expected … | got …'."""
    a, b = canonical(saved)[0].splitlines(), canonical(got)[0].splitlines()
    for n in range(max(len(a), len(b))):
        x = a[n] if n < len(a) else "<nothing>"
        y = b[n] if n < len(b) else "<nothing>"
        if x != y:
            # a whole section ([stdout], [execute_result …]) is missing on one side: show its first line too
            if x == "<nothing>" and y.startswith("["):
                y = " ".join(b[n:n + 2])
            elif y == "<nothing>" and x.startswith("["):
                x = " ".join(a[n:n + 2])
            return f"line {n + 1}: expected {x!r} | got {y!r}"
    return "texts equal after normalisation"


def exception_type(outputs: list[dict]) -> str | None:
    """The exception type an error output names: the browser's kernel writes "<class 'json.JSONDecodeError'>"
    where ipykernel writes "JSONDecodeError"."""
    name = error_name(outputs)
    m = re.fullmatch(r"<class '(?:[\w.]*\.)?(\w+)'>", name or "")
    return m.group(1) if m else name


def compare(cell: dict, outputs: list[dict]) -> str | None:
    """None when the browser's outputs agree with the saved ones, else why not (harness rules)."""
    saved = cell.get("outputs", [])
    want, got = exception_type(saved), exception_type(outputs)
    if want != got:
        evalue = next((o.get("evalue", "") for o in outputs if o.get("output_type") == "error"), "")
        return (f"saved output raised {want or 'nothing'}, the browser raised {got or 'nothing'}"
                + (f": {evalue[:200]}" if evalue else "") + f"; {first_difference(printed(saved), printed(outputs))}")
    mode = volatile_mode(cell)
    if mode == "all":
        return None
    equal, _, _ = same_outputs(printed(saved), printed(outputs), mask_numbers=(mode == "numbers"),
                               tolerance=course_meta(cell).get("tolerance"))
    return None if equal else first_difference(printed(saved), printed(outputs))


def _perturbed(outputs: list[dict]) -> list[dict]:
    """The same outputs with one visible change: the first digit + 1 (or an extra word, without digits)."""
    out = json.loads(json.dumps(printed(outputs)))
    for o in out:
        key = "text" if o["output_type"] == "stream" else None
        text = "".join(o[key]) if key else "".join(o["data"]["text/plain"])
        m = re.search(r"\d", text)
        new = text[:m.start()] + str((int(m.group()) + 1) % 10) + text[m.end():] if m else text + " 多出的字"
        if key:
            o[key] = new
        else:
            o["data"]["text/plain"] = new
        return out
    return [{"output_type": "stream", "name": "stdout", "text": "多出的输出\n"}]


def test_every_lite_cell_runs_in_pyodide(site, browser):
    """Run every lite cell of every notebook in the site's Pyodide kernel; compare with the saved outputs."""
    base, staged = site["base"], site["output"] / "files"
    books = _notebooks(staged)
    assert books, "no notebook of the site has lite cells"
    # two browsers of their own, taking turns: while one runs a notebook's cells the other loads the next notebook
    # and starts its kernel (course-app.js starts it only on a visible page: each browser shows its one page)
    ctxs = [browser["fresh"](), browser["fresh"]()]

    def load(k):
        page = ctxs[k % 2].new_page()
        page.goto(sitebrowser.chapter_url(base, books[k][0]), wait_until="commit")
        return page

    t0 = time.perf_counter()
    problems, ran, checked = [], 0, None
    following = load(0)
    for k, (rel, cells, lite) in enumerate(books):
        page, t_nb = following, time.perf_counter()
        following = load(k + 1) if k + 1 < len(books) else None
        results = sitebrowser.run_cells(page, lite)
        for i, res in zip(lite, results):
            if res["how"] != "done":
                problems.append(f"{rel} {_where(cells, i)}: no result after {res['seconds']:.0f} s")
                continue
            ran += 1
            if res["source"] != "".join(cells[i]["source"]) or res["count"] is None:
                problems.append(f"{rel} {_where(cells, i)}: the page ran a different cell or none "
                                f"(execution count {res['count']})")
                continue
            why = compare(cells[i], res["outputs"])
            if why:
                problems.append(f"{rel} {_where(cells, i)}: {why}")
            if checked is None and printed(cells[i].get("outputs", [])) and volatile_mode(cells[i]) is None:
                checked = (cells[i], res["outputs"])
        print(f"  {rel}: {len(results)}/{len(lite)} lite cells, {time.perf_counter() - t_nb:.1f} s "
              f"(what was left of its page load and kernel start included)", flush=True)
        if rel == FIRST_CHAPTER:
            page.screenshot(path=ARTIFACTS / "10_lite_cells_ran.png")
            # the kernel imported the course package from the copy it installed at start, and the start-up
            # script took away the stand-in that kept start-up imports out of /drive (sitebuild/offline.py)
            said = page.evaluate(sitebrowser.KERNEL_PRINT, "import sys, jaxcourse\n"
                                 "print(type(sys.path_importer_cache.get('/drive')).__name__, jaxcourse.__file__)")
            assert said.split()[0] != "CourseSkipDrive" and "/site-packages/jaxcourse/" in said, said
        page.close()
    total = len([i for _, _, lite in books for i in lite])
    print(f"lite cells in Pyodide: {ran} cells in {len(books)} notebooks, {len(problems)} mismatches, "
          f"{time.perf_counter() - t0:.1f} s")
    assert not problems, f"{len(problems)} lite cells differ in the browser:\n" + "\n".join(problems)
    assert ran == total, f"ran {ran} of {total} lite cells"
    # the comparison can fail: the browser's output of a compared cell against a saved one with one change
    assert checked, "no lite cell with a printed saved output was compared"
    cell, outputs = checked
    assert compare(dict(cell, outputs=_perturbed(cell["outputs"])), outputs), "a changed saved output went unnoticed"
    assert browser["outside"] == [], f"requests left 127.0.0.1: {browser['outside'][:5]}"


# ---- a reader can tell: badges on a phone, and the note beside a JAX cell -----------------------------

def _setup_index(cells: list[dict]) -> int | None:
    first = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), None)
    if first is not None and re.search(r"^\s*import jaxcourse\s*$", "".join(cells[first]["source"]), re.M):
        return first
    return None


def _heading(cell: dict) -> str | None:
    if cell["cell_type"] != "markdown":
        return None
    m = re.search(r"^#{1,3} +(.+?)\s*$", "".join(cell["source"]), re.M)
    return m.group(1) if m else None


def nearest_lite(cells: list[dict], i: int) -> tuple[int, bool] | None:
    """(index, in the same section) of the lite cell the note beside cell i should point to: in its
    section (between headings of level ≤ 3) the first lite cell below it, else the last one above it;
    with none in the section, the nearest one in the notebook. The setup cell does not count."""
    setup = _setup_index(cells)
    ok = [k for k, c in enumerate(cells) if c["cell_type"] == "code" and "lite" in _tags(c) and k != setup]
    start = max([k for k in range(i + 1) if _heading(cells[k]) is not None], default=0)
    end = min([k for k in range(i + 1, len(cells)) if _heading(cells[k]) is not None], default=len(cells))
    below = [k for k in ok if i < k < end]
    above = [k for k in ok if start <= k < i]
    if below:
        return below[0], True
    if above:
        return above[-1], True
    if not ok:
        return None
    return min(ok, key=lambda k: (abs(k - i), k < i)), False


def _jax_cells(cells: list[dict]) -> list[int]:
    return [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "lite" not in _tags(c)
            and "".join(c["source"]).strip()]


def test_note_points_to_the_nearest_lite_cell(site, browser):
    """Running a JAX cell in the run view: the note names the nearest lite cell of the section; its link
    scrolls to that cell and selects it. A section without one gets the nearest in the chapter."""
    base, staged = site["base"], site["output"] / "files"
    books = [b for b in _notebooks(staged) if _jax_cells(b[1])]
    # a JAX cell whose section has a lite cell, and (if the course has one) a JAX cell whose section has none
    cases = []
    for want_section in (True, False):
        for rel, cells, _ in books:
            hit = next((i for i in _jax_cells(cells) if (n := nearest_lite(cells, i)) and n[1] == want_section
                        and n[0] != i), None)
            if hit is not None:
                cases.append((rel, cells, hit))
                break
    assert cases and nearest_lite(cases[0][1], cases[0][2])[1], "no JAX cell has a lite cell in its section"
    ctx = browser["fresh"]()
    for rel, cells, i in cases:
        target, same_section = nearest_lite(cells, i)
        page = ctx.new_page()
        page.goto(sitebrowser.chapter_url(base, rel))
        res = sitebrowser.run_cells(page, [i])[0]
        assert res["how"] == "done"
        note = page.locator(".jp-Notebook .jp-Cell").nth(i).locator(".course-jax-note")
        note.wait_for(timeout=10_000)
        text = note.inner_text()
        hint = note.locator(".course-lite-link")
        assert hint.count() == 1, f"{rel} {_where(cells, i)}: the note names no lite cell: {text!r}"
        assert int(hint.get_attribute("data-index")) == target, (
            f"{rel} {_where(cells, i)}: the note points to {hint.get_attribute('data-index')}, expected {target}")
        assert ("本节可以在浏览器里动手" in text) == same_section and ("本节没有" in text) == (not same_section), text
        assert f"第 {abs(target - i)} 格" in text and ("下面" if target > i else "上面") in text, text
        assert "Colab" in text and "在自己的电脑上运行" in text, text
        hint.click()
        page.wait_for_function("t => window.jupyterapp.shell.currentWidget.content.activeCellIndex === t", arg=target,
                               timeout=10_000)
        box = page.evaluate("""t => { const c = window.jupyterapp.shell.currentWidget.content.widgets[t].node;
            const r = c.getBoundingClientRect(); return [r.top, r.bottom, innerHeight, c.classList.contains('jp-mod-active')]; }""",
                            target)
        assert box[3] and box[0] < box[2] and box[1] > 0, f"the lite cell {target} is not on screen after the click: {box}"
        page.screenshot(path=ARTIFACTS / f"11_note_to_lite_{'section' if same_section else 'chapter'}.png")
        print(f"{rel} {_where(cells, i)}: the note points to {_where(cells, target)} "
              f"({'same section' if same_section else 'nearest in the chapter'}); the link selects it")
        page.close()


def test_lite_badges_on_a_phone(site, browser):
    """On a 390 px phone the static page and the run view both mark lite cells as runnable here."""
    base, staged = site["base"], site["output"] / "files"
    cells = json.loads((staged / FIRST_CHAPTER).read_text(encoding="utf-8"))["cells"]
    setup = _setup_index(cells)
    lite = next(i for i, c in enumerate(cells) if c["cell_type"] == "code" and "lite" in _tags(c) and i != setup)
    ctx = browser["fresh"](phone=True)
    page = ctx.new_page()
    page.goto(base + FIRST_CHAPTER.replace(".ipynb", ".html"))
    badge = page.locator(f"#cell-{cells[lite]['id']} .cell-bar .badge")
    badge.scroll_into_view_if_needed(timeout=20_000)
    box = badge.bounding_box()
    assert badge.is_visible() and "可在浏览器里运行" in badge.inner_text(), "no badge on the static page"
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, f"the badge is off screen: {box}"
    page.screenshot(path=ARTIFACTS / "12_lite_badge_phone_static.png")
    page.goto(sitebrowser.chapter_url(base, FIRST_CHAPTER))
    page.wait_for_function(sitebrowser.NOTEBOOK_READY, timeout=60_000)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(lite)
    cell.scroll_into_view_if_needed(timeout=20_000)
    shown = cell.evaluate("""c => { const a = c.querySelector('.jp-InputArea'), s = getComputedStyle(a, '::before');
        const r = a.getBoundingClientRect();
        return {lite: c.classList.contains('course-lite'), content: s.content, display: s.display,
                right: r.right - parseFloat(s.right || 0), width: innerWidth}; }""")
    page.screenshot(path=ARTIFACTS / "13_lite_badge_phone_run_view.png")
    assert shown["lite"] and "可在浏览器里运行" in shown["content"] and shown["display"] != "none", shown
    assert shown["right"] <= shown["width"], f"the run view's badge is off screen on a phone: {shown}"
    # the way back to the chapter's reading page (the logo) is there on a phone too: Notebook hides the top bar
    # on small screens unless lite/overrides.json says visible: yes (a fresh reader found no way back)
    back = page.evaluate("""() => { const a = document.querySelector('#jp-NotebookLogo a, a#jp-NotebookLogo');
        const r = a && a.getBoundingClientRect();
        return a && {href: decodeURIComponent(a.getAttribute('href') || ''), w: r.width, h: r.height, x: r.x}; }""")
    assert back and back["w"] > 20 and back["h"] > 20 and 0 <= back["x"] < 390, f"no visible way back on a phone: {back}"
    assert back["href"].endswith(FIRST_CHAPTER.replace(".ipynb", ".html")), back


def test_run_link_on_the_reading_page_opens_the_cell_at_the_top_and_its_output_in_view(site, browser):
    """Issue 42 (5): 「在浏览器里运行」 on the static page opens the run view with that cell at the top of the
    notebook (the Markdown above it renders late and used to push it down) and, run at once, its output on
    screen. Prints the seconds from the click on the reading page to the output."""
    base, staged = site["base"], site["output"] / "files"
    cells = json.loads((staged / FIRST_CHAPTER).read_text(encoding="utf-8"))["cells"]
    setup = _setup_index(cells)
    lite = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "lite" in _tags(c) and i != setup
            and any(o.get("output_type") == "stream" for o in c.get("outputs", []))]
    target = lite[-1]      # the deepest: the most Markdown above it to render
    page = browser["fresh"]().new_page()
    got = sitebrowser.run_from_reading(page, base + FIRST_CHAPTER.replace(".ipynb", ".html"), cells[target]["id"])
    page.screenshot(path=ARTIFACTS / "14_run_link_from_reading.png")
    # where the time goes (issue 42.5): opened at a cell, the run view shows one line instead of the whole-chapter
    # quick preview (JupyterLab starts at once) and starts the kernel as soon as the notebook's session context is
    # ready, not at the next idle moment (course-preview.js, course-app.js 6)
    # and, until the kernel is up, holds JupyterLab's idle-time drawing of the cells off screen (it took the CPU
    # the kernel's start needed), then lets it finish
    names = ["course-opening-shown", "course-preview-shown", "course-kernel-start", "course-cells-held",
             "course-cells-released"]
    marks = page.evaluate("names => Object.fromEntries(names.map(n => [n, (performance.getEntriesByName(n)[0] || {})"
                          ".startTime ?? null]))", names)
    print("run view, ms after its navigation: " + ", ".join(f"{k} {v:.0f}" for k, v in marks.items() if v is not None))
    assert marks["course-preview-shown"] is None, f"the whole-chapter quick preview was shown for a run link: {marks}"
    assert marks["course-opening-shown"] is not None and marks["course-kernel-start"] is not None, marks
    assert marks["course-cells-held"] is not None, f"JupyterLab's idle-time cell drawing was not held: {marks}"
    assert marks["course-cells-released"] is not None and marks["course-cells-released"] > marks["course-kernel-start"], (
        f"the held cells were released before the kernel started, or never: {marks}")
    assert page.locator("#course-opening").count() == 0, "the 'opening' line is still on screen after the run"
    settled, after = got["settled"], got["after"]
    print(f"{FIRST_CHAPTER} {_where(cells, target)}: cell shown {got['click_to_cell']:.2f} s and its output "
          f"{got['click_to_output']:.2f} s after the click on the reading page; settled at {settled['top']:.0f} px "
          f"of {settled['height']} px, output {after['output_top']:.0f}–{after['output_bottom']:.0f} px")
    assert -12 <= settled["top"] <= 0.25 * settled["height"], (
        f"the cell opened at {settled['top']:.0f} px of a {settled['height']} px notebook, not at the top: {settled}")
    assert after["output_top"] is not None and 0 <= after["output_top"] and after["output_bottom"] <= after["height"], (
        f"the cell's output is not on screen after the run: {after}")
    # the cells above, drawn once the kernel is up, do not push it off screen either
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.widgets.every(w => !w.isPlaceholder())",
                           timeout=30_000)
    late = page.evaluate(sitebrowser.CELL_BY_ID, cells[target]["id"])
    assert late["output_top"] is not None and 0 <= late["output_top"] and late["output_bottom"] <= late["height"], (
        f"the cell's output left the screen once the cells above it were drawn: {late}")
    assert got["text"] == _text(cells[target]), "the first run printed something else than the saved output"
    # the background start (course-app.js 6) and the reader's run share one session: one kernel
    kernels = page.evaluate("async () => { const k = window.jupyterapp.serviceManager.kernels; await k.refreshRunning();"
                            " return Array.from(k.running()).map(m => m.name); }")
    assert len(kernels) == 1, f"the run link started {len(kernels)} kernels, not one: {kernels}"


def test_held_cells_are_drawn_as_soon_as_the_reader_scrolls(site, browser):
    """The hold on JupyterLab's idle-time cell drawing (course-app.js 6) stops the notebook at the cells drawn so
    far: a reader who pages down before the kernel is up must get the rest drawn at once, while clicking into a
    cell (to run it) keeps the hold. The page claims to be hidden so that the kernel does not start and the hold
    lasts (it ends after 15 s at the latest)."""
    base, staged = site["base"], site["output"] / "files"
    cells = json.loads((staged / FIRST_CHAPTER).read_text(encoding="utf-8"))["cells"]
    index, _ = sitebrowser.lite_probe(staged / FIRST_CHAPTER)
    page = browser["fresh"]().new_page()
    page.add_init_script("Object.defineProperty(document, 'visibilityState', {get: () => 'hidden'})")
    page.goto(sitebrowser.chapter_url(base, FIRST_CHAPTER) + "#cell-" + cells[index]["id"])
    page.wait_for_function("performance.getEntriesByName('course-cells-held').length > 0", timeout=60_000)
    state = """() => ({released: performance.getEntriesByName('course-cells-released').length,
        kernel: performance.getEntriesByName('course-kernel-start').length,
        placeholders: window.jupyterapp.shell.currentWidget.content.widgets.filter(w => w.isPlaceholder()).length})"""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    time.sleep(1.0)
    held = page.evaluate(state)
    assert held["kernel"] == 0, f"the kernel started though the page said it was hidden: {held}"
    assert held["released"] == 0 and held["placeholders"] > 0, f"a click into a cell ended the hold: {held}"
    page.keyboard.press("Escape")      # command mode: PageDown scrolls the notebook
    page.keyboard.press("PageDown")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.widgets.every(w => !w.isPlaceholder())",
                           timeout=8_000)
    after = page.evaluate(state)
    assert after["released"] == 1 and after["kernel"] == 0, after
