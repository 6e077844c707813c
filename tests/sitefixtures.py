"""Shared pieces of the browser tests: the built site served on 127.0.0.1 and a chromium for it.

The site is built once per test session (built_site); each browser test module serves its own copy of that
build (site, module-scoped), so a test may rebuild its copy (the update test does) without touching the other
modules'. Import the three fixtures (built_site, site, browser) into a test module to use them.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from sitebuild import CONTENT, FIRST_CHAPTER, LANDING, browser as sitebrowser  # noqa: E402
from sitebuild.build import build  # noqa: E402
from sitebuild.demo import write_demo  # noqa: E402
from sitebuild.serve import running  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts" / "site"
CHAPTER = FIRST_CHAPTER


def _chromium() -> str:
    exe = sitebrowser.chromium()
    if exe:
        return exe
    msg = sitebrowser.INSTALL_HINT
    if os.environ.get("VERIFY_REQUIRE_BROWSER") == "1":
        pytest.fail(msg + "; VERIFY_REQUIRE_BROWSER=1 requires the browser test")
    pytest.skip(msg)


def _code_cells(nb_path: Path) -> list[dict]:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return [dict(c, index=i) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def _text(cell: dict) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "stream":
            out.append("".join(o["text"]))
        elif "data" in o and "text/plain" in o["data"]:
            out.append("".join(o["data"]["text/plain"]))
    return "".join(out).strip()


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The offline site, built once for the whole test session into a temp folder (never served or changed)."""
    exe = _chromium()
    tmp = tmp_path_factory.mktemp("site-build")
    real = (CONTENT / LANDING).exists() and (CONTENT / CHAPTER).exists()
    contents = CONTENT if real else write_demo(tmp / "demo")
    output = tmp / "_output"
    t0 = time.perf_counter()
    summary = build(offline_build=True, contents=contents, output=output, quiet=True, work=tmp / "work")
    print(f"\nsite: {'content/' if real else 'demo course'}; build {time.perf_counter() - t0:.1f} s, "
          f"{summary['total_bytes'] / 1e6:.1f} MB")
    return {"output": output, "exe": exe, "contents": Path(contents), "summary": summary}


@pytest.fixture(scope="module")
def site(built_site, tmp_path_factory):
    """This module's own copy of the session's build, served on 127.0.0.1 (port chosen by the OS)."""
    tmp = tmp_path_factory.mktemp("site")
    output = shutil.copytree(built_site["output"], tmp / "_output", symlinks=True)
    with running(output) as base:
        yield {"base": base, "output": output, "exe": built_site["exe"], "contents": built_site["contents"],
               "tmp": tmp, "summary": built_site["summary"]}


@pytest.fixture(scope="module")
def browser(site):
    """A headless Debian chromium with a fresh profile; requests off 127.0.0.1 are aborted and recorded."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    outside: list[str] = []
    with sync_playwright() as pw:
        opened = []

        def route(r):
            if r.request.url.startswith(site["base"]) or r.request.url.startswith("ws://127.0.0.1"):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        def fresh(phone: bool = False):
            """A new browser with an empty profile: cold cache, nothing else running (phone: 390×844, touch)."""
            ctx = sitebrowser.launch(pw, site["tmp"] / f"profile{len(opened)}", site["exe"], phone=phone)
            ctx.route("**/*", route)
            opened.append(ctx)
            return ctx

        yield {"ctx": fresh(), "fresh": fresh, "outside": outside, "pw": pw}
        for ctx in opened:
            ctx.close()
