"""Load-time benchmark: chapter 01's first saved output, this site against JupyterLite's defaults.

For this site two times come from the same load: `preview`, when the quick preview (course-preview.js)
shows the first saved output, and `course`, when the reading UI itself does.

Both variants are served from the same build. The baseline gets the app page as JupyterLite writes
it (post.stock_page: no preload hints, no course scripts, so the kernel starts when the notebook
opens), which is what the trial build measured. Every run is a new chromium with an empty profile
(cold cache); the two variants alternate, and which goes first alternates too, so a machine that
gets busier or quieter during the run shifts both alike. The ratio is the figure to compare
across machines; the absolute seconds depend on the machine (target: ≤ 3 s on this 2-core box).
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path

from . import browser, post, preload

VARIANTS = ("course", "stock")
#: what is reported: the two variants plus the quick preview of the course variant
FIGURES = ("preview", "course", "stock")
#: chromium's network emulation for --slow-network (CDP Network.emulateNetworkConditions)
SLOW_NETWORK = {"offline": False, "latency": 100, "downloadThroughput": 20e6 / 8, "uploadThroughput": 5e6 / 8}
SLOW_NETWORK_LABEL = "100 ms latency, 20 Mbit/s down"
#: pause after each browser closes, so its shutdown (and the stock variant's kernel) is not in the next run
SETTLE_S = 2.0


def bench(output: Path, chapter: str, exe: str, runs: int, pw=None, network: dict | None = None) -> dict:
    """Time `runs` cold loads of each variant; returns {'preview': [s...], 'course': [s...], 'stock': [s...]}.

    `pw`: a running Playwright (sync API) to use; by default one is started here.
    `network`: chromium network conditions to emulate (e.g. SLOW_NETWORK); None: localhost as it is."""
    from playwright.sync_api import sync_playwright

    if pw is None:
        with sync_playwright() as own:
            return bench(output, chapter, exe, runs, own, network)
    from .serve import make_server

    output = Path(output)
    index = browser.first_output_cell(output / "files" / chapter)
    stock_html = post.stock_page((output / preload.PAGE).read_text(encoding="utf-8"))
    httpd = make_server(output, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = browser.chapter_url(f"http://127.0.0.1:{httpd.server_address[1]}/", chapter)
    times: dict[str, list[float]] = {v: [] for v in FIGURES}
    try:
        for run in range(runs):
            for variant in (VARIANTS if run % 2 == 0 else VARIANTS[::-1]):
                with tempfile.TemporaryDirectory() as profile:
                    ctx = browser.launch(pw, profile, exe)
                    page = ctx.new_page()
                    if network:
                        cdp = ctx.new_cdp_session(page)
                        cdp.send("Network.enable")
                        cdp.send("Network.emulateNetworkConditions", network)
                    if variant == "stock":
                        preload.serve_page(page, stock_html)
                    marks = {} if variant == "course" else None
                    seconds, _ = browser.time_first_output(page, url, index, timeout_ms=90_000, marks=marks)
                    ctx.close()
                time.sleep(SETTLE_S)
                times[variant].append(seconds)
                if marks:
                    times["preview"].append(marks["preview"])
                shown = f" (quick preview {marks['preview']:.2f} s)" if marks else ""
                print(f"  run {run + 1}/{runs} {variant:6} {seconds:.2f} s{shown}", flush=True)
    finally:
        httpd.shutdown()
        httpd.server_close()
    return times


def report(times: dict) -> str:
    """Medians and the ratios against the stock page, one line each."""
    med = {v: statistics.median(times[v]) for v in FIGURES}
    lines = [f"{v:7} median {med[v]:.2f} s  ({' '.join(f'{t:.2f}' for t in times[v])})" for v in FIGURES]
    lines.append(f"ratio preview/stock = {med['preview'] / med['stock']:.2f}, "
                 f"course/stock = {med['course'] / med['stock']:.2f}  (first saved output, cold cache)")
    lines.append(f"target ≤ 3 s for the first saved output: "
                 f"{'met' if med['preview'] <= 3.0 else 'not met'} by the quick preview, "
                 f"{'met' if med['course'] <= 3.0 else 'not met'} by the reading UI, on this machine")
    return "\n".join(lines)
