"""The README's set-up: finds a Python ≥ 3.12 by itself, stops clearly without one, is idempotent."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT


def test_readme_quick_start_holds_exactly_two_commands():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## 快速开始", 1)[1]
    block = re.search(r"```(?:bash|sh|shell)\n(.*?)```", section, re.S).group(1)
    lines = [ln for ln in block.splitlines() if ln.strip()]
    assert lines == ["./dev serve", "./dev test"]


def test_when_no_python_312_exists_then_setup_stops_with_what_to_install(tmp_path):
    for name in ("dev", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    old = fake_bin / "python3"  # a Python that is too old, first on PATH
    old.write_text("#!/bin/sh\nexit 1\n")
    old.chmod(0o755)
    env = {"PATH": f"{fake_bin}:/usr/bin:/bin", "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "no-pyenv")}
    if any(shutil.which(f"python3.{m}", path="/usr/bin:/bin") for m in (12, 13, 14)):
        pytest.skip("this machine has a system Python ≥ 3.12 in /usr/bin: the no-Python case cannot be staged")
    proc = subprocess.run(["bash", str(tmp_path / "dev"), "setup"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Python ≥ 3.12" in proc.stderr and "pyenv install" in proc.stderr
    assert not (tmp_path / ".venv").exists()


def test_when_nothing_changed_then_setup_takes_under_5_seconds():
    subprocess.run([str(ROOT / "dev"), "setup"], check=True, capture_output=True)
    t0 = time.monotonic()
    subprocess.run([str(ROOT / "dev"), "setup"], check=True, capture_output=True)
    assert time.monotonic() - t0 < 5
    kernel = ROOT / ".venv" / "share" / "jupyter" / "kernels" / "jax-study" / "kernel.json"
    assert "Python (JAX \\u5b66\\u4e60)" in kernel.read_text() or "Python (JAX 学习)" in kernel.read_text()
    assert os.path.realpath(kernel.parent).startswith(str(ROOT))


def _staged(tmp_path, python_line=None):
    """dev, pyproject.toml and constraints.txt copied to tmp_path (the lock's python line replaced)."""
    for name in ("dev", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    if python_line:
        lock = tmp_path / "constraints.txt"
        lock.write_text(re.sub(r"^# python: .*$", f"# python: {python_line}", lock.read_text(), flags=re.M))
    return tmp_path / "dev"


def _offline_env(tmp_path, **extra):
    """No package index: pip fails at once, which is all these tests need of it."""
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "",
            "PIP_CONFIG_FILE": os.devnull, "PYENV_ROOT": str(tmp_path / "no-pyenv"), **extra}


def test_when_pip_fails_then_setup_fails_loudly_and_leaves_no_stamp(tmp_path):
    dev = _staged(tmp_path)
    env = _offline_env(tmp_path, JAX_STUDY_PYTHON=sys.executable)
    (tmp_path / ".venv").mkdir()
    for attempt in range(2):   # the second run must try again, not skip set-up as done
        t0 = time.monotonic()
        proc = subprocess.run(["bash", str(dev), "setup"], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 2, proc.stderr
        assert "pip could not install the pinned environment" in proc.stderr and "setup-pip.log" in proc.stderr
        assert not (tmp_path / ".venv" / ".setup-stamp").exists()
        assert time.monotonic() - t0 > 0.5
        (tmp_path / ".venv" / ".setup-stamp").write_text("stale")   # an old stamp is dropped before pip runs


def _python(minor):
    for c in [shutil.which(f"python{minor}")] + sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{minor}.*/bin/python3"))):
        if c and subprocess.run([c, "-c", f"import sys; assert sys.version.startswith('{minor}.')"],
                                capture_output=True).returncode == 0:
            return c
    return None


def test_setup_prefers_the_python_the_outputs_were_made_with_and_says_which_it_chose(tmp_path):
    py312, py313 = _python("3.12"), _python("3.13")
    if not (py312 and py313):
        pytest.skip("needs Python 3.12 and 3.13 on this machine")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for name, target in (("python3.12", py312), ("python3.13", py313)):
        (fake_bin / name).write_text(f"#!/bin/sh\nexec {target} \"$@\"\n")
        (fake_bin / name).chmod(0o755)
    env = _offline_env(tmp_path, PATH=f"{fake_bin}:/usr/bin:/bin")
    proc = subprocess.run(["bash", str(_staged(tmp_path, "3.12")), "setup"], capture_output=True, text=True, env=env, timeout=300)
    assert "* Python 3.12 (" in proc.stderr and "made with Python 3.12" in proc.stderr, proc.stderr
    shutil.rmtree(tmp_path / ".venv")
    proc = subprocess.run(["bash", str(_staged(tmp_path, "3.11")), "setup"], capture_output=True, text=True, env=env, timeout=300)
    assert "* Python 3.13 (" in proc.stderr and "made with Python 3.11, which is not installed here" in proc.stderr
    assert "note, not a failure" in proc.stderr


def test_a_learners_setup_installs_no_maintainer_tools():
    """./dev setup gives a learner the course (JAX, the kernel); the harness, tests and site builder are extras
    that ./dev test and ./dev serve install for themselves."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name = lambda req: re.split(r"[<>=\[; ]", req, maxsplit=1)[0].lower()   # noqa: E731
    core = {name(r) for r in project["dependencies"]}
    assert {"jax", "jaxlib", "ipykernel"} <= core
    assert not core & {"pytest", "playwright", "zizmor", "nbclient", "pagefind", "jupyterlite-core"}
    extras = {k: {name(r) for r in v} for k, v in project["optional-dependencies"].items()}
    assert {"pytest", "playwright", "nbclient"} <= extras["test"] and {"jupyterlite-core", "pagefind"} <= extras["site"]
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    assert "setup test,site" in dev and "setup site;" in dev


def test_setup_skips_only_when_the_stamp_covers_the_extras_asked_for(tmp_path):
    dev = _staged(tmp_path)
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    kernel = venv / "share" / "jupyter" / "kernels" / "jax-study" / "kernel.json"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("{}")
    digest = subprocess.run(["bash", "-c", "{ cat pyproject.toml constraints.txt; uname -sm; } | sha256sum | cut -c1-16"],
                            cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    env = _offline_env(tmp_path, JAX_STUDY_PYTHON=sys.executable)
    setup = lambda *extras: subprocess.run(["bash", str(dev), "setup", *extras], capture_output=True,   # noqa: E731
                                           text=True, env=env, timeout=300)
    (venv / ".setup-stamp").write_text(f"{digest} site,test\n")
    assert setup().returncode == 0 and setup("test,site").returncode == 0 and setup("site").returncode == 0
    (venv / ".setup-stamp").write_text(f"{digest} \n")     # a learner's environment
    assert setup().returncode == 0
    proc = setup("site")                                   # needs the site extras: pip runs (and fails offline)
    assert proc.returncode == 2 and "pip could not install" in proc.stderr and "[site]" in proc.stderr
    assert setup("bogus").returncode == 2
