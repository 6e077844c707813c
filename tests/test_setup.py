"""The README's set-up: finds a Python ≥ 3.12 by itself, stops clearly without one, is idempotent."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
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
    for name in ("dev", "pyproject.toml"):
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
