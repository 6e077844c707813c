"""Comparison rules beyond plain text: numeric tolerance, new warnings, triage and reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conftest import ROOT
from nbfactory import code, write_notebook
from verify.compare import numbers_close, same_outputs
from verify.triage import classify, grouped, junit_xml, markdown_report


def _stream(text, name="stdout"):
    return [{"output_type": "stream", "name": name, "text": text}]


def test_when_a_float_moves_by_1e_7_then_numeric_tolerance_passes_and_says_so():
    equal, _, fired = same_outputs(_stream("loss = 0.1234567\n"), _stream("loss = 0.1234568\n"))
    assert equal and any("numeric within tolerance" in f for f in fired)


def test_when_a_float_moves_by_1e_2_then_text_differs():
    equal, diff, _ = same_outputs(_stream("loss = 0.1234567\n"), _stream("loss = 0.1334567\n"))
    assert not equal and "+loss = 0.1334567" in diff


def test_when_an_integer_changes_then_tolerance_never_hides_it():
    assert not same_outputs(_stream("compiled 1 times\n"), _stream("compiled 2 times\n"))[0]


@pytest.mark.parametrize("saved, fresh", [
    ("[0 1 2]\n", "[0. 1. 2.]\n"),
    ("shape (3, 4)\n", "shape (3., 4.)\n"),
    ("Array(2, dtype=int32)\n", "Array(2., dtype=int32)\n"),
    ("count 7\n", "count 7.0000001\n"),
], ids=["array", "shape", "scalar", "int-to-near-float"])
def test_when_an_integer_is_printed_as_a_float_then_it_differs(saved, fresh):
    """A dtype change is what the course exists to catch: `within` accepts float pairs only."""
    equal, diff, _ = same_outputs(_stream(saved), _stream(fresh))
    assert not equal and f"+{fresh.strip()}" in diff


def _image(width, pixels="AAAA"):
    return [{"output_type": "display_data", "data": {"image/png": pixels, "text/plain": "<Figure>"},
             "metadata": {"image/png": {"width": width, "height": 200}}}]


def test_images_compare_by_display_size_not_pixels():
    """Pixels differ between machines and matplotlib versions; the size a reader sees does not."""
    assert same_outputs(_image(400, "AAAA"), _image(400, "BBBB"))[0]
    equal, diff, _ = same_outputs(_image(400), _image(300))
    assert not equal and "image/png@400x200" in diff and "image/png@300x200" in diff


def test_float64_outputs_get_tighter_tolerance_and_cells_can_loosen_it():
    a, b = "Array(1.00000000001, dtype=float64)", "Array(1.00000000002, dtype=float64)"
    assert not numbers_close(a, b, 1e-12, 1e-14)
    assert not same_outputs(_stream(a), _stream(b))[0]
    assert same_outputs(_stream("x 1.0\n"), _stream("x 1.01\n"), tolerance={"rtol": 0.1})[0]


def _run(tmp_path, paths, *extra):
    report = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools/run_all.py"), *map(str, paths), "--no-cache",
                           "--json", str(report), *extra], capture_output=True, text=True, cwd=ROOT)
    return proc, json.loads(report.read_text()) if report.exists() else None


def test_when_a_new_deprecation_warning_appears_then_check_fails_unless_declared(tmp_path, run_notebooks):
    src = "import warnings\nif {flag}:\n    warnings.warn('old api', DeprecationWarning, stacklevel=1)\nprint('done')"
    strict = write_notebook(tmp_path / "warn_strict.ipynb", [code(src.format(flag="False"))])
    declared = write_notebook(tmp_path / "warn_declared.ipynb",
                              [code(src.format(flag="False"), course={"expect_warnings": ["DeprecationWarning"]})])
    run_notebooks(strict, declared, refresh=True)
    for p in (strict, declared):
        p.write_text(p.read_text().replace("if False", "if True"))
    res = run_notebooks(strict, declared)
    assert res["warn_strict"].failures()[0].rule == "new warning"
    assert "DeprecationWarning: old api" in res["warn_strict"].failures()[0].message
    assert not any(c.rule == "new warning" for c in res["warn_declared"].cells)


def test_when_keep_going_then_every_changed_cell_is_reported_and_classed(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "many.ipynb", [
        code("x = 3\nprint(x)"), code("assert x == 3"), code("[].pop()", tags=["raises-exception"]),
        code("print(f'{x / 7:.6f}')"), code("print('three' if x == 3 else 'other')")])
    run_notebooks(nb, refresh=True)
    nb.write_text(nb.read_text().replace("x = 3", "x = 4").replace("[].pop()", "[1].pop()"))
    proc, report = _run(tmp_path, [nb], "--keep-going", "--markdown", str(tmp_path / "r.md"),
                        "--junit", str(tmp_path / "r.xml"))
    assert proc.returncode == 1
    from verify.results import NotebookResult
    results = [NotebookResult.from_dict(n) for n in report["notebooks"]]
    classes = {c.index: classify(c) for c in results[0].failures()}
    assert classes == {0: "numeric beyond tolerance", 1: "assert failed", 2: "old-way error changed or vanished",
                       3: "numeric beyond tolerance", 4: "repr/text change"}
    assert list(grouped(results))[:2] == ["assert failed", "old-way error changed or vanished"]
    md = (tmp_path / "r.md").read_text()
    assert md.index("## assert failed") < md.index("## repr/text change") and "cell 2 (id cell-2)" in md
    suites = ET.parse(tmp_path / "r.xml").getroot()
    assert len(suites.findall(".//failure")) == 5 and suites.find("testsuite").get("failures") == "5"
    assert markdown_report(results, "t", {}).startswith("# t")
    assert "testsuite" in junit_xml(results)


def test_rule_tally_counts_each_rule_once_even_when_it_holds_commas():
    from verify.execute import decide_cell
    from verify.results import NotebookResult
    from verify.runner import rule_tally

    cell = code("print(w)")
    cell.outputs = _stream("w = [1.0097841  0.49755916]\n")
    res = decide_cell(cell, _stream("w = [1.0097842 0.4975592]\n"), refresh=False)
    assert res.status == "passed" and "NumPy column alignment ignored" in res.rule
    tally = rule_tally([NotebookResult(path="n", status="passed", cells=[res])])
    assert tally == {"outputs equal": 1,
                     "numeric within tolerance (rtol=1e-05, atol=1e-07), NumPy column alignment ignored": 1}


def test_when_only_the_python_patch_release_differs_then_a_refresh_keeps_the_recorded_environment():
    import nbformat

    from verify.cache import provenance
    from verify.execute import merged_for_refresh

    env = provenance()
    saved = nbformat.v4.new_notebook(cells=[code("print(1)")])
    saved.cells[0].outputs = [nbformat.from_dict(o) for o in _stream("1\n")]
    saved.metadata["verify"] = {"environment": {**env, "python": env["python"].rsplit(".", 1)[0] + ".0-old"}}
    fresh = nbformat.v4.new_notebook(cells=[code("print(1)")])
    fresh.cells[0].outputs = [nbformat.from_dict(o) for o in _stream("1\n")]
    assert merged_for_refresh(saved, fresh, env).metadata["verify"] == saved.metadata["verify"]
    fresh.cells[0].outputs = [nbformat.from_dict(o) for o in _stream("2\n")]  # an output changed: renew it
    assert merged_for_refresh(saved, fresh, env).metadata["verify"]["environment"] == env
    saved.cells[0].outputs = fresh.cells[0].outputs
    saved.metadata["verify"]["environment"]["numpy"] = "1.0"  # a compared key differs: renew it
    assert merged_for_refresh(saved, fresh, env).metadata["verify"]["environment"] == env


def test_refresh_records_the_run_time_and_renews_it_only_when_it_is_far_off():
    import nbformat

    from verify.execute import merged_for_refresh

    saved = nbformat.v4.new_notebook(cells=[code("print(1)")])
    fresh = nbformat.v4.new_notebook(cells=[code("print(1)")])
    first = merged_for_refresh(saved, fresh, None, seconds=40.4)
    assert first.metadata["verify"]["seconds"] == 40
    assert merged_for_refresh(first, fresh, None, seconds=55).metadata["verify"]["seconds"] == 40  # within half
    assert merged_for_refresh(first, fresh, None, seconds=70).metadata["verify"]["seconds"] == 70
    short = merged_for_refresh(saved, fresh, None, seconds=1.2)
    assert short.metadata["verify"]["seconds"] == 1
    assert merged_for_refresh(short, fresh, None, seconds=4.9).metadata["verify"]["seconds"] == 1  # load noise
    assert merged_for_refresh(short, fresh, None, seconds=6.5).metadata["verify"]["seconds"] == 6


def test_runner_starts_the_longest_notebooks_first_and_returns_results_in_the_given_order(tmp_path):
    import json

    from verify.cache import Cache
    from verify.results import NotebookResult
    from verify.runner import RunOptions, Runner

    paths = []
    for name, seconds in [("a", 5), ("b", None), ("c", 90), ("d", 30)]:
        meta = {"verify": {"seconds": seconds}} if seconds is not None else {}
        p = tmp_path / f"{name}.ipynb"
        p.write_text(json.dumps({"cells": [], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}))
        paths.append(p)
    cache = Cache(tmp_path / "cache")
    cache.store(paths[0], "k", 200.0)  # a's last run here took longest: the local record wins
    runner = Runner(RunOptions(jobs=1), cache=cache)
    started = []

    def fake(path):
        started.append(path.stem)
        return NotebookResult(path=str(path), status="passed")

    runner.run_one = fake
    results = runner.run(paths)
    assert started == ["a", "c", "d", "b"]
    assert [Path(r.path).stem for r in results] == ["a", "b", "c", "d"]


def test_a_markdown_only_notebook_passes_without_starting_a_kernel(tmp_path, monkeypatch):
    import nbformat

    from verify import execute

    path = tmp_path / "page.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 只有文字")])
    nb.metadata["verify"] = {"environment": __import__("verify.cache", fromlist=["provenance"]).provenance()}
    nbformat.write(nb, path)
    started = []
    monkeypatch.setattr(execute.NotebookClient, "execute", lambda self, **kw: started.append(1))
    result = execute.run_notebook(path)
    assert result.status == "passed" and not started


def test_kernels_run_without_ipython_history(tmp_path):
    """Several kernels at once share IPython's history database; a locked database prints a warning into a
    cell's output. The tools start kernels with history off: the kernel's history manager is disabled."""
    import nbformat

    from verify import execute

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(get_ipython().history_manager.enabled)")])
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    result = execute.run_notebook(path, refresh=True)
    assert result.status == execute.NB_PASSED, result.message
    assert nbformat.read(path, as_version=4).cells[0].outputs[0]["text"] == "False\n"


def test_cache_key_follows_the_harness_code_that_decides_a_verdict_and_nothing_else(tmp_path):
    """Editing the lock writer (or the CLI, or the course model outside verify/) does not re-run every notebook;
    editing the comparison, or the helper package, does."""
    import shutil

    from verify.cache import helper_digest, verdict_files

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "verify", tmp_path / "verify", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / "content" / "jaxcourse", tmp_path / "content" / "jaxcourse",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "content" / "jaxcourse" / "ffi_src").mkdir(exist_ok=True)
    (tmp_path / "content" / "jaxcourse" / "ffi_src" / "cube.cc").write_text("// the FFI chapter compiles this\n")
    names = {p.name for p in verdict_files(tmp_path / "verify")}
    assert {"execute.py", "compare.py", "normalize.py", "lite.py", "cells.py"} <= names
    assert not names & {"punctuation.py", "lock.py", "cli.py", "contract.py", "proposal.py"}, names
    before = helper_digest(tmp_path)
    with open(tmp_path / "verify" / "lock.py", "a", encoding="utf-8") as f:
        f.write("\n# edited\n")
    assert helper_digest(tmp_path) == before
    for edited in ("verify/compare.py", "content/jaxcourse/checks.py", "content/jaxcourse/ffi_src/cube.cc"):
        with open(tmp_path / edited, "a", encoding="utf-8") as f:
            f.write("\n# edited\n")
        assert helper_digest(tmp_path) != before, edited
        before = helper_digest(tmp_path)


def test_probe_digest_follows_the_probe_and_what_it_imports_from_the_repo(tmp_path, monkeypatch):
    from verify.cache import probe_digest

    (tmp_path / "judge").mkdir()
    (tmp_path / "model").mkdir()
    for pkg in ("judge", "model"):
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "judge" / "probe.py").write_text("import json\nfrom model.rules import RULES\n\ndef probe(c, nb, p):\n    return []\n")
    (tmp_path / "model" / "rules.py").write_text("RULES = 1\n")
    (tmp_path / "model" / "other.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = probe_digest("judge.probe:probe", root=tmp_path)
    (tmp_path / "model" / "other.py").write_text("X = 2\n")        # not imported by the probe
    assert probe_digest("judge.probe:probe", root=tmp_path) == before
    (tmp_path / "model" / "rules.py").write_text("RULES = 2\n")     # imported: the verdict may change
    assert probe_digest("judge.probe:probe", root=tmp_path) != before


def test_the_machine_part_of_the_key_follows_packages_cpu_and_jax_variables(monkeypatch):
    """A shared cache ($VERIFY_CACHE_DIR, used by .ci/run) outlives one environment: an optax bump, another CPU
    or JAX_ENABLE_X64 in the environment must not find the verdict of the run before."""
    from importlib import metadata

    from verify import cache

    before = cache.machine_identity()
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    assert cache.machine_identity()["env"] == {**before["env"], "JAX_ENABLE_X64": "1"}
    monkeypatch.delenv("JAX_ENABLE_X64")
    real = list(metadata.distributions())
    bumped = [d for d in real if d.metadata["Name"] != "optax"]
    assert len(bumped) == len(real) - 1, "optax is installed in the course environment"
    monkeypatch.setattr(cache.metadata, "distributions", lambda: bumped)
    assert cache.machine_identity()["packages"] != before["packages"]
    monkeypatch.setattr(cache.metadata, "distributions", lambda: real)
    assert cache.machine_identity() == before


def test_a_shared_cache_folder_names_notebooks_by_their_path_in_the_checkout(tmp_path, monkeypatch):
    """Every CI run is a fresh clone in a new folder: an entry is found by the notebook's path inside the checkout."""
    from verify import cache

    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(tmp_path / "shared"))
    shared = cache.Cache()
    assert shared.folder == tmp_path / "shared"
    nb = cache.repo_root() / "content" / "入门" / "01_JAX简介.ipynb"
    shared.store(nb, "k1", seconds=3.0)
    assert shared.hit(nb, "k1") and not shared.hit(nb, "k2")
    monkeypatch.delenv(cache.CACHE_DIR_ENV)
    assert cache.Cache().folder == cache.repo_root() / cache.CACHE_DIR_NAME
    shared.store(nb, "k-avx", seconds=1.0, notes=["xla_flags differ"])   # .ci/run's other-CPU run of the same notebook
    assert shared.hit(nb, "k1") and shared.hit(nb, "k-avx")              # it must not push the plain run out
    assert shared.notes(nb, "k-avx") == ["xla_flags differ"] and shared.notes(nb, "k1") == []
    assert shared.seconds(nb) == 3.0                                       # the long run plans the shards
    for i in range(cache.Cache.KEPT_RUNS):
        shared.store(nb, f"later-{i}", seconds=1.0)
    assert not shared.hit(nb, "k1") and shared.hit(nb, f"later-{cache.Cache.KEPT_RUNS - 1}")   # bounded
    shared.store(nb, "k1", seconds=3.0)
    entry = shared._file(nb)
    clone = tmp_path / "another-clone"          # the next CI run's fresh clone, somewhere else
    monkeypatch.setattr(cache, "repo_root", lambda: clone)
    assert shared._file(clone / "content" / "入门" / "01_JAX简介.ipynb") == entry
    assert shared.hit(clone / "content" / "入门" / "01_JAX简介.ipynb", "k1")


def test_shards_split_the_notebooks_once_each_and_about_evenly():
    """CI runs the notebook items in N shards on separate machines (--verify-shard K/N): every notebook in exactly
    one shard, the longest dealt first to the least loaded shard, and a shard that does not exist is refused."""
    from verify.errors import UsageError
    from verify.runner import shard

    seconds = {Path(f"nb{i}.ipynb"): s for i, s in enumerate([300, 250, 200, 120, 100, 90, 60, 30, 10, 0, 0])}
    parts = [shard(list(seconds), k, 3, seconds.get) for k in (1, 2, 3)]
    assert sorted(p for part in parts for p in part) == sorted(seconds)
    loads = [sum(seconds[p] for p in part) for part in parts]
    assert max(loads) - min(loads) <= 100, loads          # greedy LPT: within the largest single item's reach
    assert parts[0][0] == Path("nb0.ipynb")                # the longest starts shard 1
    assert shard(list(seconds), 2, 3, seconds.get) == parts[1]   # the deal is the same every time
    for bad in ((0, 3), (4, 3)):
        with pytest.raises(UsageError, match="does not exist"):
            shard(list(seconds), *bad, seconds.get)
