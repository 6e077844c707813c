"""jaxcourse.run_jax: configuration reaches the subprocess before JAX starts, and only tagged lines are read."""

from __future__ import annotations

import pytest

from jaxcourse import DemoFailed, run_jax
from jaxcourse.subproc import jax_env, parse_reports


def test_configuration_reaches_jax_before_it_starts():
    r = run_jax("""
        import jax, jax.numpy as jnp
        print("[Gloo] noise that is not a report")
        report("devices", jax.device_count())
        report("x64", jnp.zeros(()).dtype.name)
        report("step", 1)
        report("step", 2)
    """, devices=3, x64=True)
    assert r["devices"] == 3
    assert r["x64"] == "float64"
    assert r["step"] == 2 and r.all("step") == [1, 2]
    assert r.untagged() == ["[Gloo] noise that is not a report"]


def test_failure_names_the_error_and_missing_reports_list_what_was_reported():
    with pytest.raises(DemoFailed, match="ZeroDivisionError"):
        run_jax("report('a', 1)\n1 / 0")
    r = run_jax("report('a', 1)\n1 / 0", check=False)
    assert r.returncode == 1 and r["a"] == 1
    with pytest.raises(DemoFailed, match="没有报告 'b'.*a"):
        r["b"]


def test_env_and_parsing():
    assert jax_env(devices=2, xla_flags=["--a", "--b"], x64=False) == {
        "JAX_NUM_CPU_DEVICES": "2", "XLA_FLAGS": "--a --b", "JAX_ENABLE_X64": "0", "JAX_PLATFORMS": "cpu"}
    assert jax_env(platform=None) == {}
    assert parse_reports('x\n@@jaxcourse v {"k": [1, 2]}\n@@jaxcourse s "中文 值"\n') == [
        ("v", {"k": [1, 2]}), ("s", "中文 值")]


def test_stdin_is_fed_to_the_subprocess_and_empty_by_default():
    # jax.debug.breakpoint reads its commands from stdin; without input a reader must not hang
    r = run_jax("import sys\nreport('lines', sys.stdin.read().splitlines())", stdin="p y\nc\n")
    assert r["lines"] == ["p y", "c"]
    assert run_jax("import sys\nreport('rest', sys.stdin.read())")["rest"] == ""


def test_tracebacks_come_without_colour_codes_so_notebooks_can_match_them():
    r = run_jax("raise TypeError('lax.mul requires arguments to have the same dtypes')", check=False,
                env={"FORCE_COLOR": "1"})
    assert "TypeError: lax.mul requires" in r.stderr and "\x1b[" not in r.stderr


def test_a_report_name_with_a_space_fails_in_the_child_with_a_clear_message():
    # parse_reports splits on spaces, so such a name would otherwise surface as a JSONDecodeError in the parent
    with pytest.raises(DemoFailed, match="不含空白"):
        run_jax('report("two words", 1)')
