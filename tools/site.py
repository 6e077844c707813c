"""Build and serve the JupyterLite reading site.

    tools/site.py build [--cdn] [--contents DIR] [--output DIR]
    tools/site.py serve [--cdn] [--no-build] [--port N]     (port: --port, $PORT, or 8000)
    tools/site.py preload   re-record tools/sitebuild/preload.txt in Debian's chromium, then rebuild
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sitebuild import CONTENT, FIRST_CHAPTER, OUTPUT, preload  # noqa: E402
from sitebuild.build import build  # noqa: E402
from sitebuild.serve import needs_build, serve  # noqa: E402


def main(argv=None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(prog="tools/site.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("preload", help="re-record the scripts to preload (after a JupyterLite upgrade)")
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
    if args.cmd == "build" or (not args.no_build and needs_build(args.output, args.contents, not args.cdn)):
        build(offline_build=not args.cdn, contents=args.contents, output=args.output.resolve())
    if args.cmd == "serve":
        serve(args.output, args.port)
    return 0


def record_preloads() -> int:
    """Build offline, record the scripts chapter 01 loads before its first output, rebuild with them."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise SystemExit("ERROR Debian's chromium is not installed: sudo apt-get install chromium fonts-noto-cjk "
                         "(never 'playwright install')")
    build(offline_build=True, contents=CONTENT, output=OUTPUT, quiet=True)
    preload.record(OUTPUT, FIRST_CHAPTER, exe)
    build(offline_build=True, contents=CONTENT, output=OUTPUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
