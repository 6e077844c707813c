"""The helper package's checks: forbid catches a banned call even in a jitted answer; short tracebacks."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import pytest

import jaxcourse
from jaxcourse.display import SHORT_FRAMES, short_traceback


def test_forbid_catches_a_call_inside_an_already_compiled_function():
    counts = jax.jit(lambda x: jnp.bincount(x, length=3))
    assert counts(jnp.array([0, 1, 1])).tolist() == [1, 2, 0]   # compiled before the check
    with pytest.raises(jaxcourse.ForbiddenCall, match="jax.numpy.bincount"):
        with jaxcourse.forbid("jax.numpy.bincount"):
            counts(jnp.array([0, 1, 1]))
    assert counts(jnp.array([2])).tolist() == [0, 0, 1]        # restored afterwards


def test_a_check_block_retraces_inside_but_keeps_what_was_compiled_outside():
    """forbid/counting/replaced/rewriting hide JAX's caches from the block (a compiled answer is traced again, also
    when a thread pool runs it) without emptying them: what the notebook compiled before is still cached afterwards
    (jax.clear_caches() used to throw it all away, and every later call compiled again)."""
    from concurrent.futures import ThreadPoolExecutor

    from jaxcourse import fresh_traces

    with fresh_traces():   # the first block ever adds its switch to JAX's cache keys: what was compiled before it
        pass               # is traced once more afterwards (a notebook pays that once, at its first check)
    traces = []

    @jax.jit
    def double(x):
        traces.append(1)
        return x * 2

    double(1.0)
    with jaxcourse.forbid("jax.numpy.bincount"):
        double(1.0)
        with ThreadPoolExecutor(1) as pool:
            pool.submit(double, 1.0).result()
    assert len(traces) == 2          # traced once before, once in the block (the thread reused the block's trace)
    with jaxcourse.counting("jax.numpy.bincount"):
        double(1.0)
    assert len(traces) == 3          # every block starts empty, not with the previous block's traces
    double(1.0)
    assert len(traces) == 3          # outside, the first trace is still cached


def test_forbid_lets_other_code_through():
    with jaxcourse.forbid("jax.numpy.bincount"):
        assert jnp.zeros(3).at[jnp.array([1, 1])].add(1).tolist() == [0, 2, 0]


def test_forbid_still_fails_an_answer_that_swallows_the_refusal():
    """An answer that catches ForbiddenCall (or any exception) and falls back to other code is still refused
    when the block ends; both routes (the swapped reference and the watched code object) remember it."""
    held = (jnp.bincount,)

    def sneaky(x, call):
        try:
            return call(x)
        except Exception:            # the banned call was tried and refused: carry on another way
            return jnp.zeros(3, int).at[x].add(1)

    x = jnp.array([0, 1, 1])
    for call in (lambda v: jnp.bincount(v, length=3), lambda v: held[0](v, length=3)):
        with pytest.raises(jaxcourse.ForbiddenCall, match="bincount.*接住"):
            with jaxcourse.forbid("jax.numpy.bincount"):
                assert sneaky(x, call).tolist() == [1, 2, 0]
    with jaxcourse.forbid("jax.numpy.bincount"):        # an answer that never tries it passes
        assert sneaky(x, lambda v: jnp.zeros(3, int).at[v].add(1)).tolist() == [1, 2, 0]


def test_selfcheck_inside_forbid_fails_a_swallowed_refusal_and_the_block_then_ends_quietly(capsys):
    def sneaky(x):
        try:
            return jnp.bincount(x, length=3)
        except Exception:
            return jnp.zeros(3, int).at[x].add(1)

    def strict_probe():   # a check that catches the refusal itself and says why
        try:
            jnp.bincount(jnp.array([0]), length=1)
        except jaxcourse.ForbiddenCall:
            return False
        return True

    x = jnp.array([0, 1, 1])
    with jaxcourse.forbid("jax.numpy.bincount"):
        with jaxcourse.forbid("jax.numpy.cumsum"):       # nested blocks: each keeps its own record
            jaxcourse.selfcheck("t.1", names=[], namespace={}, checks=[
                (lambda: sneaky(x).tolist() == [1, 2, 0], "计数不对")])
            jaxcourse.selfcheck("t.2", names=[], namespace={}, checks=[(strict_probe, "用了 bincount")])
            jaxcourse.selfcheck("t.3", names=[], namespace={}, checks=[(lambda: jnp.sum(x) == 2, "和不对")])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("❌ 练习 t.1") and "bincount" in out[0] and "接住" in out[0]
    assert out[1] == "❌ 练习 t.2：练习的限制不允许用 jax.numpy.bincount"   # the refusal is the headline
    assert out[2] == "✅ 练习 t.3：通过！"


def test_strict_forbid_also_blocks_library_functions_built_on_the_banned_one():
    """The default lets jnp.linalg.inv use solve internally; strict=True bans the computation itself, so a
    library route (jax.nn.log_softmax → logsumexp, inv → solve) is refused too."""
    a = jnp.array([[2.0, 0.0], [0.0, 4.0]])
    with jaxcourse.forbid("jax.numpy.linalg.solve"):
        jnp.linalg.inv(a)
    with pytest.raises(jaxcourse.ForbiddenCall, match="solve"):
        with jaxcourse.forbid("jax.numpy.linalg.solve", strict=True):
            jnp.linalg.inv(a)
    with jaxcourse.forbid("jax.numpy.linalg.solve", strict=True):    # unrelated library code still runs
        assert float(jnp.linalg.det(a)) == pytest.approx(8.0)
    assert jnp.allclose(jnp.linalg.inv(a) @ a, jnp.eye(2))          # and nothing is left behind


def test_forbid_catches_a_banned_function_handed_to_a_library_to_call():
    """Review 6: the original kept in a tuple (out of the reference swap's reach) and handed to library code that
    calls it (jnp.piecewise's branch, a Mock's side_effect, equinox.filter_jit). A library calling a function it
    names itself (inv → solve) stays allowed."""
    from unittest import mock

    import equinox as eqx

    held = (jax.nn.log_sigmoid,)
    x = jnp.array([-1.0, 2.0])
    routes = {"piecewise": lambda v: jnp.piecewise(v, [v == v], [held[0]]),
              "mock": lambda v: mock.Mock(side_effect=held[0])(v),
              "filter_jit": lambda v: eqx.filter_jit(held[0])(v)}
    for name, route in routes.items():
        assert jnp.allclose(route(x), jax.nn.log_sigmoid(x)), name
        with pytest.raises(jaxcourse.ForbiddenCall, match="log_sigmoid"):
            with jaxcourse.forbid("jax.nn.log_sigmoid"):
                route(x)
    with jaxcourse.forbid("jax.numpy.linalg.solve"):
        assert jnp.allclose(jnp.linalg.inv(jnp.eye(2)), jnp.eye(2))
    # a method's code is shared by every instance: JAX's own `with config.X(...)` inside sin must not count as
    # the learner's call of jax.enable_x64 (review 6 found 11.6's reference refused by exactly that)
    from jaxcourse.replacing import watching

    seen = []
    import numpy as np

    with watching([("jax.enable_x64", type(jax.enable_x64).__call__)], action=seen.append):
        for x in (np.float32(3.0), jnp.float32(1e-4), np.arange(1, 4, dtype=np.float32)):
            2 * jnp.sin(x / 2) ** 2 / x ** 2          # 进阶 11.6's reference answer
    assert seen == []
    with watching([("jax.enable_x64", type(jax.enable_x64).__call__)], action=seen.append):
        with jax.enable_x64(False):
            pass
    assert seen == ["jax.enable_x64"]


def test_forbid_and_counting_see_a_banned_method_run_through_a_thread_pool():
    """Review 7: a bound method (jnp.maximum.accumulate) or a function kept in a tuple, handed to
    ThreadPoolExecutor, was run by stdlib code that does not name it and so counted as library-internal."""
    import concurrent.futures as cf

    xs = jnp.array([3.0, 1.0, 4.0])
    acc = jnp.maximum.accumulate
    held = (jax.lax.cummax,)
    for banned, fn in (("jax.numpy.maximum.accumulate", acc), ("jax.lax.cummax", held[0])):
        with pytest.raises(jaxcourse.ForbiddenCall):
            with jaxcourse.forbid(banned), cf.ThreadPoolExecutor(1) as pool:
                pool.submit(fn, xs).result()
        with jaxcourse.counting(banned) as direct:
            fn(xs)
        with jaxcourse.counting(banned) as calls, cf.ThreadPoolExecutor(1) as pool:
            pool.submit(fn, xs).result()
        assert calls[banned] == direct[banned] > 0, (banned, calls, direct)
    with jaxcourse.forbid("jax.numpy.maximum.accumulate"):   # not called at all: nothing refused
        assert jnp.allclose(jax.lax.cummax(xs), jnp.array([3.0, 3.0, 4.0]))


def test_rewriting_changes_what_the_real_function_receives_so_a_two_faced_answer_shows():
    """Review 7: a stand-in from replaced() is a different object, so an answer can run honestly only when
    `jax.pure_callback is not` the original. rewriting() leaves the function in place and scales the callback's
    result: an honest answer follows on the direct call and under jit; one that skips the callback does not."""
    import sys

    import numpy as np

    original = (jax.pure_callback,)

    def honest(x):
        return jax.pure_callback(lambda v: np.median(v, axis=-1).astype(np.float32),
                                 jax.ShapeDtypeStruct(x.shape[:-1], jnp.float32), x, vmap_method="broadcast_all")

    def two_faced(x):
        if isinstance(x, jax.core.Tracer) or jax.pure_callback is not original[0]:
            return honest(x)
        return jnp.median(x, axis=-1)

    def scaled(cb):
        return lambda *a: (np.asarray(cb(*a)) * 1.5).astype(np.float32)

    x = jnp.array([5.0, 1.0, 40.0, 2.0, 3.0])
    with jaxcourse.rewriting("jax.pure_callback", callback=scaled) as seen:
        got = {"honest": float(honest(x)), "jit": float(jax.jit(honest)(x)), "two_faced": float(two_faced(x))}
        assert jax.pure_callback is original[0]
    if sys.version_info < (3, 13):
        assert not seen.effective and got == {"honest": 3.0, "jit": 3.0, "two_faced": 3.0}
        return
    assert seen.effective and seen.calls == 2
    assert got == {"honest": 4.5, "jit": 4.5, "two_faced": 3.0}, got
    assert float(jax.jit(honest)(x)) == 3.0            # nothing rewritten, nothing cached, after the block
    with pytest.raises(ValueError, match="参数"):
        with jaxcourse.rewriting("jax.pure_callback", no_such_argument=scaled):
            pass


def test_all_eqns_looks_inside_custom_root_solvers():
    """lax.custom_root is a call_hi_primitive in JAX 0.12: its solver's jaxpr hides in a param object's attribute;
    a host callback there must still be seen (review 6, 进阶 4.4)."""
    import numpy as np

    def cube_root(a):
        def solve(g, y):
            return jax.pure_callback(np.cbrt, jax.ShapeDtypeStruct((), jnp.float32), y)
        return jax.lax.custom_root(lambda x: x ** 3 - a, 1.0, solve, lambda g, y: y / g(1.0))

    assert "pure_callback" in jaxcourse.host_callbacks(cube_root, 2.0)
    assert "pure_callback" in jaxcourse.opaque_calls(cube_root, 2.0)


def test_short_traceback_keeps_only_cell_frames_and_the_message():
    source = "def f(n):\n    return g(n)\ndef g(n):\n    if n == 0:\n        raise ValueError('坏了')\n    return g(n - 1)\n"
    namespace = {}
    exec(compile(source, "<cell 1a2b3c4d>", "exec"), namespace)
    try:
        namespace["f"](5)
    except ValueError as exc:
        lines = short_traceback(ValueError, exc, exc.__traceback__, lambda name: "Cell In[7]")[0].splitlines()
    frames = [line for line in lines if line.startswith("Cell In[7]")]
    assert len(frames) == SHORT_FRAMES and lines[-1] == "ValueError: 坏了"
    assert frames[-1] == "Cell In[7], line 5, in g"


def test_jaxpr_helpers_look_inside_nested_programs():
    hidden = jax.jit(lambda x: jax.jit(lambda y: y.T @ y)(x).sum())
    assert {"transpose", "dot_general"} & jaxcourse.primitive_names(hidden, jnp.ones((3, 3)))
    assert jaxcourse.jaxpr_size(hidden, jnp.ones((3, 3))) > len(jax.make_jaxpr(hidden)(jnp.ones((3, 3))).eqns)
    batched = lambda n: jax.make_jaxpr(jax.vmap(jnp.sin))(jnp.ones(n))
    looped = lambda n: jax.make_jaxpr(lambda x: jnp.stack([jnp.sin(v) for v in x]))(jnp.ones(n))
    scanned = lambda n: jax.make_jaxpr(lambda x: jax.lax.map(jnp.sin, x))(jnp.ones(n))
    assert jaxcourse.loop_free(batched) and not jaxcourse.loop_free(looped) and not jaxcourse.loop_free(scanned)
    # same_size allows a scan (one equation whatever the length) but not a loop unrolled while tracing
    assert jaxcourse.same_size(scanned) and jaxcourse.same_size(batched) and not jaxcourse.same_size(looped)


def test_forbid_also_catches_a_name_imported_from_the_module():
    from jax.nn import logsumexp   # bound before the check, as a learner's `from … import` would be

    globals()["lse_alias"] = logsumexp
    try:
        with pytest.raises(jaxcourse.ForbiddenCall):
            with jaxcourse.forbid("jax.nn.logsumexp"):
                lse_alias(jnp.zeros(3))   # noqa: F821  (a module global, like a notebook name)
        assert float(lse_alias(jnp.zeros(1))) == 0.0   # restored
    finally:
        del globals()["lse_alias"]


def test_expect_error_prints_the_message_without_terminal_colour_codes(capsys):
    with jaxcourse.expect_error(ValueError, match="block shape"):
        raise ValueError("\x1b[1mblock shape\x1b[0m must be divisible by 8")
    out = capsys.readouterr().out
    assert out == "预期中的报错 → ValueError: block shape must be divisible by 8\n"
    with jaxcourse.expect_warning(UserWarning):
        import warnings
        warnings.warn("\x1b[31mred\x1b[0m text")
    assert capsys.readouterr().out == "预期中的警告 → UserWarning: red text\n"


def test_primitive_names_sees_inside_sub_jaxprs_unless_top():
    def f(x):
        return jax.lax.scan(lambda c, xi: (c + jnp.sin(xi), None), 0.0, x)[0]
    x = jnp.ones(3)
    assert {"scan", "sin", "add"} <= jaxcourse.primitive_names(f, x)
    assert jaxcourse.primitive_names(f, x, top=True) == {"scan"}


def test_expect_error_prints_what_every_python_says_without_313s_suggestion(capsys):
    """Python 3.13 appends "Did you mean 'check_vma'?" to an unexpected-keyword TypeError; 3.12 does not."""
    with jaxcourse.expect_error(TypeError, match="Did you mean"):   # match still sees the whole message
        raise TypeError("shard_map() got an unexpected keyword argument 'check_rep'. Did you mean 'check_vma'?")
    assert capsys.readouterr().out == "预期中的报错 → TypeError: shard_map() got an unexpected keyword argument 'check_rep'\n"


def _make_hidden_counter():
    bc = jnp.bincount   # captured in a closure: not a module global

    def hidden(x):
        return bc(x, length=3)
    return hidden


def _default_counter(x, bc=jnp.bincount):
    return bc(x, length=3)


def _kw_counter(x, *, bc=jnp.bincount):
    return bc(x, length=3)


def test_forbid_catches_closures_defaults_and_jitted_wrappers():
    x = jnp.array([0, 1, 1])
    globals().update(_closure_answer=_make_hidden_counter(), _jit_answer=jax.jit(_make_hidden_counter()),
                     _table={"count": jnp.bincount})
    try:
        for answer in (_closure_answer, _jit_answer, _default_counter, _kw_counter,  # noqa: F821
                       lambda v: _table["count"](v, length=3)):  # noqa: F821
            assert answer(x).tolist() == [1, 2, 0]
            with pytest.raises(jaxcourse.ForbiddenCall, match="bincount"):
                with jaxcourse.forbid("jax.numpy.bincount"):
                    answer(x)
            assert answer(x).tolist() == [1, 2, 0]   # restored
    finally:
        for name in ("_closure_answer", "_jit_answer", "_table"):
            del globals()[name]


def test_depends_on_sees_whether_the_result_flows_from_the_primitive():
    x = jnp.arange(1.0, 6.0)
    scanned = lambda v: jax.lax.scan(lambda c, e: (c + e, c), 0.0, v)[1]     # exclusive cumsum by scan
    decoy = lambda v: scanned(v) * 0 + (jnp.cumsum(v) - v)                    # same values, scan result unused
    dropped = lambda v: (scanned(v), jnp.cumsum(v) - v)[1]
    gated = lambda v: jnp.where(False, scanned(v), jnp.cumsum(v) - v)
    assert jnp.allclose(scanned(x), decoy(x)) and jnp.allclose(scanned(x), gated(x))
    assert jaxcourse.depends_on(scanned, (x,), {"scan"}) and jaxcourse.depends_on(jax.jit(scanned), (x,), {"scan"})
    assert not any(jaxcourse.depends_on(f, (x,), {"scan"}) for f in (decoy, dropped, gated))
    # in a gradient program a zero cotangent through the primitive stays zero: not a dependence
    assert jaxcourse.depends_on(jax.grad(lambda v: (scanned(v) ** 2).sum()), (x,), {"scan"})
    assert not jaxcourse.depends_on(jax.grad(lambda v: (decoy(v) ** 2).sum()), (x,), {"scan"})


def test_split_at_separates_what_runs_inside_a_primitive():
    f = lambda v: jax.lax.scan(lambda c, e: (c + jnp.sin(e), None), 0.0, v)[0] * 2.0
    outside, inside, count = jaxcourse.split_at(jax.jit(f), (jnp.ones(3),), "scan")
    assert count == 1 and "sin" in inside and "sin" not in outside and {"scan", "mul"} <= outside


def test_forbid_blocks_a_method_of_a_class():
    compiled = jax.jit(lambda x: x * 2).lower(jnp.ones(3)).compile()
    assert compiled.cost_analysis() is not None
    with pytest.raises(jaxcourse.ForbiddenCall, match="cost_analysis"):
        with jaxcourse.forbid("jax.stages.Compiled.cost_analysis"):
            compiled.cost_analysis()
    assert compiled.cost_analysis() is not None   # restored
    with pytest.raises(ValueError, match="找不到"):
        with jaxcourse.forbid("no_such_module_xyz.f"):
            pass


def test_value_part_keeps_only_what_the_value_needs():
    x = jnp.array(0.7)
    primal_and_tangent = lambda v: jax.jvp(jnp.sin, (v,), (jnp.ones_like(v),))[0]
    assert "cos" in jaxcourse.primitive_names(primal_and_tangent, x)       # the tangent's cos is traced
    only_value = jaxcourse.value_part(primal_and_tangent, x)
    assert "cos" not in jaxcourse.primitive_names(only_value, x)            # … but the value does not need it
    assert float(only_value(x)) == float(jnp.sin(x))
    # review 10: for a jitted function the value and the tangent come out of one jit equation; the tangent's
    # work inside it must go too
    jitted = jax.jit(lambda v: jnp.sin(v) * 2)
    through_jit = lambda v: jax.jvp(jitted, (v,), (jnp.ones_like(v),))[0]  # noqa: E731
    assert "cos" in jaxcourse.primitive_names(through_jit, x)
    assert "cos" not in jaxcourse.primitive_names(jaxcourse.value_part(through_jit, x), x)
    assert float(jaxcourse.value_part(through_jit, x)(x)) == float(jitted(x))


def test_forbid_catches_aliases_no_reference_swap_can_reach():
    """The review's bypasses: a partial, a tuple, a bound ufunc method, jax.jit of the function itself, the
    library's internal module path. forbid watches the function's code, so every one of them is caught."""
    import functools

    from jax._src.numpy import lax_numpy   # the internal path a learner could import from

    x = jnp.array([0, 1, 1])
    held = (jnp.bincount,)
    routes = {
        "partial": functools.partial(jnp.bincount, length=3),
        "tuple": lambda v: held[0](v, length=3),
        "jit of it": functools.partial(jax.jit(jnp.bincount, static_argnames="length"), length=3),
        "internal path": functools.partial(lax_numpy.bincount, length=3),
    }
    for name, call in routes.items():
        assert call(x).tolist() == [1, 2, 0], name
        with pytest.raises(jaxcourse.ForbiddenCall, match="bincount"):
            with jaxcourse.forbid("jax.numpy.bincount"):
                call(x)
        assert call(x).tolist() == [1, 2, 0], name   # restored
    reduce_early = jnp.logaddexp.reduce
    v = jnp.array([0.0, 1.0, 2.0])
    with pytest.raises(jaxcourse.ForbiddenCall, match="logaddexp"):
        with jaxcourse.forbid("jax.numpy.logaddexp"):
            reduce_early(v)
    assert jnp.allclose(reduce_early(v), jax.nn.logsumexp(v))


def test_forbid_leaves_library_internal_uses_alone():
    """Banning a function blocks the learner's calls, not other library functions built on it: with
    jnp.linalg.solve banned, jnp.linalg.inv (which calls solve internally) still runs."""
    a = jnp.array([[2.0, 0.0], [0.0, 4.0]])
    with jaxcourse.forbid("jax.numpy.linalg.solve"):
        assert jnp.allclose(jnp.linalg.inv(a) @ a, jnp.eye(2))
    with pytest.raises(jaxcourse.ForbiddenCall):
        with jaxcourse.forbid("jax.numpy.linalg.solve"):
            jnp.linalg.solve(a, jnp.ones(2))
    # no hook is left behind
    assert jnp.allclose(jnp.linalg.solve(a, jnp.ones(2)), jnp.array([0.5, 0.25]))


def test_replaced_wraps_a_function_and_its_notebook_aliases():
    from jax.lax import while_loop   # an alias bound before the check

    globals()["_wl"] = while_loop
    calls = []

    def counting(original):
        def wrapper(*args, **kwargs):
            calls.append(1)
            return original(*args, **kwargs)
        return wrapper
    try:
        body = lambda n: _wl(lambda c: c < n, lambda c: c + 1, 0)   # noqa: E731,F821
        with jaxcourse.replaced("jax.lax.while_loop", counting) as wrapper:
            assert int(jax.jit(body)(5)) == 5 and int(jax.lax.while_loop(lambda c: c < 2, lambda c: c + 1, 0)) == 2
            assert _wl is wrapper   # noqa: F821
        assert len(calls) == 2 and _wl is while_loop and jax.lax.while_loop is while_loop   # noqa: F821
    finally:
        del globals()["_wl"]


def test_host_callbacks_finds_numpy_work_hidden_in_a_program():
    import numpy as np

    on_host = lambda x: jax.pure_callback(lambda v: np.cumsum(v), jax.ShapeDtypeStruct(x.shape, x.dtype), x)  # noqa: E731
    nested = jax.jit(lambda x: jax.lax.cond(x[0] > 0, on_host, jnp.cumsum, x))
    printed = lambda x: (jax.debug.print("{}", x), jnp.cumsum(x))[1]  # noqa: E731
    x = jnp.arange(3.0)
    assert jaxcourse.host_callbacks(on_host, x) == {"pure_callback"}
    assert jaxcourse.host_callbacks(nested, x) == {"pure_callback"}     # inside cond inside jit
    assert jaxcourse.host_callbacks(printed, x) == set() and jaxcourse.host_callbacks(jnp.cumsum, x) == set()


def test_depends_on_takes_a_predicate_to_pick_single_equations():
    """2.4's question: is the (M, N) cross term really a matrix product? Only the matching dot_general is nudged."""
    a, b = jnp.ones((4, 3)), jnp.arange(15.0).reshape(5, 3)
    cross = lambda u, v: (u * u).sum(1)[:, None] + (v * v).sum(1)[None] - 2 * u @ v.T   # noqa: E731
    decoy = lambda u, v: cross(u, v) + 0 * jnp.ones(4) @ jnp.ones((4, 5))                # noqa: E731
    broadcast = lambda u, v: ((u[:, None] - v[None]) ** 2).sum(-1) + 0 * jnp.ones(4) @ jnp.ones((4, 5))  # noqa: E731
    mn = lambda e: e.primitive.name == "dot_general" and e.outvars[0].aval.shape == (4, 5)  # noqa: E731
    assert jnp.allclose(cross(a, b), broadcast(a, b), atol=1e-4)
    assert jaxcourse.depends_on(cross, (a, b), mn) and jaxcourse.depends_on(decoy, (a, b), mn)
    assert not jaxcourse.depends_on(broadcast, (a, b), mn)         # the only (4, 5) product is multiplied by 0
    assert jaxcourse.depends_on(broadcast, (a, b), {"dot_general"}) is False


def test_collectives_reads_the_compiled_program():
    text = """ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %ag = (f32[8]{0}, f32[16]{0}) all-gather-start(f32[8]{0} %p), dimensions={0}
  %d = f32[16]{0} all-gather-done(%ag)
  ROOT %s = f32[8]{0} slice(f32[16]{0} %d), slice={[0:8]}
}"""
    assert jaxcourse.collectives(text) == {"all-gather"}
    assert jaxcourse.collectives(jax.jit(lambda x: x * 2).lower(jnp.ones(3)).compile().as_text()) == set()


def test_forbid_reaches_c_functions_through_the_librarys_other_modules():
    """A NumPy ufunc has no Python code to watch; forbid swaps every module attribute of NumPy that points to it."""
    import numpy as np
    from numpy._core import umath   # where NumPy defines logaddexp; a learner could call it from here

    assert umath.logaddexp is np.logaddexp
    with pytest.raises(jaxcourse.ForbiddenCall, match="numpy.logaddexp"):
        with jaxcourse.forbid("numpy.logaddexp"):
            umath.logaddexp(0.0, 1.0)
    assert umath.logaddexp is np.logaddexp and float(np.logaddexp(0.0, 0.0)) == pytest.approx(np.log(2.0))


def test_call_body_opens_jit_and_custom_jvp_but_not_control_flow():
    inner = jax.jit(lambda a, b: a * b)
    closed = jax.make_jaxpr(lambda x: inner(x, 2.0) + jax.nn.relu(x) + jax.lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0)
    opened = {e.primitive.name: jaxcourse.call_body(e) for e in closed.jaxpr.eqns}
    body, consts = opened["jit"]
    assert [e.primitive.name for e in body.eqns] == ["mul"] and len(body.invars) == 2 and consts == []
    assert opened["custom_jvp_call"] is not None
    assert opened["cond"] is None and opened["add"] is None


def test_around_follows_the_data_past_a_shard_map():
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((1,), ("x",))
    v = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    double_in = lambda u: jax.shard_map(lambda b: 2.0 * b, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(u)  # noqa: E731
    assert jaxcourse.around(double_in, (v,)) == (set(), set())
    assert jaxcourse.around(lambda u: 2.0 * u, (v,)) == ({"mul"}, set())                    # done before, outside
    assert jaxcourse.around(jax.jit(lambda u: double_in(u).sum()), (v,)) == (set(), {"reduce_sum"})   # after


def test_has_upper_bound_sees_a_bound_on_a_symbolic_dimension_even_after_a_round_trip():
    from jax import export

    def exported(spec):
        b, = export.symbolic_shape(spec[0], constraints=spec[1])
        exp = export.export(jax.jit(lambda x: x.sum(axis=1)))(jax.ShapeDtypeStruct((b, 3), jnp.float32))
        return exp, export.deserialize(exp.serialize())

    for exp in exported(("b", ())):
        assert not jaxcourse.has_upper_bound(exp)
    for exp in exported(("b", ("b <= 1000",))):
        assert jaxcourse.has_upper_bound(exp)
    assert not jaxcourse.has_upper_bound(exported(("b", ("b >= 2",)))[1])   # a lower bound is not an upper one


def test_opaque_calls_names_what_a_jaxpr_check_cannot_look_into():
    from jax import export

    hidden = export.export(jax.jit(lambda v: jnp.sqrt(v)))(jax.ShapeDtypeStruct((3,), jnp.float32))
    x = jnp.arange(1.0, 4.0)
    assert "sqrt" not in jaxcourse.primitive_names(hidden.call, x)        # the export hides its body
    assert jaxcourse.opaque_calls(hidden.call, x) == {"call_exported"}
    assert jaxcourse.opaque_calls(jax.jit(jnp.sqrt), x) == set()


def test_same_traced_catches_an_answer_that_is_two_faced_about_tracers():
    import jax
    import jax.numpy as jnp

    from jaxcourse import same_traced

    x = jnp.array([1.5, -2.0, jnp.nan])

    def honest(x):
        return {"s": jnp.cumsum(x), "n": jnp.int32(3), "k": jax.random.key(0)}

    def two_faced(x):   # right values when called directly, another program when traced
        if isinstance(x, jax.core.Tracer):
            return {"s": x * 2, "n": jnp.int32(3), "k": jax.random.key(0)}
        return honest(x)

    def other_dtype(x):
        return x.astype(jnp.float16) if isinstance(x, jax.core.Tracer) else x

    def other_tree(x):
        return (x,) if isinstance(x, jax.core.Tracer) else [x]

    assert same_traced(honest, x)               # NaN in the same place counts as equal
    assert not same_traced(two_faced, x)
    assert not same_traced(other_dtype, x)
    assert not same_traced(other_tree, x)
    assert same_traced(lambda x, n: x[:n] * 2, x, 2, static_argnums=(1,))


def test_counting_sees_calls_through_tuples_partials_and_closures_but_not_library_internals():
    import functools

    import numpy as np

    ops = (jax.random.split,)                        # held where a reference swap cannot reach
    split_later = functools.partial(jax.random.split, num=3)
    key = jax.random.key(0)

    def answer(k):
        a = ops[0](k)
        b = split_later(a[0])
        return np.sqrt(np.float32(4.0)) + jax.random.uniform(b[0])   # uniform calls split inside: not counted

    with jaxcourse.counting("jax.random.split", "numpy.sqrt", "jax.random.uniform") as n:
        answer(key)
        jax.jit(answer)(key)                         # the trace counts once per call site
    assert n == {"jax.random.split": 4, "numpy.sqrt": 2, "jax.random.uniform": 2}, n
    with jaxcourse.counting("jax.random.split") as n:
        pass
    answer(key)                                      # nothing is counted after the block
    assert n == {"jax.random.split": 0}


def test_grows_on_host_tells_a_host_loop_from_a_vectorised_direct_call():
    import functools

    names = ("jax.random.fold_in", "jax.random.uniform")
    row = jax.jit(lambda k, i: jax.random.uniform(jax.random.fold_in(k, i), (3,)))
    key = jax.random.key(0)
    ops = (jax.random.fold_in, jax.random.uniform)   # a loop through aliases a reference swap cannot see

    def vectorised(n):
        return jax.vmap(lambda i: jax.random.uniform(jax.random.fold_in(key, i), (3,)))(jnp.arange(n))

    def host_loop(n):
        return jnp.stack([ops[1](ops[0](key, i), (3,)) for i in range(n)])

    def jitted_rows(n):              # each step a cached jit call: the count of Python calls grows instead
        return jnp.stack([functools.partial(row, key)(i) for i in range(n)])

    def on_host(n):
        return jax.pure_callback(lambda: jnp.zeros((n, 3), jnp.float32), jax.ShapeDtypeStruct((n, 3), jnp.float32))

    assert not jaxcourse.grows_on_host(vectorised, 4, 64, names)
    assert jaxcourse.grows_on_host(host_loop, 4, 64, names)
    assert jaxcourse.grows_on_host(jitted_rows, 4, 64, names)
    with pytest.raises(jaxcourse.ForbiddenCall):
        jaxcourse.grows_on_host(on_host, 4, 64, names)


def test_executions_count_a_host_loop_that_python_cannot_see():
    """map over a cached jit function, then np.stack: the loop runs in C (no Python frame per row), but every row
    executes the compiled program once, so the count grows with the batch; a vmapped answer's does not."""
    import numpy as np

    row = jax.jit(lambda x: x * 2.0)
    on_host = lambda n: np.stack(list(map(row, jnp.arange(n, dtype=jnp.float32))))
    vectorised = lambda n: jax.vmap(row)(jnp.arange(n, dtype=jnp.float32))
    assert jaxcourse.executions_grow(on_host, 4, 32)
    assert not jaxcourse.executions_grow(vectorised, 4, 32)
    assert jaxcourse.executions(lambda: vectorised(4)) >= 1


def test_eager_primitives_names_what_ran_outside_jit():
    ran = jaxcourse.eager_primitives(lambda: jnp.cumsum(jnp.sin(jnp.arange(3.0))))
    assert {"sin", "cumsum"} <= ran and "cos" not in ran


def test_eager_ops_within_checks_every_call_also_under_disable_jit():
    """The allowed set holds for every argument tuple, with and without jax.disable_jit(); a call that raises, or an
    op outside the set in any one call (here: only for negative input, only the second tuple), fails the check."""
    import numpy as np

    def host_neg(x):  # np.asarray: called directly, the callback is handed jax Arrays
        return jax.pure_callback(lambda v: np.negative(np.asarray(v)), jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def sneaky(x):
        return host_neg(x) if np.asarray(x)[0] > 0 else jnp.negative(x)

    pos, neg = (jnp.array([2.0, 3.0]),), (jnp.array([-2.0, 3.0]),)
    assert jaxcourse.eager_ops_within({"pure_callback"}, host_neg, [pos, neg])
    assert jaxcourse.eager_ops_within({"pure_callback", "negative", "neg"}, sneaky, [pos, neg])
    assert not jaxcourse.eager_ops_within({"pure_callback"}, sneaky, [pos, neg])
    assert jaxcourse.eager_ops_within({"pure_callback"}, sneaky, [pos])
    assert not jaxcourse.eager_ops_within({"pure_callback"}, lambda x: 1 / 0, [pos])
    # an honest answer wrapped in jax.jit runs one program named after itself: accepted (the traced checks grade
    # that program); under disable_jit its ops run one by one and must still be allowed
    jitted = jax.jit(host_neg)
    assert jaxcourse.eager_ops_within({"pure_callback"}, jitted, [pos, neg])
    assert not jaxcourse.eager_ops_within({"pure_callback"}, jax.jit(lambda x: -x), [pos])   # seen under disable_jit
    named = jax.jit(lambda x: -x)        # a plain function may not borrow the exemption by copying a jit's name
    plain = lambda x: named(x)  # noqa: E731
    plain.__name__ = named.__name__
    assert not jaxcourse.eager_ops_within({"pure_callback"}, plain, [pos])
    # review 10: a plain function that calls an honest jitted helper runs a program named after the helper; the
    # helper's jit equation in the answer's program holds only allowed ops, so it passes; a helper that negates
    # too does not
    helper = jax.jit(host_neg)
    assert jaxcourse.eager_ops_within({"pure_callback"}, lambda x: helper(x), [pos, neg])
    extra = jax.jit(lambda x: -host_neg(x))
    assert not jaxcourse.eager_ops_within({"pure_callback"}, lambda x: extra(x), [pos])
    # … also when the helper holds a custom_jvp around the callback (the container is not an op)
    rule = jax.custom_jvp(host_neg)
    rule.defjvp(lambda p, t: (host_neg(p[0]), -t[0]))
    wrapped = jax.jit(rule)
    assert jaxcourse.eager_ops_within({"pure_callback"}, lambda x: wrapped(x), [pos, neg])
    # … and when a Python scalar argument is a static argument of the helper's jit
    thrice = jax.jit(lambda x, s: host_neg(x) if s == 1 else host_neg(host_neg(host_neg(x))), static_argnums=1)
    assert jaxcourse.eager_ops_within({"pure_callback"}, lambda x, s: thrice(x, s), [pos + (1,), neg + (3,)])


def test_rewriting_says_once_when_this_python_cannot_rewrite(monkeypatch, capsys):
    """On Python 3.12 (Colab's default) the rewriting checks are skipped: the learner is told so, once."""
    from jaxcourse import replacing

    monkeypatch.setattr(replacing.sys, "version_info", (3, 12, 0))
    monkeypatch.setattr(replacing, "_told_skipped", [])
    for _ in range(2):
        with jaxcourse.rewriting("jax.pure_callback", callback=lambda cb: cb) as rw:
            assert not rw.effective
    assert capsys.readouterr().out.count("3.13") == 1


def test_grows_on_host_ignores_which_size_was_compiled_before_and_sees_other_threads():
    """Review 8: inside a check block JAX traces again but one size may reuse a compiled program, which put
    thousands of compile-time Python calls on one side (a correct vmap answer was told it loops); a row loop
    moved into a thread, or into a child process, must still count."""
    import subprocess
    import threading

    key = jax.random.key(0)
    names = ("jax.random.split", "jax.random.uniform", "jax.random.normal")

    def vectorised(n):
        draw = lambda k: jax.random.normal(k, (3,)) * jax.random.uniform(k, (3,))
        return jax.jit(lambda k: jax.vmap(draw)(jax.random.split(k, n)))(key)
    vectorised(4)                                    # compiled before the check, the other size not
    assert not jaxcourse.grows_on_host(vectorised, 4, 64, names)

    def threaded(n):
        def row(i):
            return i * 2.0

        def loop():
            for i in range(n):
                row(i)                               # Python work per row, in another thread
        worker = threading.Thread(target=loop)
        worker.start()
        worker.join()
        return jnp.zeros(n)
    assert jaxcourse.grows_on_host(threaded, 4, 4000, names)

    with pytest.raises(jaxcourse.ForbiddenCall):
        jaxcourse.grows_on_host(lambda n: subprocess.run(["true"]) and jnp.zeros(n), 4, 64, ("jax.numpy.sin",))


def _double_in_worker(conn):
    """A worker started before the check: waits on a pipe, doubles what it gets with JAX (module level so spawn can
    pickle it). A process that has imported JAX has background threads that wake now and then while it idles."""
    import jax.numpy as jnp

    while True:
        x = conn.recv()
        if x is None:
            return
        conn.send(int(jnp.asarray(x) * 2))


def test_work_handed_to_another_process_breaks_a_forbid_block():
    """Review 9: a banned computation (or a host loop) done in a child — os.posix_spawn, a multiprocessing 'spawn'
    process (no audit event of its own), or a worker started before the check and waiting on a pipe — was invisible
    to every in-process instrument. forbid (and the profiler checks) now refuse each; an honest block passes."""
    import multiprocessing
    import os

    with jaxcourse.forbid("jax.numpy.sort"):
        assert float(jnp.sum(jnp.arange(4.0))) == 6.0          # honest work in this process
    with pytest.raises(jaxcourse.ForbiddenCall, match="os.posix_spawn"):
        with jaxcourse.forbid("jax.numpy.sort"):
            os.waitpid(os.posix_spawn("/bin/true", ["true"], os.environ), 0)
    ctx = multiprocessing.get_context("spawn")
    with pytest.raises(jaxcourse.ForbiddenCall, match="别的进程"):
        with jaxcourse.forbid("jax.numpy.sort"):
            p = ctx.Process(target=os.getpid)
            p.start()
            p.join()
    mine, theirs = ctx.Pipe()
    worker = ctx.Process(target=_double_in_worker, args=(theirs,))
    worker.start()
    try:
        mine.send(1)
        assert mine.recv() == 2                                   # warmed up right before the check
        for _ in range(3):
            with jaxcourse.forbid("jax.numpy.sort"):
                time.sleep(0.5)                                   # an idle worker alone is no violation
        with pytest.raises(jaxcourse.ForbiddenCall, match=f"pid {worker.pid}"):
            with jaxcourse.forbid("jax.numpy.sort"):
                mine.send(21)
                assert mine.recv() == 42
        with pytest.raises(jaxcourse.ForbiddenCall, match="别的进程"):
            jaxcourse.executions(lambda: (mine.send(3), mine.recv())[1])
    finally:
        mine.send(None)
        worker.join()


def test_counting_and_rewriting_refuse_work_handed_to_another_process():
    """Review 10: counting (call counts) and rewriting (perturbed arguments) saw only this process, so an answer that
    made its calls in a child was counted as zero calls and returned unperturbed values. Both now refuse it; honest
    blocks still count and rewrite."""
    import subprocess

    with jaxcourse.counting("jax.numpy.sin") as counted:
        jnp.sin(1.0)
    assert counted["jax.numpy.sin"] == 1
    with pytest.raises(jaxcourse.ForbiddenCall, match="subprocess"):
        with jaxcourse.counting("jax.numpy.sin"):
            subprocess.run(["true"])
    with pytest.raises(jaxcourse.ForbiddenCall, match="subprocess"):
        with jaxcourse.rewriting("jax.numpy.sin", x=lambda v: v):
            subprocess.run(["true"])


def test_selfcheck_names_the_cause_of_an_error_jax_reports_without_one(capsys):
    """pl.program_id inside a pl.when body fails in interpret mode with 'MLIR translation rule … not found': the
    self-check adds why and what to do; an error it does not know is shown as before, with nothing added."""
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        @pl.when(pl.program_id(0) >= 0)
        def _():
            o_ref[...] = x_ref[...] + pl.program_id(0)

    def run():
        spec = pl.BlockSpec((4,), lambda i: (i,))
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), grid=(2,),
                              in_specs=[spec], out_specs=spec, interpret=True)(jnp.ones(8))

    jaxcourse.selfcheck("7.9", names=[], checks=[(run, "结果不对")], namespace={})
    out = capsys.readouterr().out
    assert out.startswith("❌ 练习 7.9：结果不对（检查时出错：NotImplementedError:") and "program_id" in out
    assert "原因：解释模式下 pl.program_id 不能在 pl.when" in out
    jaxcourse.selfcheck("7.9", names=[], checks=[(lambda: 1 / 0, "结果不对")], namespace={})
    assert "原因" not in capsys.readouterr().out
