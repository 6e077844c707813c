"""A chapter's setup cells on a machine that has only JAX: the helper package installs itself.

This is what Colab does with a chapter opened from GitHub: no clone, no ./dev setup, JAX already
there. The setup cell (CONTRIBUTING §8) pip-installs jaxcourse from the course repository; here a
file:// URL of this repository stands in for GitHub (JAXCOURSE_SOURCE), in a fresh virtual
environment that gets nothing but JAX.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from coursemodel.contract import helper_source, setup_source  # noqa: E402

CHAPTER = ROOT / "content" / "入门" / "01_JAX简介.ipynb"
PINNED_JAX = "0.12.0.1"


def _code(nb_path: Path) -> list[str]:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_setup_cell_names_the_configured_repository():
    from sitebuild import project_config

    cfg = project_config(env={})
    first = _code(CHAPTER)[0]
    assert first == setup_source(cfg["repository"], cfg["branch"])
    assert helper_source(cfg["repository"], cfg["branch"]) in first
    assert helper_source("a/b", "dev") == "git+https://github.com/a/b@dev#subdirectory=content"


@pytest.mark.slow
@pytest.mark.network   # JAX from the package index, setuptools for building jaxcourse
def test_chapter_setup_installs_the_helper_where_it_is_missing(tmp_path):
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout: pip cannot clone it")
    venv = tmp_path / "colab-like"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    t0 = time.perf_counter()
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          f"jax=={PINNED_JAX}", f"jaxlib=={PINNED_JAX}"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-2000:]
    t_jax = time.perf_counter() - t0
    has = subprocess.run([str(py), "-c", "import jaxcourse"], capture_output=True)
    assert has.returncode != 0, "the fresh environment already has jaxcourse"

    work = tmp_path / "notebook-dir"    # no ../jaxcourse next to it, as on Colab
    work.mkdir()
    cells = _code(CHAPTER)[:2]
    script = "\n\n".join(cells) + ("\nprint('HELPER', jaxcourse.__file__)\n"
                                    "import jaxcourse.minijax as mj\nprint('MODEL', mj.grad(lambda x: x ** 3)(2.0))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["JAXCOURSE_SOURCE"] = f"git+file://{ROOT}#subdirectory=content"
    t0 = time.perf_counter()
    run = subprocess.run([str(py), "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    t_setup = time.perf_counter() - t0
    print(f"\nfresh venv: JAX installed in {t_jax:.1f} s; chapter 01's setup cells (pip-installing jaxcourse "
          f"from the repository) ran in {t_setup:.1f} s")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    helper = next(line.split(" ", 1)[1] for line in run.stdout.splitlines() if line.startswith("HELPER "))
    assert Path(helper).resolve().is_relative_to(venv.resolve()), f"jaxcourse came from {helper}, not the venv"
    assert f"JAX {PINNED_JAX}" in run.stdout, run.stdout
    assert "MODEL 12.0" in run.stdout, "the pip-installed helper lacks the mini-JAX the lite cells import"
