"""Tests of jaxcourse.compile_budget: counting, the over-budget report, the decorator, lazy JAX import."""

from __future__ import annotations

import subprocess
import sys

import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from jaxcourse import CompileBudgetExceeded, compile_budget, count_compiles  # noqa: E402


def _fresh_scale():
    """A new jitted function each test, so no test sees another's cache."""

    def scale(x, n):
        return x * n

    return jax.jit(scale, static_argnums=1)


def test_when_within_budget_then_no_error_and_count_is_exact():
    f = _fresh_scale()
    with compile_budget(max_compiles=1, name="scale") as b:
        f(jnp.ones(3), 2)
        f(jnp.ones(3), 2)
        f(jnp.ones(3) * 5.0, 2)  # same shape and dtype, new value: cache hit
    assert b.count == 1
    assert b.names == ["jit(scale)"]
    assert not b.exceeded


def test_when_shape_changes_then_budget_raises_with_reason():
    f = _fresh_scale()
    with pytest.raises(CompileBudgetExceeded) as info:
        with compile_budget(max_compiles=1, name="scale"):
            f(jnp.ones(3), 2)
            f(jnp.ones(4), 2)
    report = str(info.value)
    assert "最多允许编译 1 次\uff0c实际编译了 2 次" in report
    assert "第 2 次编译\uff1ajit(scale)\uff0c输入 (float32[4])  ← 超出预算" in report
    assert "now f32[4] and before f32[3]" in report  # explain_cache_misses' reason was captured
    assert " id=" not in report  # run-dependent object ids are stripped


def test_when_only_static_arg_changes_then_report_says_types_are_identical():
    f = _fresh_scale()
    with pytest.raises(CompileBudgetExceeded) as info:
        with compile_budget(max_compiles=1, name="scale"):
            f(jnp.ones(3), 2)
            f(jnp.ones(3), 3)
    assert "与第 1 次编译完全相同" in str(info.value)


def test_when_name_given_then_other_functions_are_not_counted():
    f = _fresh_scale()
    other = jax.jit(lambda x: x + 1)
    with compile_budget(max_compiles=1, name="scale") as b:
        f(jnp.ones(2), 2)
        other(jnp.ones(5))
        jnp.sin(jnp.ones(6))
    assert b.count == 1
    assert all("never seen function" not in e or "scale" in e for e in b.explanations)


def test_when_name_is_none_then_eager_ops_count_too():
    with pytest.raises(CompileBudgetExceeded, match="jit\\(cos\\)"):
        with compile_budget(max_compiles=0):
            jnp.cos(jnp.ones(11)).block_until_ready()


def test_when_used_as_decorator_then_each_call_has_its_own_budget():
    f = _fresh_scale()

    @compile_budget(max_compiles=1, name="scale")
    def run(n):
        return f(jnp.ones(3), n)

    run(2)
    assert run.last_budget.count == 1
    run(2)  # already compiled: a second call stays within its own budget
    assert run.last_budget.count == 0
    run(3)  # new static value: one compile, within this call's own budget
    assert run.last_budget.count == 1


def test_when_decorated_call_compiles_twice_then_it_raises():
    f = _fresh_scale()

    @compile_budget(max_compiles=1, name="scale")
    def run():
        f(jnp.ones(3), 2)
        return f(jnp.ones(4), 2)

    with pytest.raises(CompileBudgetExceeded, match="实际编译了 2 次"):
        run()


def test_when_block_raises_then_its_error_passes_through():
    f = _fresh_scale()
    with pytest.raises(ZeroDivisionError):
        with compile_budget(max_compiles=0, name="scale"):
            f(jnp.ones(3), 2)
            1 / 0


def test_when_budget_closes_then_logging_and_listeners_are_removed():
    import logging

    before = list(logging.getLogger("jax").handlers)
    f = _fresh_scale()
    with compile_budget(max_compiles=5, name="scale"):
        f(jnp.ones(3), 2)
    assert logging.getLogger("jax").handlers == before
    assert not jax.config.jax_explain_cache_misses
    with count_compiles("scale") as c:  # the shared listener still works for count_compiles
        f(jnp.ones(9), 2)
    assert c.count == 1


def test_when_max_compiles_is_negative_then_value_error():
    with pytest.raises(ValueError):
        compile_budget(-1)


def test_when_jax_is_missing_then_import_and_construction_still_work():
    code = ("import sys; sys.modules['jax'] = None; sys.modules['numpy'] = None\n"
            "import jaxcourse\n"
            "b = jaxcourse.compile_budget(2, name='f')\n"
            "assert b.count == 0 and 'jax' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
