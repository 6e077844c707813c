"""Run `jupyter lite build` on staged contents and lite dir, then post-process `_output/`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from . import (CACHE, CONTENT, LANDING, LITE_DIR, OUTPUT, PACKAGE, ROOT, WORK, extension, github_remote, offline, post,
               project_config, reading, search, serve, stage)

STORAGE_PREFIX = "jax-study-zh"


def stage_lite(dest: Path, release: str, offline_build: bool) -> None:
    """Copy lite/ to `dest` and set the per-release storage name (and offline kernel settings)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(LITE_DIR, dest, ignore=shutil.ignore_patterns("static", "pypi"))
    if (LITE_DIR / "static").is_dir():
        shutil.copytree(LITE_DIR / "static", dest / "static", ignore=shutil.ignore_patterns("pyodide"))
    path = dest / "jupyter-lite.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    data = cfg.setdefault("jupyter-config-data", {})
    data["contentsStorageName"] = f"{STORAGE_PREFIX}/{release}"
    data["exposeAppInBrowser"] = True   # window.jupyterapp: the browser tests and bench read the app through it
    if offline_build:
        kernel = data.setdefault("litePluginSettings", {}).setdefault(
            "@jupyterlite/pyodide-kernel-extension:kernel", {})
        kernel["disablePyPIFallback"] = True
    path.write_text(json.dumps(cfg, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def package_version(contents: Path) -> str:
    """The helper package's version from contents/pyproject.toml (the file Colab installs it with), else 0."""
    try:
        return tomllib.loads((contents / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0"


def build(*, offline_build: bool = True, contents: Path = CONTENT, output: Path = OUTPUT,
          quiet: bool = False, work: Path = WORK) -> dict:
    """Build the site into `output`, staging in `work`; returns a summary (release, sizes, seconds)."""
    t0 = time.perf_counter()
    fingerprint = serve.inputs_fingerprint(contents, offline_build)
    cfg = project_config(remote=github_remote())
    if cfg["source"].startswith("pyproject") and not os.environ.get("GITHUB_REPOSITORY"):
        print(f"WARNING no GitHub remote 'origin' here: the Colab links and run buttons assume github.com/"
              f"{cfg['repository']} from pyproject.toml; if that is not where this course is published they lead "
              "to a 404. Add the remote (git remote add origin https://github.com/OWNER/NAME) or set "
              "[tool.jaxcourse] repository.", file=sys.stderr)
    if not quiet:
        print(f"* Colab links point to github.com/{cfg['repository']} (branch {cfg['branch']}; from {cfg['source']})",
              file=sys.stderr)
    configured = project_config(env={})["repository"]
    if configured != cfg["repository"]:
        print(f"WARNING the notebooks' setup cells install jaxcourse from github.com/{configured} (pyproject.toml), "
              f"but this site is built for {cfg['repository']}: set [tool.jaxcourse] repository = "
              f"\"{cfg['repository']}\" and run .venv/bin/python tools/check_structure.py --fix-setup", file=sys.stderr)
    staged, lite = work / "contents", work / "lite"
    release = stage.stage_contents(Path(contents), staged, cfg)
    for name in stage.unlinked_chapters(staged, LANDING):
        print(f"WARNING {LANDING} does not link to {name}: readers cannot reach it in one click",
              file=sys.stderr)
    stage_lite(lite, release, offline_build)
    bundled = None
    if offline_build:
        bundled = offline.bundle(lite, CACHE, staged / PACKAGE, package_version(Path(contents)))
        offline.kernel_options(lite, bundled)
    if output.exists():
        shutil.rmtree(output)
    for db in [*ROOT.glob(".jupyterlite.doit.db*"), *work.glob(".jupyterlite.doit.db*")]:   # wrong once _output is gone
        db.unlink()
    extension.configure(lite, extension.write(work / "course-app-extension", cfg))
    cmd = [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite),
           "--contents", str(staged), "--output-dir", str(output)]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)   # its task database lands in work
    if proc.returncode:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"ERROR jupyter lite build failed (exit {proc.returncode}); its output is above")
    preloads = post.finish(output, storage_prefix=STORAGE_PREFIX, release=release, cache=CACHE)
    if preloads["missing"]:
        print(f"WARNING {len(preloads['missing'])} scripts in sitebuild/preload.txt are not in this build "
              f"(first: {preloads['missing'][0]}); the first chapter loads slower until you re-record it: "
              ".venv/bin/python tools/site.py preload", file=sys.stderr)
    pages = reading.write_site(Path(contents), output, cfg)
    found = search.index(output)
    summary = {"release": release, "pages": len(pages), "search_bytes": found["bytes"], "offline": offline_build, "bundled": bundled, "preloads": preloads["injected"],
               "seconds": round(time.perf_counter() - t0, 1), **post.sizes(output)}
    (output / serve.STAMP).write_text(fingerprint)
    (output / ".build.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n")
    if not quiet:
        mode = "offline (Pyodide bundled)" if offline_build else "CDN Pyodide"
        print(f"* built {output} in {summary['seconds']} s, {mode}, release {release}: "
              f"{summary['total_bytes'] / 1e6:.1f} MB in {summary['files']} files", file=sys.stderr)
    return summary
