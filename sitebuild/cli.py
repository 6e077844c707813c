"""Build and serve the JupyterLite reading site.

    tools/site.py build [--cdn] [--contents DIR] [--output DIR]
    tools/site.py serve [--cdn] [--no-build] [--port N]     (port: --port, $PORT, or 8000)
    tools/site.py fetch     download once what the offline build needs into .site-cache/ (./dev setup site runs it)
    tools/site.py preload   re-record sitebuild/preload.txt in Debian's chromium, then rebuild
    tools/site.py bench [--runs N] [--no-build]   chapter 01: the static page vs the JupyterLab reading view
    tools/site.py bench --jupyterlab [--runs N] [--no-build] [--slow-network]   the JupyterLab view vs JupyterLite defaults
    tools/site.py bench --lite [--runs N] [--no-build]   chapter 01: first click on a lite cell to its output
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import CACHE, CONTENT, FIRST_CHAPTER, OUTPUT, bench, browser, offline, preload
from .build import build
from .serve import needs_build, serve


def main(argv=None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(prog="tools/site.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("preload", help="re-record the scripts to preload (after a JupyterLite upgrade)")
    sub.add_parser("fetch", help="download once what the offline build needs into .site-cache/ (./dev setup site runs it)")
    b = sub.add_parser("bench", help="time chapter 01 cold: the static reading page against the JupyterLab view")
    b.add_argument("--runs", type=int, default=None, help="cold loads per variant (default 3; 7 with --jupyterlab)")
    b.add_argument("--jupyterlab", action="store_true",
                   help="instead: the JupyterLab reading view (quick preview, course scripts) vs JupyterLite defaults")
    b.add_argument("--lite", action="store_true",
                   help="instead: the first click on a lite cell to its output, kernel start included")
    b.add_argument("--no-build", action="store_true", help="measure the existing offline build in _output/")
    b.add_argument("--slow-network", action="store_true",
                   help=f"emulate a slow link in chromium ({bench.SLOW_NETWORK_LABEL})")
    for name in ("build", "serve"):
        p = sub.add_parser(name)
        p.add_argument("--cdn", action="store_true",
                       help="load Pyodide (with NumPy) from the jsDelivr CDN instead of bundling it offline")
        p.add_argument("--contents", type=Path, default=CONTENT, help="contents folder (default: content/)")
        p.add_argument("--output", type=Path, default=OUTPUT, help="output folder (default: _output/)")
    srv = sub.choices["serve"]
    srv.add_argument("--no-build", action="store_true", help="serve the existing output as it is")
    srv.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: $PORT or 8000)")
    args = ap.parse_args(argv)
    if args.cmd == "preload":
        return record_preloads()
    if args.cmd == "fetch":
        cached = offline.prefetch(CACHE)
        print(f"* the site's downloads are in {CACHE.name}/ ({len(cached)} files); building it needs no network now")
        return 0
    if args.cmd == "bench":
        if args.lite:
            return run_bench_lite(args.runs or 3, args.no_build)
        if args.jupyterlab:
            return run_bench(args.runs or 7, args.no_build, args.slow_network)
        return run_bench_reading(args.runs or 3, args.no_build)
    if args.cmd == "build" or (not args.no_build and needs_build(args.output, args.contents, not args.cdn)):
        build(offline_build=not args.cdn, contents=args.contents, output=args.output.resolve())
    if args.cmd == "serve":
        serve(args.output, args.port)
    return 0


def _chromium() -> str:
    exe = browser.chromium()
    if not exe:
        raise SystemExit("ERROR " + browser.INSTALL_HINT)
    return exe


def record_preloads() -> int:
    """Build offline, record the scripts chapter 01 loads before its first output, rebuild with them."""
    exe = _chromium()
    build(offline_build=True, contents=CONTENT, output=OUTPUT, quiet=True)
    preload.record(OUTPUT, FIRST_CHAPTER, exe)
    build(offline_build=True, contents=CONTENT, output=OUTPUT)
    return 0


def _bench_site(runs: int, no_build: bool) -> str:
    if runs < 1:
        raise SystemExit(f"ERROR --runs {runs}: give at least 1 (3 or more for a stable median)")
    exe = _chromium()
    if not no_build:
        build(offline_build=True, contents=CONTENT, output=OUTPUT, quiet=True)
    elif not (OUTPUT / preload.PAGE).exists():
        raise SystemExit(f"ERROR {OUTPUT} has no built site; run without --no-build")
    return exe


def run_bench_reading(runs: int, no_build: bool) -> int:
    """Print chapter 01's static page against its JupyterLab reading view (phone on a slow link, localhost)."""
    exe = _bench_site(runs, no_build)
    print(bench.report_reading(bench.bench_reading(OUTPUT, FIRST_CHAPTER, exe, runs)))
    return 0


def run_bench(runs: int, no_build: bool, slow_network: bool = False) -> int:
    """Print chapter 01's cold first-output time for this site and for JupyterLite's defaults."""
    exe = _bench_site(runs, no_build)
    network = bench.SLOW_NETWORK if slow_network else None
    print(bench.report(bench.bench(OUTPUT, FIRST_CHAPTER, exe, runs, network=network)))
    return 0


def run_bench_lite(runs: int, no_build: bool) -> int:
    """Print chapter 01's first-click-to-output time of a lite cell, cold, kernel start included."""
    exe = _bench_site(runs, no_build)
    print(bench.report_lite(bench.bench_lite(OUTPUT, FIRST_CHAPTER, exe, runs), FIRST_CHAPTER))
    return 0
