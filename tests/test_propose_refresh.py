"""tools/propose_refresh.py on fixture notebooks in a throw-away git repository."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from nbfactory import code, md, write_notebook
from verify.proposal import repin, trim_sections

pytestmark = pytest.mark.slow


def _git(repo, *args):
    return subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def _repo(tmp_path, run_notebooks, notebooks: dict) -> tuple:
    """A git repo with content/课程/<name>.ipynb, each refreshed once, committed; returns (repo, paths)."""
    repo = tmp_path / "repo"
    paths = {name: write_notebook(repo / "content" / "课程" / f"{name}.ipynb", cells) for name, cells in notebooks.items()}
    run_notebooks(*paths.values(), refresh=True)
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixtures")
    return repo, paths


def _edit_saved_output(path, cell_index, old, new):
    """Pretend the saved output came from elsewhere: replace text in one cell's saved stream."""
    data = json.loads(path.read_text())
    out = data["cells"][cell_index]["outputs"][0]
    text = "".join(out["text"])
    assert old in text
    out["text"] = text.replace(old, new)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def _propose(repo, out):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "propose_refresh.py"), "--repo", str(repo),
                           str(repo / "content"), "--out", str(out), "--jobs", "2"],
                          capture_output=True, text=True, cwd=ROOT)
    return proc


def test_when_nothing_changed_then_no_patch_and_no_body(tmp_path, run_notebooks):
    repo, paths = _repo(tmp_path, run_notebooks, {"稳定": [md("# t"), code("print('x =', 0.5)")]})
    before = paths["稳定"].read_bytes()
    proc = _propose(repo, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["refresh.json", "report.md"]
    assert "nothing to propose" in (tmp_path / "out" / "report.md").read_text()
    assert paths["稳定"].read_bytes() == before


def test_when_outputs_drifted_then_body_lists_each_cell_with_class_and_diff_and_patch_applies(tmp_path, run_notebooks):
    repo, paths = _repo(tmp_path, run_notebooks, {
        "漂移": [code("print('loss =', 0.1234567)"), code("print('three')"), code("print('same')")],
        "不变": [code("print(1)")]})
    _edit_saved_output(paths["漂移"], 0, "0.1234567", "0.1334567")   # a float beyond tolerance
    _edit_saved_output(paths["漂移"], 1, "three", "two")              # a changed word
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "outputs from elsewhere")
    proc = _propose(repo, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    body = (tmp_path / "out" / "pr-body.md").read_text()
    assert "**2 cell(s) changed in 1 notebook(s).**" in body
    numeric = body.index("## numeric beyond tolerance")
    text = body.index("## repr/text change")
    assert numeric < body.index("cell 1 (id cell-1)") < text < body.index("cell 2 (id cell-2)")
    assert "numbers moved: `0.1334567` → `0.1234567`" in body
    assert "-loss = 0.1334567\n  +loss = 0.1234567" in body and "-two\n  +three" in body
    assert "content/课程/漂移.ipynb" in body and "不变.ipynb" not in body and "cell 3 (id" not in body
    assert "## modified /cells/0/outputs/0/text" in body and "< loss = 0.1334567" in body  # nbdime's own diff
    assert "| jax | `0.12.0.1` | `0.12.0.1` |" in body and "saved output → refreshed output" in body
    patch = (tmp_path / "out" / "refresh.patch").read_text()
    assert "content/课程/漂移.ipynb" in patch and "不变" not in patch
    _git(repo, "stash", "-q")  # the patch applies to the commit it was made from
    _git(repo, "apply", "--check", str(tmp_path / "out" / "refresh.patch"))


def test_when_an_assert_fails_then_nothing_is_proposed_and_every_notebook_is_put_back(tmp_path, run_notebooks):
    repo, paths = _repo(tmp_path, run_notebooks, {
        "断言": [code("x = 3"), code("assert x == 3, '结论变了'")],
        "漂移": [code("print('three')")]})
    _edit_saved_output(paths["漂移"], 0, "three", "two")
    data = json.loads(paths["断言"].read_text())
    data["cells"][0]["source"] = "x = 4"
    paths["断言"].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "JAX changed")
    saved = {name: p.read_bytes() for name, p in paths.items()}
    proc = _propose(repo, tmp_path / "out")
    assert proc.returncode == 1
    assert not (tmp_path / "out" / "refresh.patch").exists() and not (tmp_path / "out" / "pr-body.md").exists()
    report = (tmp_path / "out" / "report.md").read_text()
    assert "The refresh failed" in report and "## assert failed" in report and "结论变了" in report
    assert {name: p.read_bytes() for name, p in paths.items()} == saved
    assert "ERROR The refresh failed" in proc.stderr


def test_when_notebooks_have_uncommitted_changes_then_it_refuses_and_says_why(tmp_path, run_notebooks):
    repo, paths = _repo(tmp_path, run_notebooks, {"草稿": [code("print(1)")]})
    paths["草稿"].write_text(paths["草稿"].read_text().replace("print(1)", "print(2)"))
    proc = _propose(repo, tmp_path / "out")
    assert proc.returncode == 2
    assert "uncommitted changes" in proc.stderr and "commit or stash" in proc.stderr


def test_repin_changes_only_the_named_pins_and_trim_keeps_section_heads():
    text = '"jax==0.12.0.1",\n"jaxlib==0.12.0.1",\n"numpy>=2.0",\n"optax==0.2.8",\n'
    assert repin(text, {"jax": "0.13.0", "jaxlib": "0.13.0"}) == text.replace("0.12.0.1", "0.13.0")
    long = "## modified /cells/1\n" + "\n".join(f"+ line {i}" for i in range(100)) + "\n## deleted /cells/2\n- x"
    trimmed = trim_sections(long, limit=5).splitlines()
    assert trimmed[:2] == ["## modified /cells/1", "+ line 0"] and "… (95 more lines)" in trimmed
    assert trimmed[-2:] == ["## deleted /cells/2", "- x"]
