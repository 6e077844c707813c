"""Serve the built site on 127.0.0.1, and decide whether it needs a rebuild first."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import io
import os
import sys
import threading
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

from . import LITE_DIR, ROOT

STAMP = ".inputs"  # fingerprint of the inputs, written by the build

#: text types name their charset: the pages and course scripts hold Chinese text
TYPES = {".mjs": "text/javascript; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".wasm": "application/wasm",
         ".json": "application/json", ".ipynb": "application/json", ".whl": "application/octet-stream"}


def inputs_fingerprint(contents: Path, offline_build: bool) -> str:
    """Hash of every input of the build (names, sizes, mtimes) and the build mode."""
    h = hashlib.sha256(str(offline_build).encode())
    roots = [Path(contents), LITE_DIR, ROOT / "pyproject.toml",
             Path(__file__).parent]
    for root in roots:
        for p in sorted([root] if root.is_file() else root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                st = p.stat()
                h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def needs_build(output: Path, contents: Path, offline_build: bool) -> bool:
    """True when `output` is missing or was built from other inputs or in the other mode."""
    stamp = Path(output) / STAMP
    return not (stamp.exists() and stamp.read_text() == inputs_fingerprint(contents, offline_build)
                and (Path(output) / "index.html").exists())


#: text files sent gzip-compressed to a browser that accepts it, as GitHub Pages does
COMPRESSED = {".html", ".js", ".mjs", ".css", ".json", ".ipynb", ".svg", ".txt", ".py"}


@functools.lru_cache(maxsize=512)
def _gzipped(path: str, mtime_ns: int) -> bytes:
    return gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the types JupyterLite needs, text gzip-compressed, and no caching surprises."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path) and urllib.parse.urlsplit(self.path).path.endswith("/"):
            path = os.path.join(path, "index.html")
        if (os.path.isfile(path) and Path(path).suffix in COMPRESSED
                and "gzip" in self.headers.get("Accept-Encoding", "")):
            data = _gzipped(path, os.stat(path).st_mtime_ns)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Vary", "Accept-Encoding")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return io.BytesIO(data)
        return super().send_head()

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, fmt, *args):
        if os.environ.get("SITE_SERVE_LOG"):
            super().log_message(fmt, *args)


class Server(http.server.ThreadingHTTPServer):
    """Threading server that stays quiet when a browser drops a connection mid-transfer."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


def make_server(output: Path, port: int) -> Server:
    """An HTTP server for `output` bound to 127.0.0.1:port (port 0: any free port)."""
    handler = functools.partial(Handler, directory=str(output))
    return Server(("127.0.0.1", port), handler)


@contextmanager
def running(output: Path):
    """Serve `output` on a free 127.0.0.1 port in a background thread; yields the base URL ("http://…/")."""
    httpd = make_server(Path(output), 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def serve(output: Path, port: int | None) -> None:
    """Serve `output` until Ctrl+C."""
    output = Path(output)
    if not (output / "index.html").exists():
        raise SystemExit(f"ERROR {output} has no built site; run: .venv/bin/python tools/site.py build")
    port = port if port is not None else int(os.environ.get("PORT", "8000"))
    try:
        httpd = make_server(output, port)
    except OSError as e:
        raise SystemExit(f"ERROR cannot listen on 127.0.0.1:{port} ({e.strerror}); "
                         "TIP  pick another port: PORT=8123 ./dev serve")
    print(f"* serving {output} at http://127.0.0.1:{port}/  (Ctrl+C stops)", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print("\n* stopped", file=sys.stderr)
    finally:
        httpd.server_close()
