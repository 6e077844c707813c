"""Open the site in a cold headless chromium and time a chapter's first saved output.

Shared by the browser test, `tools/site.py preload` and `tools/site.py bench`, so all three measure
the same thing: from navigation to the first code cell with saved outputs showing one (in the quick
preview, and in the reading UI).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.parse
from pathlib import Path


#: a quiet headless chromium: no first-run work, no background traffic competing with the page
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL_HINT = ("no chromium found: sudo apt-get install chromium, or set VERIFY_BROWSER to a Chromium/Chrome "
                "binary (never 'playwright install'; the CJK font comes from the pinned Python packages)")


def chromium() -> str | None:
    """Path of the browser for the tests, or None: $VERIFY_BROWSER when set (GitHub's runners have Google
    Chrome, not Debian's chromium), else Debian's chromium, else a Chrome on PATH."""
    chosen = os.environ.get("VERIFY_BROWSER")
    if chosen:
        return shutil.which(chosen)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def chapter_url(base: str, chapter: str) -> str:
    """The chapter in the notebook reading UI."""
    return base + "notebooks/index.html?path=" + urllib.parse.quote(chapter)


def first_output_cell(notebook: Path) -> int:
    """Index of the first code cell that has saved outputs."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and cell.get("outputs"):
            return i
    raise SystemExit(f"ERROR {notebook} has no code cell with saved outputs; run tools/run_all.py --refresh on it")


#: a phone as the readers measured it: 390×844 CSS pixels, 3 device pixels per CSS pixel, touch
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}


def launch(pw, profile: Path | str, exe: str, phone: bool = False):
    """A chromium with its own (empty) profile directory: cold HTTP cache, nothing else running.

    It also sees the course's pinned CJK font (see font_env), so screenshots read on a machine with
    no Chinese system font."""
    Path(profile).mkdir(parents=True, exist_ok=True)
    screen = PHONE if phone else {"viewport": {"width": 1280, "height": 900}}
    return pw.chromium.launch_persistent_context(str(profile), executable_path=exe, args=CHROME_ARGS,
                                                 locale="en-US", env=font_env(Path(profile)), **screen)


def font_env(scratch: Path) -> dict:
    """The environment with a fontconfig file that adds the noto-cjk-sans-otc font to the system's fonts."""
    try:
        from jaxcourse.display import packaged_cjk_font
        font = packaged_cjk_font()
    except ImportError:
        font = None
    env = dict(os.environ)
    if font:
        conf = Path(scratch) / "course-fonts.conf"
        conf.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
                        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
                        f'  <dir>{Path(font).parent}</dir>\n  <cachedir>{Path(scratch) / "fontconfig"}</cachedir>\n'
                        '</fontconfig>\n', encoding="utf-8")
        env["FONTCONFIG_FILE"] = str(conf)
    return env


#: a saved output in the quick preview (course-preview.js), shown before JupyterLab is up
PREVIEW_OUTPUT = "#course-preview .cpv-output"
#: the preview draws only what is near the screen: scroll like a reader until a saved output is there
SCROLL_TO_FIRST_PREVIEW_OUTPUT = """async () => {
  const layer = document.getElementById("course-preview");
  for (let i = 0; i < 200 && !layer.querySelector(".cpv-output"); i++) {
    layer.scrollTop = layer.scrollHeight;
    await new Promise(ok => requestAnimationFrame(() => ok()));
  }
  const out = layer.querySelector(".cpv-output");
  if (out) out.scrollIntoView({block: "center"});
}"""


def preview_shown(page, timeout_ms: int = 30_000) -> float:
    """Seconds from navigation start to the frame that showed the quick preview (the page's own
    performance mark `course-preview-shown`, set by course-preview.js)."""
    page.wait_for_function("performance.getEntriesByName('course-preview-shown').length > 0", timeout=timeout_ms)
    return page.evaluate("performance.getEntriesByName('course-preview-shown')[0].startTime") / 1000


def time_first_output(page, url: str, index: int, timeout_ms: int = 30_000, marks: dict | None = None):
    """Navigate to `url`, wait until cell `index` shows an output; returns (seconds, output locator).

    With `marks`, first wait for the quick preview's first saved output and store in marks["preview"]
    the time of the page's own mark `course-preview-shown` (navigation start to the frame that showed
    the preview). Measured in the page because Playwright's calls queue behind JupyterLab's long tasks
    there; the reading UI's time (returned) is Playwright's wait, which is ~0.1 s late at most."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")   # not "load": that waits for every preloaded script
    if marks is not None:
        page.locator("#course-preview").wait_for(timeout=timeout_ms)
        page.evaluate(SCROLL_TO_FIRST_PREVIEW_OUTPUT)
        page.locator(PREVIEW_OUTPUT).first.wait_for(timeout=timeout_ms)
        marks["preview"] = preview_shown(page, timeout_ms)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.scroll_into_view_if_needed(timeout=timeout_ms)
    first = cell.locator(".jp-OutputArea-output").first
    first.wait_for(timeout=timeout_ms)
    return time.perf_counter() - t0, first


def lite_probe(notebook: Path) -> tuple[int, str]:
    """(index, saved text) of the first `lite` cell after the setup cell that has a saved text output:
    the cell whose first run `tools/site.py bench --lite` and the browser test time."""
    from .stage import first_printing_lite_cell

    found = first_printing_lite_cell(json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"])
    if found:
        return found
    raise SystemExit(f"ERROR {notebook} has no lite cell with a saved printed output after its setup cell")


#: a cell's prompt and output text, read in the page (no Playwright round trip per element)
CELL_STATE = """i => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  if (!c) return ['', ''];
  const p = c.querySelector('.jp-InputPrompt'), o = c.querySelector('.jp-OutputArea');
  return [p ? p.textContent.trim() : '', o ? o.innerText : '']; }"""
#: request URLs that mark the phases of a kernel start (worker, Pyodide core, packages, IPython up)
PHASES = (("worker", "comlink.worker"), ("pyodide core", "pyodide.asm.wasm"),
          ("first package", ".whl"), ("startup script", "_startup.py"))


def time_first_lite_run(page, url: str, index: int, timeout_ms: int = 120_000) -> dict:
    """Open `url` fresh, click lite cell `index` as soon as the notebook shows it, press Shift+Enter and
    wait for the fresh kernel's first result ([1]); returns seconds: click→output ('click'),
    navigation→output ('nav'), navigation→click ('shown'), the printed text ('text') and, when the
    page's requests show them, the moments of the kernel start's phases after the click ('phases')."""
    seen: dict[str, float] = {}
    t0 = time.perf_counter()
    clicked = [None]

    def on_request(req):
        if clicked[0] is None:
            return
        for name, part in PHASES:
            if name not in seen and part in req.url:
                seen[name] = time.perf_counter() - clicked[0]

    page.on("request", on_request)
    page.goto(url, wait_until="commit")
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.scroll_into_view_if_needed(timeout=timeout_ms)
    page.locator("#course-preview").wait_for(state="detached", timeout=timeout_ms)
    editor = cell.locator(".jp-InputArea-editor")
    editor.click(timeout=timeout_ms)
    clicked[0] = t_click = time.perf_counter()
    page.keyboard.press("Shift+Enter")
    end, state = time.monotonic() + timeout_ms / 1000, ["", ""]
    while time.monotonic() < end:
        state = page.evaluate(CELL_STATE, index)
        if state[0] == "[1]:" and state[1].strip():
            break
        time.sleep(0.05)
    else:
        raise TimeoutError(f"cell {index} shows {state[0]!r} {state[1][:200]!r} after {timeout_ms / 1000:.0f} s")
    t_out = time.perf_counter()
    page.remove_listener("request", on_request)
    return {"click": t_out - t_click, "nav": t_out - t0, "shown": t_click - t0, "text": state[1].strip(),
            "phases": seen}


#: where the cell with model id `id` and its output area are, relative to the notebook's visible area (px), the
#: notebook's visible height, its execution count and printed text
CELL_BY_ID = """id => { const nb = window.jupyterapp.shell.currentWidget.content;
  const w = nb.widgets.find(w => w.model.id === id);
  if (!w) return null;
  const top = nb.node.getBoundingClientRect().top, r = w.node.getBoundingClientRect();
  const o = w.node.querySelector('.jp-OutputArea'), q = o ? o.getBoundingClientRect() : null;
  return {index: nb.widgets.indexOf(w), active: nb.activeCellIndex, top: r.top - top, bottom: r.bottom - top,
          height: nb.node.clientHeight, output_top: q ? q.top - top : null, output_bottom: q ? q.bottom - top : null,
          count: w.model.executionCount, text: o ? o.innerText : ''}; }"""


def run_from_reading(page, static_url: str, cell_id: str, settle_s: float = 30.0, timeout_ms: int = 120_000) -> dict:
    """As a reader: on the static page `static_url`, click the 「在浏览器里运行」 link of cell `cell_id`; in the run
    view, wait until that cell is selected, drawn and has stopped moving (at most settle_s), note where it is, click
    into it, press Shift+Enter and wait for its first result. Returns seconds from the click on the reading page
    to the output ('click_to_output') and to the cell being selected ('click_to_cell'), the cell's box once
    settled ('settled') and after the run ('after')."""
    page.goto(static_url)
    link = page.locator(f"#cell-{cell_id} a.run")
    link.scroll_into_view_if_needed(timeout=timeout_ms)
    t0 = time.perf_counter()
    link.click()
    page.wait_for_function(NOTEBOOK_READY, timeout=timeout_ms)
    page.wait_for_function(f"id => {{ const b = ({CELL_BY_ID})(id); return b && b.active === b.index; }}",
                           arg=cell_id, timeout=timeout_ms)
    shown = time.perf_counter() - t0
    last, still_since, end = None, time.monotonic(), time.monotonic() + settle_s
    while time.monotonic() < end:
        box = page.evaluate(CELL_BY_ID, cell_id)
        if last is None or abs(box["top"] - last["top"]) > 1 or box["bottom"] - box["top"] < 1:   # not yet drawn
            still_since = time.monotonic()
        elif time.monotonic() - still_since > 1.0:
            break
        last = box
        time.sleep(0.1)
    settled = page.evaluate(CELL_BY_ID, cell_id)
    page.locator(".jp-Notebook .jp-Cell").nth(settled["index"]).locator(".jp-InputArea-editor").click(timeout=timeout_ms)
    page.keyboard.press("Shift+Enter")
    end, box = time.monotonic() + timeout_ms / 1000, settled
    while time.monotonic() < end:
        box = page.evaluate(CELL_BY_ID, cell_id)
        if box["count"] == 1 and box["text"].strip():
            break
        time.sleep(0.05)
    else:
        raise TimeoutError(f"cell {cell_id} shows count {box['count']!r} {box['text'][:200]!r} after {timeout_ms / 1000:.0f} s")
    out = time.perf_counter() - t0
    time.sleep(0.3)   # JupyterLab may scroll after a run: look where things end up
    return {"click_to_output": out, "click_to_cell": shown, "settled": settled,
            "after": page.evaluate(CELL_BY_ID, cell_id), "text": box["text"].strip()}


#: the run view's notebook is open and its cells exist (course-app.js has marked the lite ones)
NOTEBOOK_READY = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!(w && w.context && w.context.isReady && w.content && w.content.widgets.length > 0
            && !document.getElementById('course-preview')); }"""
#: run cell i with JupyterLab's own command (as Shift+Ctrl+Enter would: through course-app.js's guard),
#: wait until it has finished, return its outputs as nbformat JSON
RUN_CELL = """async ([i, seconds]) => {
  const app = window.jupyterapp, nb = app.shell.currentWidget.content;
  nb.deselectAll();
  nb.activeCellIndex = i;
  const cell = nb.widgets[i], t0 = performance.now();
  const run = app.commands.execute('notebook:run-cell').then(() => 'done');
  const late = new Promise(ok => setTimeout(() => ok('timeout'), seconds * 1000));
  const how = await Promise.race([run, late]);
  return {how, seconds: (performance.now() - t0) / 1000, count: cell.model.executionCount,
          outputs: cell.model.outputs ? cell.model.outputs.toJSON() : [], source: cell.model.sharedModel.getSource()};
}"""


def run_cells(page, indices: list[int], first_timeout: float = 180, timeout: float = 60) -> list[dict]:
    """Run the notebook cells `indices` in order in the page's own kernel (the first run may start it);
    returns, per cell, {'how': 'done' | 'timeout', 'seconds', 'count', 'outputs', 'source'}."""
    page.wait_for_function(NOTEBOOK_READY, timeout=first_timeout * 1000)
    got = []
    for n, i in enumerate(indices):
        got.append(page.evaluate(RUN_CELL, [i, first_timeout if n == 0 else timeout]))
        if got[-1]["how"] != "done":
            break
    return got


#: run code in the page's kernel without a cell (not in the history); returns what it printed
KERNEL_PRINT = """async code => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const future = k.requestExecute({code, store_history: false});
  future.onIOPub = m => { if (m.header.msg_type === 'stream') out += m.content.text;
                          if (m.header.msg_type === 'error') out += m.content.ename + ': ' + m.content.evalue; };
  await future.done;
  return out;
}"""
