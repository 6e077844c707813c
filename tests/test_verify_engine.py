"""Behaviour of the harness on fixture notebooks: one test per rule or fault class."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from nbfactory import code, md, write_notebook
from verify.cache import Cache
from verify.isa import flags_with_isa
from verify.runner import RunOptions, Runner
from verify.triage import junit_xml, markdown_report

RUN_ALL = [sys.executable, str(ROOT / "tools" / "run_all.py")]


def _saved_outputs(path, index):
    return json.loads(Path(path).read_text())["cells"][index]["outputs"]


def _set_stream_text(path, index, text):
    data = json.loads(Path(path).read_text())
    data["cells"][index]["outputs"][0]["text"] = [text]
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def test_when_cells_hold_then_notebook_passes_and_each_cell_names_its_rule(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "ok.ipynb", [md("# t"), code("x = 1 + 1\nprint(x)"), code("x * 21")])
    assert run_notebooks(nb, refresh=True)["ok"].ok
    res = run_notebooks(nb)["ok"]
    assert res.status == "passed"
    assert [c.rule for c in res.cells] == ["outputs equal", "outputs equal"]
    assert "".join(_saved_outputs(nb, 2)[0]["data"]["text/plain"]) == "42"


def test_when_an_assert_fails_then_report_names_cell_number_id_and_traceback(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "bad.ipynb", [code("a = 1"), code("assert a == 2, 'a should be 2'"), code("print('after')")])
    res = run_notebooks(nb)["bad"]
    assert res.status == "failed"
    failed = [c for c in res.failures() if c.rule != "environment mismatch"]  # never refreshed
    assert len(failed) == 1 and failed[0].index == 1 and failed[0].rule == "cell error"
    report = res.report()
    assert "cell 2 (id cell-2)" in report and "AssertionError" in report and "a should be 2" in report
    assert res.cells[-1].status == "not run"


def test_when_saved_output_drifts_then_unified_diff_shows_saved_and_fresh(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "drift.ipynb", [code("print(6 * 7)")])
    run_notebooks(nb, refresh=True)
    _set_stream_text(nb, 0, "41\n")
    res = run_notebooks(nb)["drift"]
    cell = res.failures()[0]
    assert cell.rule == "text differs"
    assert "-41" in cell.detail and "+42" in cell.detail and "--- saved" in cell.detail


def test_when_output_is_random_then_only_volatile_cells_pass(tmp_path, run_notebooks):
    src = "import random\nprint(f'value {random.random():.6f}')"
    a = write_notebook(tmp_path / "volatile.ipynb", [code(src, course={"volatile": True})])
    b = write_notebook(tmp_path / "strict.ipynb", [code(src)])
    run_notebooks(a, b, refresh=True)
    res = run_notebooks(a, b)
    assert res["volatile"].ok and "volatile numbers" in res["volatile"].cells[0].rule
    assert res["strict"].failures()[0].rule == "text differs"


def test_when_timing_and_address_appear_then_they_are_sanitized(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "san.ipynb", [code("import time\nt = time.perf_counter()\nprint(f'took {t:.4f} ms')\nprint(object())")])
    run_notebooks(nb, refresh=True)
    res = run_notebooks(nb)["san"]
    assert res.ok, res.report()
    assert "timing" in res.cells[0].rule and "address" in res.cells[0].rule


def test_expected_raise_cases(tmp_path, run_notebooks):
    same = write_notebook(tmp_path / "raises_same.ipynb", [code("x = 1\nx.device()", tags=["raises-exception"]), code("print('continues')")])
    missing = write_notebook(tmp_path / "raises_missing.ipynb", [code("flag = True\nif flag:\n    raise KeyError('k')", tags=["raises-exception"])])
    other = write_notebook(tmp_path / "raises_other.ipynb", [code("kind = 'key'\nraise {'key': KeyError, 'type': TypeError}[kind]('x')", tags=["raises-exception"])])
    run_notebooks(same, missing, other, refresh=True)
    # change the behaviour behind the saved outputs, as a JAX upgrade would
    for path, old, new in [(missing, "flag = True", "flag = False"), (other, "kind = 'key'", "kind = 'type'")]:
        Path(path).write_text(Path(path).read_text().replace(old, new))
    res = run_notebooks(same, missing, other)
    assert res["raises_same"].ok, res["raises_same"].report()
    assert res["raises_same"].cells[1].status == "passed"
    assert res["raises_missing"].failures()[0].rule == "expected error missing"
    assert "KeyError" in res["raises_missing"].failures()[0].message
    changed = res["raises_other"].failures()[0]
    assert changed.rule == "error type changed" and "KeyError" in changed.message and "TypeError" in changed.message


@pytest.mark.parametrize("crash", ["import os\nos._exit(3)", "import ctypes\nctypes.string_at(0)"], ids=["exit", "segfault"])
def test_when_kernel_dies_then_cell_is_named_and_other_notebooks_still_run(tmp_path, run_notebooks, crash):
    dead = write_notebook(tmp_path / "dead.ipynb", [code("print('before')"), code(crash), code("print('never')")])
    fine = write_notebook(tmp_path / "fine.ipynb", [code("print('fine')")])
    run_notebooks(fine, refresh=True)
    res = run_notebooks(dead, fine)
    assert res["dead"].status == "failed"
    died = [c for c in res["dead"].failures() if c.rule == "kernel died"]
    assert [c.index for c in died] == [1] and "died" in died[0].message
    assert res["fine"].ok


def test_when_a_cell_hangs_then_timeout_names_it_and_the_kernel_is_gone(tmp_path, run_notebooks):
    pidfile = tmp_path / "kernel.pid"
    nb = write_notebook(tmp_path / "hang.ipynb", [code(f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)")])
    t0 = time.monotonic()
    res = run_notebooks(nb, timeout=3)["hang"]
    assert time.monotonic() - t0 < 40
    failed = [c for c in res.failures() if c.rule != "environment mismatch"][0]
    assert failed.rule == "cell timeout" and failed.index == 0 and "3 s" in failed.message
    _assert_process_gone(int(pidfile.read_text()))


def _assert_process_gone(pid, wait=10.0):
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    pytest.fail(f"kernel process {pid} is still alive")


def test_when_json_is_malformed_then_message_gives_position_and_fix(tmp_path, run_notebooks):
    bad = tmp_path / "broken.ipynb"
    bad.write_text('{\n "cells": [\n  {"cell_type": "code",,}\n ]\n}\n')
    res = run_notebooks(bad)["broken"]
    assert res.status == "error"
    assert "line 3 column" in res.message and "git checkout -- " in res.message


def test_when_refreshed_twice_then_no_byte_changes_and_sources_stay(tmp_path, run_notebooks):
    cells = [md("# 标题"), code("import time\nprint('耗时', round(time.perf_counter(), 3), 's')", course={"volatile": True}),
             code("print('稳定')"), code("[].pop()", tags=["raises-exception"])]
    nb = write_notebook(tmp_path / "round.ipynb", cells)
    before = json.loads(nb.read_text())
    assert run_notebooks(nb, refresh=True)["round"].refreshed
    first = nb.read_bytes()
    res = run_notebooks(nb, refresh=True)["round"]
    assert res.ok and not res.refreshed
    assert nb.read_bytes() == first
    after = json.loads(first)
    for b, a in zip(before["cells"], after["cells"]):
        assert (a["source"], a["id"], a["metadata"]) == (b["source"], b["id"], b["metadata"])
    assert [c.get("execution_count") for c in after["cells"]] == [None, 1, 2, 3]


def test_when_refresh_run_fails_then_notebook_is_not_written(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "nowrite.ipynb", [code("print(1)"), code("1/0")])
    original = nb.read_bytes()
    assert not run_notebooks(nb, refresh=True)["nowrite"].ok
    assert nb.read_bytes() == original


def _record(nb, **env):
    data = json.loads(nb.read_text())
    data["metadata"]["verify"]["environment"].update(env)
    nb.write_text(json.dumps(data, indent=1))


def test_when_recorded_jax_differs_then_notebook_is_flagged(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "env.ipynb", [code("print('x')")])
    run_notebooks(nb, refresh=True)
    assert json.loads(nb.read_text())["metadata"]["verify"]["environment"]["jax"] == "0.12.0.1"
    res = run_notebooks(nb)["env"]
    assert res.ok and res.notes == []
    _record(nb, jax="0.11.2")
    res = run_notebooks(nb)["env"]
    flagged = res.failures()[0]
    assert flagged.rule == "environment mismatch" and flagged.label == "notebook metadata"
    assert "'0.11.2'" in flagged.message and "'0.12.0.1'" in flagged.message and "--refresh" in flagged.message


@pytest.mark.parametrize("key, value", [("python", "3.12.9"), ("numpy", "2.5.4"), ("platform", "darwin-arm64"),
                                        ("xla_flags", "--xla_cpu_max_isa=AVX")])
def test_when_python_numpy_platform_or_flags_differ_then_it_is_a_note_not_a_failure(tmp_path, run_notebooks, key, value):
    """A reader's machine: outputs are compared under the usual rules and the difference is reported."""
    nb = write_notebook(tmp_path / "other.ipynb", [code("print(6 * 7)")])
    run_notebooks(nb, refresh=True)
    _record(nb, **{key: value})
    res = run_notebooks(nb)["other"]
    assert res.ok, res.report()
    assert len(res.notes) == 1 and f"{key}: saved outputs from {value!r}" in res.notes[0]
    assert markdown_report([res], "t", {}).count(res.notes[0]) == 1
    assert f'name="note" value="environment differs ({key}:' in junit_xml([res])
    _set_stream_text(nb, 0, "41\n")   # a note never hides a changed output
    res = run_notebooks(nb)["other"]
    assert [c.rule for c in res.failures()] == ["text differs"] and res.notes


def test_a_cache_hit_reports_the_note_of_the_run_it_stands_for(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "noted.ipynb", [code("print('n')")])
    run_notebooks(nb, refresh=True)
    _record(nb, numpy="2.5.4")
    first = run_notebooks(nb, use_cache=True)["noted"]
    again = run_notebooks(nb, use_cache=True)["noted"]
    assert (first.status, again.status) == ("passed", "cached") and again.notes == first.notes != []


def test_a_failed_run_is_never_cached_as_passing(tmp_path, run_notebooks):
    good = write_notebook(tmp_path / "good.ipynb", [code("print('g')")])
    bad = write_notebook(tmp_path / "bad.ipynb", [code("print('b')"), code("assert False, 'broken'")])
    run_notebooks(good, bad, refresh=True, use_cache=True)
    for _ in range(2):
        res = run_notebooks(good, bad, use_cache=True)
        assert res["bad"].status == "failed" and res["good"].status == "cached"
    assert Cache(tmp_path / "cache").hit(good, res["good"].cache_key)
    assert not Cache(tmp_path / "cache").hit(bad, res["bad"].cache_key)


def test_cpu_isa_runs_kernels_with_the_lowered_isa_and_never_refreshes(tmp_path, run_notebooks):
    seen = tmp_path / "flags.txt"
    nb = write_notebook(tmp_path / "isa.ipynb", [code(f"import os\n_ = open({str(seen)!r}, 'w').write(os.environ.get('XLA_FLAGS', ''))")])
    run_notebooks(nb, refresh=True)
    assert seen.read_text() == os.environ.get("XLA_FLAGS", "")
    runner = Runner(RunOptions(timeout=60, jobs=1, use_cache=False, cpu_isa="SSE4_2"), cache=Cache(tmp_path / "c"))
    res = runner.run([nb])[0]
    assert res.ok, res.report()
    assert "--xla_cpu_max_isa=SSE4_2" in seen.read_text().split()
    assert any("xla_flags" in n and "--xla_cpu_max_isa=SSE4_2" in n for n in res.notes)
    r = subprocess.run(RUN_ALL + [str(nb), "--cpu-isa", "AVX", "--refresh"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "never" in r.stderr and "drop --refresh" in r.stderr


def test_flags_with_isa_replaces_an_earlier_isa_and_refuses_unknown_names():
    assert flags_with_isa("--xla_cpu_max_isa=AVX2 --xla_foo=1", "AVX") == "--xla_foo=1 --xla_cpu_max_isa=AVX"
    assert flags_with_isa("", "SSE4_2") == "--xla_cpu_max_isa=SSE4_2"
    with pytest.raises(ValueError, match="AVX512"):
        flags_with_isa("", "AVX3")


def test_when_nothing_changed_then_cache_skips_and_edits_or_no_cache_rerun(tmp_path, run_notebooks):
    nb = write_notebook(tmp_path / "cached.ipynb", [code("print('c')")])
    run_notebooks(nb, refresh=True, use_cache=True)
    assert run_notebooks(nb, use_cache=True)["cached"].status == "cached"
    assert run_notebooks(nb, use_cache=False)["cached"].status == "passed"
    nb.write_text(nb.read_text().replace("print('c')", "print('d')"))
    assert run_notebooks(nb, use_cache=True)["cached"].status == "failed"


def test_when_interrupted_during_refresh_then_file_is_untouched_and_kernel_stopped(tmp_path):
    pidfile = tmp_path / "kernel.pid"
    nb = write_notebook(tmp_path / "slow.ipynb", [code("print('first')"),
                                                  code(f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)")])
    original = nb.read_bytes()
    proc = subprocess.Popen(RUN_ALL + [str(nb), "--refresh", "--no-cache"], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert pidfile.exists(), "kernel never reached the slow cell"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert nb.read_bytes() == original
    assert not list(tmp_path.glob("*.tmp-verify"))
    _assert_process_gone(int(pidfile.read_text()))


def test_cli_exit_codes_progress_and_json_report(tmp_path):
    ok = write_notebook(tmp_path / "nbs" / "good.ipynb", [code("print('ok')")])
    write_notebook(tmp_path / "nbs" / "fail.ipynb", [code("raise ValueError('boom')")])
    subprocess.run(RUN_ALL + [str(ok), "--refresh", "--no-cache"], check=True, capture_output=True, cwd=ROOT)
    report = tmp_path / "report.json"
    r = subprocess.run(RUN_ALL + [str(tmp_path / "nbs"), "--no-cache", "--json", str(report), "--jobs", "2"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1
    assert "✔" in r.stderr and "good.ipynb" in r.stderr and "1 passed, 1 failed" in r.stderr
    data = json.loads(report.read_text())
    by_name = {Path(n["path"]).name: n for n in data["notebooks"]}
    assert [c["rule"] for c in by_name["fail.ipynb"]["cells"]] == ["environment mismatch", "cell error"]
    assert by_name["good.ipynb"]["cells"][0]["seconds"] >= 0 and data["environment"]["jax"] == "0.12.0.1"
    r = subprocess.run(RUN_ALL + [str(tmp_path / "nbs"), "-k", "good"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    for args in ([str(tmp_path / "missing")], [str(tmp_path / "nbs"), "-k", "nomatch"], ["--jobs", "0"]):
        r = subprocess.run(RUN_ALL + args, capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 2 and "ERROR" in r.stderr, (args, r.stderr)


def test_pytest_collects_each_notebook_as_an_item(pytester):
    pytester.makeini("[pytest]\nverify_notebook_dirs = content\n")
    write_notebook(pytester.path / "content" / "01_a.ipynb", [code("print(1)")])
    write_notebook(pytester.path / "content" / "02_b.ipynb", [code("print(2)")])
    write_notebook(pytester.path / "elsewhere" / "x.ipynb", [code("print(3)")])
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    out = result.stdout.str()
    assert "01_a.ipynb::verify" in out and "02_b.ipynb::verify" in out and "x.ipynb" not in out
    result = pytester.runpytest_subprocess("-k", "01", "-q", "--verify-no-cache")
    result.assert_outcomes(failed=1, deselected=1)  # never refreshed: saved outputs are empty
    assert "text differs" in result.stdout.str()


def test_under_pytest_an_unreadable_notebook_or_a_missing_kernel_fails_with_the_reason(pytester):
    pytester.makeini("[pytest]\nverify_notebook_dirs = content\n")
    (pytester.path / "content").mkdir()
    (pytester.path / "content" / "01_broken.ipynb").write_text('{"cells": [,]}')
    result = pytester.runpytest_subprocess("-q", "--verify-no-cache")
    result.assert_outcomes(failed=1)
    assert "ERROR" in result.stdout.str() and "line 1 column" in result.stdout.str()
    (pytester.path / "content" / "01_broken.ipynb").unlink()
    write_notebook(pytester.path / "content" / "02_fine.ipynb", [code("print(2)")])
    result = pytester.runpytest_subprocess("-q", "--verify-no-cache", "--verify-kernel", "no-such-kernel")
    result.assert_outcomes(failed=1)
    assert "no-such-kernel" in result.stdout.str() and "not installed" in result.stdout.str()


def test_when_a_lite_cell_needs_jax_or_numpy_then_it_fails(tmp_path, run_notebooks):
    ok = write_notebook(tmp_path / "lite_ok.ipynb", [code("total = sum(range(10))", tags=["lite"]), code("print(total)", tags=["lite"])])
    bad = write_notebook(tmp_path / "lite_bad.ipynb", [code("print(1)", tags=["lite"]), code("import numpy as np\nprint(np.zeros(2))", tags=["lite"])])
    run_notebooks(ok, bad, refresh=True)
    res = run_notebooks(ok, bad)
    assert res["lite_ok"].ok, res["lite_ok"].report()
    failed = [c for c in res["lite_bad"].failures() if c.rule == "lite cell needs JAX"]
    assert [c.index for c in failed] == [1]
    assert "numpy" in failed[0].message


def test_when_a_lite_cell_prints_otherwise_without_jax_then_it_fails(tmp_path, run_notebooks):
    """Its output where jax/numpy are blocked (as in the browser) must equal the kernel's, shown value included."""
    probe = "try:\n    import numpy\n    where = 'kernel'\nexcept ImportError:\n    where = 'browser'\n"
    same = write_notebook(tmp_path / "lite_same.ipynb", [code("x = 6 * 7\nprint('x =', x)\nx / 4", tags=["lite"])])
    differs = write_notebook(tmp_path / "lite_differs.ipynb", [code(probe + "print(where)", tags=["lite"]),
                                                               code(probe + "where", tags=["lite"])])
    res = run_notebooks(same, differs, refresh=True)   # a refresh does not excuse it either
    assert res["lite_same"].ok, res["lite_same"].report()
    failed = [c for c in res["lite_differs"].failures() if c.rule == "lite output differs"]
    assert [c.index for c in failed] == [0, 1] and "browser" in failed[0].detail and "kernel" in failed[1].detail


def test_when_refreshed_then_saved_tracebacks_are_short_and_name_the_cell_lines(tmp_path, run_notebooks):
    """In publish mode jaxcourse keeps only the cells' frames: no JAX internals, few lines (lint rule long-traceback)."""
    cells = [code("import jaxcourse\nimport jax.numpy as jnp"),
             code("def total(values):\n    return jnp.sum(values)"),
             code("total([1, 2, 3])", tags=["raises-exception"])]
    nb = write_notebook(tmp_path / "short.ipynb", cells)
    assert run_notebooks(nb, refresh=True)["short"].refreshed
    err = _saved_outputs(nb, 2)[0]
    text = "\n".join(err["traceback"])
    assert err["ename"] == "TypeError" and "jax/_src" not in text
    assert "Cell In[3], line 1" in text and "Cell In[2], line 2, in total" in text
    from coursetools.lint import traceback_excess

    assert traceback_excess(err) == 0


def test_when_a_plot_changes_but_not_its_size_then_refresh_saves_the_new_pixels(tmp_path, run_notebooks):
    """The check compares an image's display size only; a refresh must still save the pixels the code draws now."""
    show = "from IPython.display import display\ndisplay({{'image/png': '{}'}}, raw=True)"
    nb = write_notebook(tmp_path / "plot.ipynb", [code(show.format("AAAA")), code(show.format("CCCC"), course={"volatile": True})])
    assert run_notebooks(nb, refresh=True)["plot"].refreshed
    data = json.loads(nb.read_text())
    data["cells"][0]["source"] = show.format("BBBB")
    data["cells"][1]["source"] = show.format("DDDD")
    nb.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    assert run_notebooks(nb, refresh=True)["plot"].ok
    assert _saved_outputs(nb, 0)[0]["data"]["image/png"].strip() == "BBBB"
    assert _saved_outputs(nb, 1)[0]["data"]["image/png"].strip() == "CCCC"   # volatile: the saved picture stays


def test_a_lowered_isa_counts_only_where_this_cpu_has_something_newer():
    from verify.isa import host_exceeds

    avx2_only = "processor : 0\nflags : fpu sse4_2 avx fma avx2 bmi2\n"
    assert host_exceeds("AVX", avx2_only) is True and host_exceeds("SSE4_2", avx2_only) is True
    assert host_exceeds("AVX2", avx2_only) is False        # no AVX-512 here: capping at AVX2 changes nothing
    assert host_exceeds("AVX2", avx2_only.replace("bmi2", "bmi2 avx512f")) is True
    assert host_exceeds("AVX", "") is None                  # no cpuinfo (a Mac): cannot tell


def test_skip_if_not_lower_skips_only_an_isa_this_cpu_does_not_exceed(tmp_path):
    from verify.isa import host_exceeds

    nb = write_notebook(tmp_path / "skip.ipynb", [code("print(1)")])
    isa = next((i for i in ("AVX512", "AVX2", "AVX") if host_exceeds(i) is False), None)
    if isa is None:
        pytest.skip("this CPU exceeds every ISA tried (or is not Linux x86)")
    r = subprocess.run(RUN_ALL + [str(nb), "--cpu-isa", isa, "--skip-if-not-lower"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "skipped" in r.stderr and "✔" not in r.stderr   # never refreshed, yet nothing ran
