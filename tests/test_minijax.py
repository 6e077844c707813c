"""The pure-Python model (jaxcourse.minijax) agrees with the pinned JAX: jaxprs, derivatives, batching,
control flow, the jit cache, pytrees, collectives and threefry bits. A mismatch here is a failure."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxcourse
import jaxcourse.minijax as mj

mnp = mj.numpy


def to_np(x):
    """A model value (Array, nested tuples/lists/dicts of them) as NumPy."""
    return jax.tree.map(lambda a: np.asarray(a.tolist() if isinstance(a, mj.Array) else a, np.float64),
                        x, is_leaf=lambda a: isinstance(a, mj.Array))


def close(model, real, rtol=2e-6, atol=1e-6):
    a, b = to_np(model), jax.tree.map(lambda v: np.asarray(v, np.float64), real)
    assert jax.tree.structure(a) == jax.tree.structure(b), (a, b)
    for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        assert u.shape == v.shape, (u.shape, v.shape)
        np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


def real_names(closed) -> list[str]:
    return [e.primitive.name for e in jaxcourse.all_eqns(closed)]


def both(make):
    """Build the same inputs for the model (mj.Array) and for JAX (jnp arrays)."""
    return make(mnp), make(jnp)


# ---- jaxprs: same primitives, and for the simplest functions the same text ----
FUNCS = {
    "sin_mul_pow": (lambda m, x: m.sin(x) * 2.0 + x ** 2, lambda m: (m.array([0.5, 1.0, 2.0]),)),
    "exp_log": (lambda m, x: m.maximum(x, 0.0) + m.exp(x) / m.log(x) - x, lambda m: (m.array(1.5),)),
    "tanh_matmul": (lambda m, w, x: m.dot(m.tanh(w), x), lambda m: (m.ones((2, 3)), m.ones(3))),
    "sum_dot": (lambda m, x, y: m.sum(x * y) + m.dot(x, y), lambda m: (m.ones(3), m.ones(3))),
    "rank_promotion": (lambda m, x, y: x + y, lambda m: (m.ones(3), m.ones((2, 3)))),
    "transpose_matmul": (lambda m, x: m.tanh(x) @ x.T, lambda m: (m.ones((2, 2)),)),
    "mean": (lambda m, x: m.mean(x * x), lambda m: (m.ones(4),)),
}
SAME_TEXT = {"sin_mul_pow", "exp_log", "rank_promotion", "one_line", "identity"}
FUNCS["one_line"] = (lambda m, x: x * 2.0, lambda m: (m.array(1.5),))
FUNCS["identity"] = (lambda m, x: x, lambda m: (m.ones(3),))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_make_jaxpr_primitives(name):
    f, make = FUNCS[name]
    margs, jargs = both(make)
    model = mj.make_jaxpr(lambda *a: f(mnp, *a))(*margs)
    real = jax.make_jaxpr(lambda *a: f(jnp, *a))(*jargs)
    assert model.primitive_names() == real_names(real), (str(model), str(real))
    if name in SAME_TEXT:
        assert str(model) == str(real)
    close(f(mnp, *margs), f(jnp, *jargs))


def test_cond_and_while_print_like_jax():
    g = lambda m, lx, x: lx.cond(x > 0, m.sin, m.cos, x)   # noqa: E731
    assert str(mj.make_jaxpr(lambda x: g(mnp, mj.lax, x))(1.0)) == str(jax.make_jaxpr(lambda x: g(jnp, lax, x))(1.0))
    w = lambda lx, x: lx.while_loop(lambda c: c < 3, lambda c: c + 1, x)   # noqa: E731
    assert str(mj.make_jaxpr(lambda x: w(mj.lax, x))(0)) == str(jax.make_jaxpr(lambda x: w(lax, x))(0))


def test_batched_cond_computes_both_branches():
    g = lambda m, lx, x: lx.cond(x > 0, m.sin, m.cos, x)   # noqa: E731
    xs = [-1.0, 0.5, 2.0]
    model = mj.make_jaxpr(mj.vmap(lambda x: g(mnp, mj.lax, x)))(mnp.array(xs)).primitive_names()
    real = real_names(jax.make_jaxpr(jax.vmap(lambda x: g(jnp, lax, x)))(jnp.array(xs)))
    assert model == real         # eq, stop_gradient, select_n per branch, both branches, one select_n
    assert "cond" not in model and {"sin", "cos", "select_n"} <= set(model), model
    safe = lambda m, lx, x: lx.cond(x > 0, m.sqrt, lambda v: v * 0.0, x)   # noqa: E731
    close(mj.grad(lambda v: mnp.sum(mj.vmap(lambda x: safe(mnp, mj.lax, x))(v)))(mnp.array([4.0, -1.0, 0.0])),
          jax.grad(lambda v: jnp.sum(jax.vmap(lambda x: safe(jnp, lax, x))(v)))(jnp.array([4.0, -1.0, 0.0])))
    unbatched = lambda x, p: lax.cond(p > 0, jnp.sin, jnp.cos, x)   # noqa: E731
    assert "cond" in real_names(jax.make_jaxpr(jax.vmap(unbatched, (0, None)))(jnp.ones(3), 1.0))
    m_unbatched = lambda x, p: mj.lax.cond(p > 0, mnp.sin, mnp.cos, x)   # noqa: E731
    assert "cond" in mj.make_jaxpr(mj.vmap(m_unbatched, (0, None)))(mnp.ones(3), 1.0).primitive_names()
    close(mj.vmap(lambda x: g(mnp, mj.lax, x))(mnp.array(xs)), jax.vmap(lambda x: g(jnp, lax, x))(jnp.array(xs)))


# ---- derivatives and batching: same values ----
def _loss(m, w, x, y):
    return m.mean((m.tanh(m.dot(x, w)) - y) ** 2)


def _data(m):
    w = m.array([0.5, -1.0, 2.0])
    x = m.array([[1.0, 2.0, 0.5], [0.0, -1.0, 1.0], [2.0, 0.3, -0.7], [1.0, 1.0, 1.0]])
    y = m.array([0.1, -0.2, 0.3, 0.0])
    return w, x, y


def test_grad_jvp_vjp_values():
    (mw, mx, my), (jw, jx, jy) = both(_data)
    close(mj.grad(lambda w: _loss(mnp, w, mx, my))(mw), jax.grad(lambda w: _loss(jnp, w, jx, jy))(jw))
    close(mj.value_and_grad(lambda w, x: _loss(mnp, w, x, my), argnums=(0, 1))(mw, mx),
          jax.value_and_grad(lambda w, x: _loss(jnp, w, x, jy), argnums=(0, 1))(jw, jx))
    f = lambda m, x: m.sin(x) * x ** 3 + m.exp(-x)   # noqa: E731
    close(mj.grad(mj.grad(lambda x: f(mnp, x)))(0.7), jax.grad(jax.grad(lambda x: f(jnp, x)))(0.7))
    close(mj.jvp(lambda w: _loss(mnp, w, mx, my), (mw,), (mnp.array([1.0, 0.0, -1.0]),)),
          jax.jvp(lambda w: _loss(jnp, w, jx, jy), (jw,), (jnp.array([1.0, 0.0, -1.0]),)))
    out, back = mj.vjp(lambda x: mnp.tanh(x @ mw), mx)
    jout, jback = jax.vjp(lambda x: jnp.tanh(x @ jw), jx)
    close(out, jout)
    close(back(mnp.array([1.0, 2.0, 3.0, 4.0])), jback(jnp.array([1.0, 2.0, 3.0, 4.0])))
    aux = mj.grad(lambda w: (_loss(mnp, w, mx, my), {"w": w * 2.0}), has_aux=True)(mw)
    jaux = jax.grad(lambda w: (_loss(jnp, w, jx, jy), {"w": w * 2.0}), has_aux=True)(jw)
    close(aux, jaux)
    relu0 = mj.grad(lambda x: mnp.maximum(x, 0.0))(0.0)   # a tie shares the gradient: 0.5 in both
    assert float(relu0) == float(jax.grad(lambda x: jnp.maximum(x, 0.0))(0.0)) == 0.5


def test_vmap_values_and_axes():
    (mw, mx, my), (jw, jx, jy) = both(_data)
    per_example = lambda m, w, x, y: (m.tanh(m.dot(x, w)) - y) ** 2   # noqa: E731
    close(mj.vmap(mj.grad(lambda w, x, y: per_example(mnp, w, x, y)), in_axes=(None, 0, 0))(mw, mx, my),
          jax.vmap(jax.grad(lambda w, x, y: per_example(jnp, w, x, y)), in_axes=(None, 0, 0))(jw, jx, jy))
    close(mj.vmap(lambda c: c * 2.0 + 1.0, in_axes=1, out_axes=1)(mx),
          jax.vmap(lambda c: c * 2.0 + 1.0, in_axes=1, out_axes=1)(jx))
    close(mj.vmap(mj.vmap(lambda a, b: a * b, (0, None)), (None, 0))(mw, my),
          jax.vmap(jax.vmap(lambda a, b: a * b, (0, None)), (None, 0))(jw, jy))
    close(mj.vmap(lambda r: mx @ r)(mx), jax.vmap(lambda r: jx @ r)(jx))
    close(mj.grad(lambda w: mnp.sum(mj.vmap(lambda r: mnp.dot(r, w))(mx) ** 2))(mw),
          jax.grad(lambda w: jnp.sum(jax.vmap(lambda r: jnp.dot(r, w))(jx) ** 2))(jw))


def test_control_flow_values():
    xs = [1.0, 2.0, 0.5, -3.0]
    step = lambda c, a: (c * a + 1.0, c - a)   # noqa: E731
    close(mj.lax.scan(step, 0.5, mnp.array(xs)), lax.scan(step, 0.5, jnp.array(xs)))
    close(mj.grad(lambda v: mj.lax.scan(step, 0.5, v)[0])(mnp.array(xs)),
          jax.grad(lambda v: lax.scan(step, 0.5, v)[0])(jnp.array(xs)))
    close(mj.vmap(lambda v: mj.lax.scan(step, 0.5, v))(mnp.array([xs, xs[::-1]])),
          jax.vmap(lambda v: lax.scan(step, 0.5, v))(jnp.array([xs, xs[::-1]])))
    g = lambda lx, m, x: lx.cond(x > 1.0, lambda v: v ** 3, m.sin, x)   # noqa: E731
    for x in (0.3, 2.0):
        close(mj.grad(lambda v: g(mj.lax, mnp, v))(x), jax.grad(lambda v: g(lax, jnp, v))(x))
    power = lambda lx, x: lx.fori_loop(0, 4, lambda i, v: v * x, 1.0)   # noqa: E731
    close(mj.grad(lambda x: power(mj.lax, x))(1.5), jax.grad(lambda x: power(lax, x))(1.5))
    count = lambda lx, x: lx.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] + 1), (0.0, 0))  # noqa: E731
    close(mj.vmap(lambda x: count(mj.lax, x))(mnp.array([1.0, 3.5, 0.0])),
          jax.vmap(lambda x: count(lax, x))(jnp.array([1.0, 3.5, 0.0])))
    grow = lambda lx, x: lx.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0)   # noqa: E731
    close(mj.jvp(lambda x: grow(mj.lax, x), (2.0,), (1.0,)), jax.jvp(lambda x: grow(lax, x), (2.0,), (1.0,)))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(lambda x: grow(lax, x))(2.0)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        mj.grad(lambda x: grow(mj.lax, x))(2.0)


def test_type_rules_and_python_control_flow_like_jax():
    """Weak types in branches and loop carries, carry checks, Python `if` under grad/jvp, int inputs to grad."""
    relu_like = lambda lx, x: lx.cond(x > 0, lambda v: v * v, lambda v: 0.0, x)   # noqa: E731
    close(mj.vmap(lambda x: relu_like(mj.lax, x))(mnp.array([1.0, -2.0])),
          jax.vmap(lambda x: relu_like(lax, x))(jnp.array([1.0, -2.0])))
    close(mj.grad(lambda x: relu_like(mj.lax, x))(mnp.float32(2.0)), jax.grad(lambda x: relu_like(lax, x))(jnp.float32(2.0)))
    close(mj.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0), lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0))
    for lx, m in ((lax, jnp), (mj.lax, mnp)):
        with pytest.raises(TypeError, match="scan body function carry input and carry output must have equal types"):
            lx.scan(lambda c, x: (c * x, c), 0.0, m.ones((3, 2)))
    step = lambda c, x: (c * 0.5 + x, c)   # noqa: E731
    close(mj.lax.scan(step, 1.0, mnp.array([1.0, 2.0, 3.0]), reverse=True),
          lax.scan(step, 1.0, jnp.array([1.0, 2.0, 3.0]), reverse=True))
    branchy = lambda x: x * x if x > 0 else -x   # noqa: E731
    for x in (3.0, -3.0):
        close(mj.grad(branchy)(x), jax.grad(branchy)(x))
        close(mj.jvp(branchy, (x,), (1.0,)), jax.jvp(branchy, (x,), (1.0,)))
    for g in (jax.grad, mj.grad):
        with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
            g(lambda x: x * x)(3)
    mixed = {"a": [1.0, 2.0], "b": 3.0}
    close(mj.vmap(lambda d: d["a"] * d["b"], in_axes=({"a": 0, "b": None},))({"a": mnp.array(mixed["a"]), "b": 3.0}),
          jax.vmap(lambda d: d["a"] * d["b"], in_axes=({"a": 0, "b": None},))({"a": jnp.array(mixed["a"]), "b": 3.0}))


def test_collectives_on_simulated_devices():
    """The model's pmap is vmap with an axis name; JAX's vmap takes collectives the same way."""
    xs = [1.0, 2.0, 3.0, 4.0]
    ring = [(i, (i + 1) % 4) for i in range(4)]

    def body(lx, x):
        return (lx.psum(x, "i"), lx.all_gather(x, "i"), lx.ppermute(x, "i", ring), lx.axis_index("i"))
    model = mj.pmap(lambda x: body(mj.lax, x), axis_name="i")(mnp.array(xs))
    real = jax.vmap(lambda x: body(lax, x), axis_name="i")(jnp.array(xs))
    close(model, real)
    with pytest.raises(NameError, match="unbound axis name"):
        mj.psum(mnp.array(xs), "i")
    grid = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]   # a collective over an outer axis, from inside an inner vmap

    def nested(lx):
        return lambda r: (lx.psum(r, "row"), lx.psum(r, "col"), lx.all_gather(r, "row"),
                          lx.ppermute(r, "row", [(0, 1), (1, 0)]))
    close(mj.vmap(mj.vmap(nested(mj.lax), axis_name="col"), axis_name="row")(mnp.array(grid)),
          jax.vmap(jax.vmap(nested(lax), axis_name="col"), axis_name="row")(jnp.array(grid)))
    close(mj.vmap(lambda v: mnp.stack([v[0], v[-1] * 2.0]), in_axes=-1)(mnp.array(grid)),
          jax.vmap(lambda v: jnp.stack([v[0], v[-1] * 2.0]), in_axes=-1)(jnp.array(grid)))
    partial = mj.pmap(lambda x: mj.ppermute(x, "i", [(0, 1), (1, 2)]), axis_name="i")(mnp.array(xs))
    assert partial.tolist() == [0.0, 1.0, 2.0, 0.0]    # like pmap: a device nobody sends to gets zeros


# ---- the jit cache: same retrace counts as JAX ----
def _count_real(calls, static=()):
    traces = []

    def probe(x, y=None, z=None):
        traces.append(1)
        return sum(jnp.sum(jnp.asarray(leaf)) for leaf in jax.tree.leaves((x, y, z)) if not isinstance(leaf, str))
    f = jax.jit(probe, static_argnums=static)
    for args, kwargs in calls:
        f(*args, **kwargs)
    return len(traces)


def _count_model(calls, static=()):
    def probe(x, y=None, z=None):
        return sum(mnp.sum(leaf) for leaf in mj.tree_leaves((x, y, z)) if not isinstance(leaf, str))
    f = mj.jit(probe, static_argnums=static)
    for args, kwargs in calls:
        f(*args, **kwargs)
    return f.trace_count


RETRACE_CASES = {   # the call sets of 入门 02 (exercise 2.3 and the recompilation table)
    "shapes": lambda m: [((m.ones((2, 3)),), {}), ((m.ones((3, 2)),), {}), ((m.ones((2, 3), m.int32),), {}),
                         ((m.ones(6),), {}), ((m.zeros((2, 3)),), {})],
    "scalars": lambda m: [((m.ones(2), 1.0), {}), ((m.ones(2), 2), {}), ((m.ones(2), m.float32(3.0)), {}),
                          ((m.ones(2), m.array(4.0)), {}), ((m.ones(2), 5.0), {})],
    "containers": lambda m: [(((m.ones(2), 1.0),), {}), (([m.ones(2), 1.0],), {}), (({"a": m.ones(2)},), {}),
                             (({"a": m.ones(2), "b": 1.0},), {}), (((m.zeros(2), 7.0),), {})],
    "keywords": lambda m: [((m.ones(3),), {"y": 1.0}), ((m.ones(3), 1.0), {}), ((), {"x": m.ones(3), "y": 2.0}),
                           ((), {"y": 2.0, "x": m.ones(3)})],
}


@pytest.mark.parametrize("case", sorted(RETRACE_CASES))
def test_retrace_counts(case):
    model, real = _count_model(RETRACE_CASES[case](mnp)), _count_real(RETRACE_CASES[case](jnp))
    assert model == real, (case, model, real)


def test_static_arguments_and_tracer_bool():
    calls = lambda m: [((m.ones(2), 2), {}), ((m.ones(2), 3), {}), ((m.ones(2), 2), {})]   # noqa: E731
    assert _count_model(calls(mnp), static=(1,)) == _count_real(calls(jnp), static=(1,)) == 2
    typed = lambda m: [((m.ones(2), k), {}) for k in (1, 1, 3, 1.0, True, 3)]   # noqa: E731
    assert _count_model(typed(mnp), static=(1,)) == _count_real(typed(jnp), static=(1,)) == 4
    by_name = mj.jit(lambda x, n: x * n, static_argnames="n")
    for n in (2, 3, 2):
        by_name(mnp.ones(2), n=n)
    assert by_name.trace_count == 2
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.jit(lambda x, s: x, static_argnums=1)(jnp.ones(2), [1])
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        mj.jit(lambda x, s: x, static_argnums=1)(mnp.ones(2), [1])

    def branchy(m, x):
        return x if x > 0 else -x
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda x: branchy(jnp, x))(1.0)
    with pytest.raises(mj.TracerBoolConversionError):
        mj.jit(lambda x: branchy(mnp, x))(1.0)


# ---- pytrees ----
TREES = [
    (1.0, [2.0, 3.0], {"b": None, "a": 4.0}),
    {"layer2": {"w": 1.0, "b": 2.0}, "layer1": [3.0, (4.0,)]},
    [None, (), [5.0]],
]


class Node:
    def __init__(self, a, b, act):
        self.a, self.b, self.act = a, b, act

    def __eq__(self, other):
        return (self.a, self.b, self.act) == (other.a, other.b, other.act)


for _register in (jax.tree_util.register_pytree_node, mj.register_pytree_node):
    _register(Node, lambda n: ((n.a, n.b), n.act), lambda act, kids: Node(*kids, act))
Point = __import__("collections").namedtuple("Point", "x y")
TREES.append({"p": Point(1.0, [2.0]), "n": Node(3.0, 4.0, "relu")})


@pytest.mark.parametrize("tree", TREES, ids=["tuple", "nested_dict", "empty", "namedtuple_custom"])
def test_pytrees(tree):
    leaves, treedef = mj.tree_flatten(tree)
    jleaves, jtreedef = jax.tree_util.tree_flatten(tree)
    assert leaves == jleaves and str(treedef) == str(jtreedef)
    assert mj.tree_unflatten(treedef, [x * 10 for x in leaves]) == jax.tree_util.tree_unflatten(
        jtreedef, [x * 10 for x in jleaves])


# ---- threefry: the same bits ----
SEEDS = [0, 1, 42, 2 ** 31 - 1, -1, 123456789, 2 ** 32 + 5]


def _words(k):
    return [int(w) for w in np.asarray(jax.random.key_data(k)).ravel()]


@pytest.mark.parametrize("seed", SEEDS)
def test_prng_bits_equal_jax(seed):
    k, m = jax.random.key(seed), mj.random.key(seed)
    assert _words(k) == list(m.words)
    assert _words(k) == mj.random.key_data(m).tolist()
    for n in (2, 3, 5):
        assert [_words(s) for s in jax.random.split(k, n)] == [list(s.words) for s in mj.random.split(m, n)]
    for data in (0, 7, 2 ** 32 - 1):
        assert _words(jax.random.fold_in(k, data)) == list(mj.random.fold_in(m, data).words)
    k2 = jax.random.split(jax.random.fold_in(k, 3))[1]
    m2 = mj.random.split(mj.random.fold_in(m, 3))[1]
    for shape in ((), (5,), (2, 3), (3, 1, 2)):
        assert np.asarray(jax.random.bits(k2, shape)).ravel().tolist() == mj.random.bits(m2, shape).data
        assert np.asarray(jax.random.uniform(k2, shape)).ravel().tolist() == mj.random.uniform(m2, shape).data
    # with a range, XLA fuses the multiply-add on a CPU with FMA (one rounding) and rounds twice without it
    u = np.asarray(jax.random.uniform(k2, (64,), minval=-2.0, maxval=3.0)).tolist()
    assert u in (mj.random.uniform(m2, (64,), -2.0, 3.0, fma=True).data, mj.random.uniform(m2, (64,), -2.0, 3.0, fma=False).data)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="--xla_cpu_max_isa=AVX is an x86 flag")
def test_uniform_with_a_range_follows_the_cpu_fma_or_not():
    """XLA held to AVX (no FMA) rounds v * span + lo twice: minijax's fma=False gives its bits."""
    code = ("import jax, json; print(json.dumps(jax.random.uniform(jax.random.key(5), (256,), "
            "minval=-2.0, maxval=3.0).tolist()))")
    m = mj.random.key(5)
    fused, twice = (mj.random.uniform(m, (256,), -2.0, 3.0, fma=f).data for f in (True, False))
    assert fused != twice   # the two roundings differ somewhere in 256 draws
    env = {**os.environ, "XLA_FLAGS": "--xla_cpu_max_isa=AVX"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(out) == twice


def test_arrays_print_like_jax():
    assert repr(mnp.array([0.1, 0.25, 3.0])).replace(" ", "") == repr(jnp.array([0.1, 0.25, 3.0])).replace(" ", "")
    assert str(mnp.sin(mnp.array(1.0))) == str(jnp.sin(1.0))
    assert repr(mnp.array(6.0)) == repr(jnp.array(6.0)) and str(mnp.array(6.0)) == str(jnp.array(6.0))
    assert str(mnp.array([[1, 2], [3, 4]])) == str(jnp.array([[1, 2], [3, 4]]))
    assert float(mnp.array(0.1) + 0.2) == float(jnp.float32(0.1) + jnp.float32(0.2))   # float32 rounding
    for fn in ("tanh", "exp", "sqrt"):      # integers become float32 first, as in jax.numpy
        close(getattr(mnp, fn)(mnp.array([1, 2, 3])), getattr(jnp, fn)(jnp.array([1, 2, 3])))
    close(mnp.array([1, 2, 3]) / 2, jnp.array([1, 2, 3]) / 2)
    close(mnp.reshape(mnp.arange(24), (4, -1, 3)), jnp.reshape(jnp.arange(24), (4, -1, 3)))
    for vals in ([0.947667, 0.9785799, 12.5], [-1.5, 2.0, 100.0], [[1.0, 2.5], [3.0, 4.0]]):
        assert str(mnp.array(vals)) == str(jnp.array(vals))          # aligned on the decimal point
    assert float(mnp.exp(-88.0)) == float(jnp.exp(-88.0)) == 0.0    # XLA's CPU flushes subnormals to zero
    assert [float(v) for v in mnp.array([1.0, 2.0])] == [float(v) for v in jnp.array([1.0, 2.0])]
    assert repr(mnp.array([1, 2, 3]) / 2).endswith("dtype=float32)")


def test_model_runs_without_jax_or_numpy():
    """In the interpreter the harness uses for lite cells (import jax / numpy blocked)."""
    import nbformat

    from verify.lite import run_lite_cells
    code = ("import jaxcourse.minijax as mj\nmnp = mj.numpy\n"
            "assert abs(float(mj.grad(lambda x: mnp.sin(x) * x)(1.0)) - (math.sin(1) + math.cos(1))) < 1e-6\n"
            "assert mj.random.bits(mj.random.key(0), (2,)).tolist()\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import math\n" + code,
                                                                   metadata={"tags": ["lite"]})])
    assert run_lite_cells(nb, Path(__file__).resolve().parent.parent / "content" / "入门" / "x.ipynb") == {}
    blocked = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import numpy", metadata={"tags": ["lite"]})])
    assert run_lite_cells(blocked, Path(__file__).resolve().parent.parent / "content" / "入门" / "x.ipynb")


def test_f32_rounding_shows_cancellation():
    """Finite differences in float32 lose digits in the model as on a real float32 device."""
    h = 1e-4
    fd = (mnp.sin(mnp.array(1.0) + h) - mnp.sin(mnp.array(1.0))) / h
    real = (jnp.sin(jnp.float32(1.0) + h) - jnp.sin(jnp.float32(1.0))) / h
    assert abs(float(fd) - math.cos(1.0)) > 1e-4       # visibly wrong in the 4th digit
    assert abs(float(fd) - float(real)) <= 2 * abs(float(real)) * 2 ** -23 / h * 2 + 1e-3
