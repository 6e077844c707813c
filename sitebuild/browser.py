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
INSTALL_HINT = ("Debian's chromium is not installed: sudo apt-get install chromium fonts-noto-cjk "
                "(never 'playwright install')")


def chromium() -> str | None:
    """Path of Debian's chromium, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


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
