"""Conformance: one small program per case, run under the pinned JAX and under jaxcourse.minijax.

Each case is one line of data: (name, program) or (name, program, "loud"). The program is Python source using
the names `jax`, `jnp`, `lax` (bound to JAX or to the mini-JAX) and the helpers below; its last expression is the
result. Both results are compared on everything a reader can see: values (float32 within a few ulps, integers
and bools exactly), shapes, dtypes, weak types, the type of an error, trace counts (`counting`), PRNG bits
(key arrays compare by key_data) and strings (jaxpr text, printed pytree structures).

A case marked "loud" is one the mini-JAX does not support: it must raise NotImplementedError with a Chinese
message naming what is missing — never give an answer. Any other case must agree. Sources: the JAX
documentation (autodiff cookbook, automatic vectorization, jit, pytrees, control flow, pseudorandom numbers,
jaxprs) and edits a reader would make to the lite cells in content/ (the cell id is in the case name).
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcourse
import jaxcourse.minijax as mj


def counting(f):
    """f that counts how often its Python body runs (`.n`): the number of traces under jit."""
    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        wrapped.n += 1
        return f(*args, **kwargs)
    wrapped.n = 0
    return wrapped


Point = namedtuple("Point", "x y")


class State:
    """A training state as in 入门 07: w and step are leaves, the activation is static (in the structure)."""

    def __init__(self, w, step, act="relu"):
        self.w, self.step, self.act = w, step, act


for _register in (jax.tree_util.register_pytree_node, mj.register_pytree_node):
    _register(State, lambda s: ((s.w, s.step), s.act), lambda act, kids: State(*kids, act))

REAL = {"jax": jax, "jnp": jnp, "lax": jax.lax, "counting": counting, "math": math, "Point": Point,
        "State": State, "prims": lambda j: [e.primitive.name for e in jaxcourse.all_eqns(j)]}
MINI = {"jax": mj, "jnp": mj.numpy, "lax": mj.lax, "counting": counting, "math": math, "Point": Point,
        "State": State, "prims": lambda j: j.primitive_names()}

# 常用的数据（两边各建一份）
SETUP = ("f = jnp.array([1.0, 2.0, 3.0]); i = jnp.array([1, 2, 3]); u = jnp.array([1, 2, 3], jnp.uint32); "
         "mask = jnp.array([True, False, True]); X = jnp.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], "
         "[0.52, 0.06, -1.30], [0.74, -2.49, 1.39]]); targets = jnp.array([True, True, False, True]); "
         "W = jnp.array([0.1, -0.2, 0.3]); key = jax.random.key(0)")

L = "loud"
CASES = [
    # ---- 类型提升：bool、弱类型、整数和浮点（jax.numpy 的 type promotion 文档）----
    ("sum_mask", "jnp.sum(mask)"),
    ("mean_mask", "jnp.mean(mask)"),
    ("one_minus_mask", "1 - mask"),
    ("mask_plus_mask", "mask + mask"),
    ("mask_times_float", "mask * 2.0"),
    ("mask_times_array", "mask * f"),
    ("mask_eq_float", "mask == f"),
    ("mask_minus_mask", "mask - mask"),
    ("neg_mask", "-mask"),
    ("sum_mask_axis", "jnp.sum(jnp.array([[True, False], [True, True]]), axis=0)"),
    ("int_plus_float", "i + f"),
    ("int_plus_uint", "i + u"),
    ("uint_plus_1", "u + 1"),
    ("uint_plus_float", "u + 1.0"),
    ("int_times_weak_float", "i * 2.5"),
    ("int_true_div", "i / 2"),
    ("int_div_int", "jnp.array([3, 4]) / jnp.array([2, 2])"),
    ("sin_int", "jnp.sin(i)"),
    ("sin_mask", "jnp.sin(mask)"),
    ("sin_python_int", "jnp.sin(1)"),
    ("maximum_int_float", "jnp.maximum(i, 0.0)"),
    ("where_weak_ints", "jnp.where(mask, 1, 0)"),
    ("where_weak_mixed", "jnp.where(mask, 1.0, 0)"),
    ("where_int_float", "jnp.where(mask, i, f)"),
    ("where_float_condition", "jnp.where(f - 2.0, 1.0, 0.0)"),
    ("f32_plus_weak", "jnp.float32(1.0) + 1.0"),
    ("weak_plus_weak", "jnp.array(1.0) + 1"),
    ("array_of_python_int", "jnp.array(1)"),
    ("array_of_bool", "jnp.array(True)"),
    ("dot_int_float", "jnp.dot(i, f)"),
    ("int_pow", "i ** 2"),
    ("int32_wraps", "jnp.int32(2147483647) + 1"),
    ("uint32_wraps", "jnp.uint32(0) - 1"),
    ("f32_rounding", "jnp.float32(0.1) + jnp.float32(0.2)"),
    ("arange_times_half", "jnp.arange(5) * 0.5"),
    ("arange_float", "jnp.arange(3.0)"),
    ("arange_step", "jnp.arange(1, 10, 3)"),
    ("linspace", "jnp.linspace(0.0, 1.0, 5)"),
    ("zeros_int_plus_1", "jnp.zeros(3, jnp.int32) + 1"),
    ("astype_truncates", "jnp.array([2.7, -2.7]).astype(jnp.int32)"),
    ("astype_bool", "jnp.array([0.0, 2.0]).astype(jnp.bool_)"),
    ("mean_int", "jnp.mean(i)"),
    ("max_int", "jnp.max(i)"),
    ("max_mask", "jnp.max(mask)"),
    ("sum_axis", "jnp.sum(jnp.ones((2, 3)), axis=1)"),
    ("shape_mismatch", "f + jnp.ones(4)"),
    ("reshape_bad", "jnp.reshape(f, (2, 2))"),
    ("reshape_minus_one", "jnp.reshape(jnp.arange(6), (-1, 2))"),
    ("transpose_T", "jnp.arange(6).reshape((2, 3)).T"),
    ("index_clamped", "f[4]"),
    ("index_negative", "f[-1]"),
    ("index_negative_clamped", "f[-4]"),
    ("item", "jnp.array([2.5]).item()"),
    ("item_too_big", "f.item()"),
    ("iterate_0d", "list(jnp.float32(1.0))"),
    ("len_of_rows", "len(X)"),
    ("repr_sum_mask", "repr(jnp.sum(mask))"),
    ("repr_one_minus_mask", "repr(1 - mask)"),
    ("repr_weak_float", "repr(jnp.array(2.0) * 3)"),
    ("str_mask", "str(mask)"),
    ("str_mean_mask", "str(jnp.mean(mask))"),
    ("str_int_matrix", "str(jnp.arange(6).reshape((2, 3)) * 10)"),
    ("str_floats", "str(jnp.array([0.1, 2.5, -30.0]) / 4)"),
    ("repr_floats_padded", "repr(jnp.array([[0.5, 10.25], [1.0, -3.0]]))"),
    ("repr_int_div", "repr(i / 2)"),
    ("dtype_compare", "(f.dtype == jnp.float32, i.dtype == jnp.int32, str(mask.dtype))"),
    ("shape_ndim_size", "(X.shape, X.ndim, X.size)"),
    ("tolist_mask_sum", "jnp.sum(mask).tolist()"),
    ("array_dtype_python_float", "jnp.array([1, 2], dtype=float)"),
    ("ones_dtype_python_int", "jnp.ones(2, dtype=int)"),
    ("astype_string", "f.astype('int32')"),
    ("float32_of_array", "jnp.float32(i)"),
    ("int32_of_list", "jnp.int32([1.7, -2.5])"),
    ("array_of_tracers_grad", "jax.grad(lambda x: jnp.sum(jnp.array([x[0] * 2.0, x[1]]) ** 2))(f)"),
    ("array_of_tracer_jit", "jax.jit(lambda x: jnp.array([x, 2.0 * x]))(1.5)"),
    ("array_passthrough_vmap", "jax.vmap(lambda x: jnp.array(x) * 2)(i)"),
    ("astype_float16", "f.astype('float16')", L),
    ("sum_axis_out_of_range", "jnp.sum(f, axis=1)"),
    ("sum_axis_negative", "jnp.sum(X, axis=-1)"),
    ("mean_axis_out_of_range", "jnp.mean(X, axis=2)"),
    ("reshape_varargs", "jnp.arange(6).reshape(2, 3)"),
    ("reshape_not_divisible", "jnp.reshape(f, (2, -1))"),
    ("dot_mismatch", "jnp.dot(f, jnp.ones(4))"),
    ("matmul_mismatch", "f @ X"),
    ("stack_mismatch", "jnp.stack([f, jnp.ones(4)])"),
    ("ragged_list", "jnp.array([[1, 2], [3]])"),
    ("vmap_scalar_input", "jax.vmap(lambda x: x * 2.0)(1.0)"),
    ("vmap_axis_out_of_range", "jax.vmap(jnp.sum, in_axes=2)(X)"),
    ("len_of_scalar_tracer", "jax.jit(lambda x: len(x))(1.0)"),
    ("len_of_tracer", "jax.jit(lambda x: x * len(x))(f)"),
    ("uniform_int_shape", "jax.random.uniform(key, 3)"),
    ("bits_int_shape", "jax.random.bits(key, 2)"),
    ("transpose_bad_axes", "jnp.transpose(f, (1, 0))"),
    ("sum_tuple_axes", "jnp.sum(jnp.ones((2, 3, 4)), axis=(0, 2))"),
    ("list_operand", "f * [1.0, 0.0, 1.0]"),
    ("list_operand_left", "[1.0, 0.0, 1.0] * f"),
    ("sum_of_list", "jnp.sum([1, 2, 3])"),
    ("sin_of_list", "jnp.sin([1.0])"),
    ("mean_of_tuple", "jnp.mean((1.0, 2.0))"),
    ("stack_of_lists", "jnp.stack([[1.0], [2.0]])"),
    ("where_list_condition", "jnp.where([True, False], 1.0, 0.0)"),
    ("float_pow", "f ** 2.0"),
    ("sqrt_pow", "(jnp.sum(f ** 2) ** 0.5, i ** 0.5, 2 ** f, (-8.0) ** jnp.float32(1 / 3), jnp.float32(0.0) ** -1.0)"),
    ("grad_pow", "(jax.grad(lambda x: x ** 0.5)(0.0), jax.grad(lambda x: x ** 1.5)(0.0), jax.grad(lambda y: 2.0 ** y)(3.0), "
     "jax.grad(lambda v: jnp.sum(v ** 2) ** 0.5)(f))"),
    ("vmap_pow", "jax.vmap(lambda x, y: x ** y)(f, jnp.array([0.5, 2.0, -1.0]))"),
    ("jaxpr_pow", "str(jax.make_jaxpr(lambda x: x ** 2.0 + 2.0 ** x)(1.0))"),
    ("jnp_constants", "(jnp.pi, jnp.inf, jnp.sin(jnp.pi / 2))"),
    ("jax_tree_map", "jax.tree.map(lambda a, b: a * b, {'w': f, 'b': 2.0}, {'w': f, 'b': 3.0})"),
    ("jax_tree_leaves_structure", "(jax.tree.leaves([1, (2, None)]), str(jax.tree.structure({'a': [1, 2]})))"),
    ("tree_map_is_leaf", "jax.tree_util.tree_map(lambda x: x, [1], is_leaf=lambda x: False)", L),
    ("floor_div", "i // 2", L),
    ("missing_jnp_function", "jnp.convolve(f, f)", L),
    ("abs", "abs(f - 2.0)", L),
    ("array_method_min", "f.min()", L),
    ("sum_keepdims", "jnp.sum(f, keepdims=True)", L),
    ("where_one_argument", "jnp.where(mask)", L),
    ("missing_clip", "jnp.clip(f, 0.0, 1.0)", L),
    ("jit_donate", "jax.jit(lambda x: x * 2.0, donate_argnums=0)(f)", L),
    ("uniform_dtype", "jax.random.uniform(key, (2,), dtype=jnp.float32)", L),
    # ---- 自动微分（autodiff cookbook）----
    ("grad_tanh", "jax.grad(jnp.tanh)(2.0)"),
    ("grad_grad_grad_tanh", "jax.grad(jax.grad(jax.grad(jnp.tanh)))(2.0)"),
    ("logistic_grad_W", "sig = lambda x: 0.5 * (jnp.tanh(x / 2) + 1); pred = lambda W, b, X: sig(jnp.dot(X, W) + b); "
     "loss = lambda W, b: -jnp.sum(jnp.log(pred(W, b, X) * targets + (1 - pred(W, b, X)) * (1 - targets))); "
     "jax.grad(loss)(W, 0.1)"),
    ("logistic_grad_argnums", "sig = lambda x: 0.5 * (jnp.tanh(x / 2) + 1); "
     "loss = lambda W, b: -jnp.sum(jnp.log(sig(X @ W + b) * targets + (1 - sig(X @ W + b)) * (1 - targets))); "
     "jax.grad(loss, argnums=(0, 1))(W, 0.1)"),
    ("logistic_value_and_grad", "sig = lambda x: 0.5 * (jnp.tanh(x / 2) + 1); "
     "loss = lambda W: -jnp.sum(jnp.log(sig(X @ W) * targets + (1 - sig(X @ W)) * (1 - targets))); "
     "jax.value_and_grad(loss)(W)"),
    ("toy_classifier_accuracy", "preds = 0.5 * (jnp.tanh(X @ jnp.array([1.0, 1.0, 1.0]) / 2) + 1); "
     "jnp.mean((preds > 0.5) == targets)"),
    ("grad_dict_params", "loss = lambda p: jnp.sum((X @ p['W'] + p['b']) ** 2); jax.grad(loss)({'W': W, 'b': 0.5})"),
    ("grad_has_aux", "jax.grad(lambda x: (jnp.sin(x) * x, {'aux': x * 2.0}), has_aux=True)(0.7)"),
    ("jvp_sin", "jax.jvp(jnp.sin, (0.5,), (1.0,))"),
    ("vjp_tanh_matmul", "y, back = jax.vjp(lambda W: jnp.tanh(X @ W), W); (y, back(jnp.array([1.0, 2.0, 3.0, 4.0])))"),
    ("hvp", "g = lambda x: x[0] * x[0] * x[1] + x[1] * x[1] * x[2]; "
     "jax.jvp(jax.grad(g), (jnp.array([1.0, 2.0, 3.0]),), (jnp.array([1.0, -1.0, 0.5]),))[1]"),
    ("grad_of_int_input", "jax.grad(lambda x: x * x)(3)"),
    ("grad_of_int_output", "jax.grad(lambda x: (x * 2.0).astype(jnp.int32))(1.0)"),
    ("grad_of_bool_output", "jax.grad(lambda x: x > 0)(1.0)"),
    ("grad_of_vector_output", "jax.grad(lambda x: x * 2.0)(f)"),
    ("grad_of_constant", "jax.grad(lambda x: 3.0)(1.0)"),
    ("grad_strong_input", "jax.grad(lambda x: x * x)(jnp.float32(3.0))"),
    ("grad_python_if", "jax.grad(lambda x: x * x if x > 0 else -x)(-3.0)"),
    ("grad_stop_gradient", "jax.grad(lambda x: x * lax.stop_gradient(x))(3.0)"),
    ("grad_relu_tie", "jax.grad(lambda x: jnp.maximum(x, 0.0))(0.0)"),
    ("grad_masked_mean", "jax.grad(lambda w: jnp.sum(w * mask) / jnp.sum(mask))(f)"),
    ("grad_where_nan", "jax.grad(lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0))(0.0)"),
    ("grad_double_where", "jax.grad(lambda x: jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)), 0.0))(0.0)"),
    ("grad_sqrt_0", "jax.grad(jnp.sqrt)(0.0)"),
    ("grad_log_0", "jax.grad(jnp.log)(0.0)"),
    ("missing_hessian", "jax.hessian(jnp.sin)(1.0)", L),
    ("missing_jacfwd", "jax.jacfwd(jnp.sin)(f)", L),
    # ---- 自动向量化（automatic vectorization）----
    ("vmap_dot_mv", "jax.vmap(jnp.dot, (0, None))(X, W)"),
    ("vmap_sum_in_axes_1", "jax.vmap(jnp.sum, in_axes=1)(X)"),
    ("vmap_out_axes_1", "jax.vmap(lambda x: x * jnp.array([1.0, 10.0]), out_axes=1)(f)"),
    ("vmap_out_axes_neg", "jax.vmap(lambda x: jnp.ones((2, 3)) * x, out_axes=-1)(f).shape"),
    ("vmap_per_example_grads", "loss = lambda w, x, y: (jnp.dot(w, x) - y) ** 2; "
     "jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(W, X, jnp.array([0.0, 1.0, 0.0, 1.0]))"),
    ("vmap_size_mismatch", "jax.vmap(lambda a, b: a + b)(jnp.ones(2), jnp.ones(3))"),
    ("vmap_nested_pairwise", "jax.vmap(jax.vmap(lambda x, y: jnp.sum((x - y) ** 2), (None, 0)), (0, None))(X, X[:2])"),
    ("vmap_psum_normalize", "jax.vmap(lambda x: x / lax.psum(x, 'i'), axis_name='i')(f)"),
    ("vmap_psum_unbound", "jax.vmap(lambda x: lax.psum(x, 'j'), axis_name='i')(f)"),
    ("vmap_mask_sum", "jax.vmap(jnp.sum)(jnp.array([[True, False], [True, True]]))"),
    ("vmap_python_if", "jax.vmap(lambda x: x if x > 0 else -x)(f)"),
    ("grad_of_vmap_not_scalar", "jax.grad(jax.vmap(lambda x: x * 2.0))(f)"),
    # ---- jit（JIT 文档：缓存、静态参数、追踪时的报错）----
    ("jit_selu", "selu = lambda x, a=1.67, l=1.05: l * jnp.where(x > 0, x, a * jnp.exp(x) - a); jax.jit(selu)(f - 2.0)"),
    ("jit_same_shape_cached", "g = counting(lambda x: x * 2.0); h = jax.jit(g); [h(f), h(f + 1.0), h(jnp.ones(4))]; g.n"),
    ("jit_again_reuses_cache", "g = counting(lambda x: x * 2.0); [jax.jit(g)(f) for _ in range(3)]; g.n"),
    ("jit_new_lambda_retraces", "n = [0]; [jax.jit(lambda x: n.__setitem__(0, n[0] + 1) or x)(f) for _ in range(3)]; n[0]"),
    ("jit_weak_vs_strong", "g = counting(lambda x: x + 1.0); h = jax.jit(g); [h(1.0), h(2.0), h(jnp.float32(1.0)), h(1)]; g.n"),
    ("jit_static_argnums", "g = counting(lambda x, n: x * n); h = jax.jit(g, static_argnums=1); "
     "[h(f, 2), h(f, 3), h(f, 2), h(f, 2.0)]; g.n"),
    ("jit_static_argnames", "g = counting(lambda x, n: x * n); h = jax.jit(g, static_argnames='n'); "
     "[h(f, n=2), h(f, n=3), h(f, n=2)]; g.n"),
    ("jit_python_if", "jax.jit(lambda x: x if x > 0 else -x)(1.0)"),
    ("jit_float_of_tracer", "jax.jit(lambda x: float(x))(1.0)"),
    ("jit_int_of_tracer", "jax.jit(lambda x: int(x))(1.0)"),
    ("jit_range_of_tracer", "jax.jit(lambda n: sum(range(n)))(3)"),
    ("jit_unhashable_static", "jax.jit(lambda x, n: x, static_argnums=1)(1.0, [1])"),
    ("jit_string_argument", "jax.jit(lambda x: x)('a')"),
    ("jit_closure_cached", "s = [2.0]; h = jax.jit(lambda x: x * s[0]); a = h(f); s[0] = 10.0; (a, h(f))"),
    ("jit_pytree_containers", "g = counting(lambda t: t[0] + t[1]); h = jax.jit(g); "
     "[h((f, 1.0)), h([f, 1.0]), h((f, 2.0)), h({'a': f, 'b': 1.0} and (f, 1))]; g.n"),
    ("jit_keyword", "g = counting(lambda x, y=0.0: x + y); h = jax.jit(g); [h(f), h(f, 1.0), h(f, y=1.0)]; g.n"),
    ("jit_grad", "jax.jit(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)))(f)"),
    ("jit_lower", "jax.jit(lambda x: x * 2.0).lower(1.0)", L),
    ("jit_of_key", "jax.jit(lambda k: jax.random.bits(k, (2,)))(key)", L),
    # ---- pytree ----
    ("tree_leaves_mixed", "jax.tree_util.tree_leaves([1, 'a', None, (2.0, {'b': 3})])"),
    ("tree_structure_str", "str(jax.tree_util.tree_structure([{'b': 1, 'a': 2}, (3,), None]))"),
    ("tree_map_sgd", "jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, {'w': f, 'b': 1.0}, {'w': f, 'b': 2.0})"),
    ("tree_map_mismatch", "jax.tree_util.tree_map(lambda a, b: a + b, {'w': 1.0, 'b': 2.0}, {'w': 1.0, 'bias': 2.0})"),
    ("tree_namedtuple", "str(jax.tree_util.tree_structure(Point(1.0, [2.0])))"),
    ("tree_flatten_unflatten", "leaves, d = jax.tree_util.tree_flatten({'a': (1, 2), 'b': [3]}); "
     "jax.tree_util.tree_unflatten(d, [x * 10 for x in leaves])"),
    ("tree_num_leaves", "jax.tree_util.tree_structure({'a': (1, 2), 'b': [3, None]}).num_leaves"),
    # ---- 控制流（control flow 文档）----
    ("cond_negative_pred", "lax.cond(-0.5, lambda: 1.0, lambda: 2.0)"),
    ("cond_zero_pred", "lax.cond(0.0, lambda: 1.0, lambda: 2.0)"),
    ("cond_int_pred", "lax.cond(-2, lambda x: x + 1.0, lambda x: x - 1.0, 3.0)"),
    ("cond_array_pred", "lax.cond(jnp.array([True]), lambda: 1.0, lambda: 2.0)"),
    ("cond_int_vs_float", "lax.cond(True, lambda x: jnp.int32(1), lambda x: x, 1.0)"),
    ("cond_weak_int_vs_float", "lax.cond(True, lambda: 1, lambda: 1.0)"),
    ("cond_weak_vs_strong", "lax.cond(False, lambda: 1.0, lambda: jnp.float32(2.0))"),
    ("cond_shape_mismatch", "lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3))"),
    ("cond_structure_mismatch", "lax.cond(True, lambda: (1.0, 2.0), lambda: [1.0, 2.0])"),
    ("cond_operands", "lax.cond(f[0] > 0, lambda x: x * 2.0, lambda x: -x, f)"),
    ("grad_through_cond", "jax.grad(lambda x: lax.cond(x > 1.0, lambda v: v ** 3, jnp.sin, x))(2.0)"),
    ("vmap_cond_batched_pred", "jax.vmap(lambda x: lax.cond(x > 1.5, jnp.sin, jnp.cos, x))(f)"),
    ("jit_cond", "jax.jit(lambda x: lax.cond(x < 0, lambda v: -v, lambda v: v, x))(-2.0)"),
    ("while_count", "lax.while_loop(lambda c: c < 10, lambda c: c + 3, 0)"),
    ("while_weak_init_float_body", "lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0)"),
    ("while_carry_type_changes", "lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.int32(0))"),
    ("while_pytree", "lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))"),
    ("fori_sum", "lax.fori_loop(0, 5, lambda i, s: s + i, 0)"),
    ("fori_float", "lax.fori_loop(0, 4, lambda i, v: v * 1.5, 1.0)"),
    ("grad_fori_static", "jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0)"),
    ("grad_while_fails", "jax.grad(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0))(2.0)"),
    ("jvp_while", "jax.jvp(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0), (2.0,), (1.0,))"),
    ("scan_cumsum", "lax.scan(lambda c, x: (c + x, c + x), 0.0, f)"),
    ("scan_cumprod", "lax.scan(lambda c, x: (c * x, c * x), 1.0, f)"),
    ("scan_int_carry", "lax.scan(lambda c, x: (c + 1, c), jnp.int32(0), None, length=4)"),
    ("scan_carry_type_changes", "lax.scan(lambda c, x: (c * x, c), 0.0, jnp.ones((3, 2)))"),
    ("scan_reverse", "lax.scan(lambda c, x: (c * 0.5 + x, c), jnp.float32(1.0), f, reverse=True)"),
    ("scan_weak_carry_promoted", "lax.scan(lambda c, x: (c * 0.5 + x, c), 1.0, f, reverse=True)"),
    ("scan_length_mismatch", "lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(2), jnp.ones(3)))"),
    ("grad_scan", "jax.grad(lambda v: jnp.sum(lax.scan(lambda c, x: (c + x, c + x), 0.0, v)[1]))(f)"),
    ("vmap_while", "jax.vmap(lambda n: lax.while_loop(lambda c: c < n, lambda c: c + 1, 0))(jnp.array([1, 3, 2]))"),
    ("missing_switch", "lax.switch(1, [jnp.sin, jnp.cos], 1.0)", L),
    # ---- 伪随机数（pseudorandom numbers 文档）----
    ("key_data_0", "jax.random.key_data(key)"),
    ("key_data_42", "jax.random.key_data(jax.random.key(42))"),
    ("split_4", "jax.random.split(key, 4)"),
    ("split_default", "jax.random.split(jax.random.key(7))"),
    ("split_item", "jax.random.split(key, 3)[1]"),
    ("split_slice", "jax.random.split(key, 3)[1:]"),
    ("split_len_shape", "ks = jax.random.split(key, 3); (len(ks), ks.shape)"),
    ("split_unpack", "k1, k2 = jax.random.split(key); (k1, k2)"),
    ("split_of_key_array", "jax.random.split(jax.random.split(key, 3))"),
    ("fold_in", "jax.random.fold_in(jax.random.key(2024), 3)"),
    ("fold_in_equals_split", "jax.random.fold_in(key, 2) == jax.random.split(key, 4)[2]"),
    ("fold_in_key_array", "jax.random.fold_in(jax.random.split(key, 2), 1)"),
    ("bits_3", "jax.random.bits(jax.random.key(42), (3,))"),
    ("bits_2d", "jax.random.bits(jax.random.split(key)[1], (2, 3))"),
    ("uniform_4", "jax.random.uniform(jax.random.key(42), (4,))"),
    ("uniform_scalar", "jax.random.uniform(jax.random.fold_in(key, 5))"),
    ("uniform_of_key_array", "jax.random.uniform(jax.random.split(key, 2), (2,))"),
    ("keys_equal_array", "ks = jax.random.split(key, 3); ks == ks"),
    ("missing_normal", "jax.random.normal(key, (3,))", L),
    ("missing_prngkey", "jax.random.PRNGKey(0)", L),
    # ---- jaxpr 文本：README 承诺的子集（逐元素运算、类型转换、cond、while）----
    ("jaxpr_sin_mul_pow", "str(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0 + x ** 2)(f))"),
    ("jaxpr_int_plus_float", "str(jax.make_jaxpr(lambda a, b: a + b)(jnp.int32(1), jnp.float32(2.0)))"),
    ("jaxpr_one_minus_mask", "str(jax.make_jaxpr(lambda m: 1 - m)(mask))"),
    ("jaxpr_int_times_float", "str(jax.make_jaxpr(lambda x: x * 2.0)(i))"),
    ("jaxpr_int_div", "str(jax.make_jaxpr(lambda x: x / 2)(i))"),
    ("jaxpr_sin_int", "str(jax.make_jaxpr(jnp.sin)(1))"),
    ("jaxpr_rank_promotion", "str(jax.make_jaxpr(lambda x, y: x + y)(f, X[:2].T.T))"),
    ("jaxpr_exp_log_max", "str(jax.make_jaxpr(lambda x: jnp.maximum(x, 0.0) + jnp.exp(x) / jnp.log(x) - x)(1.5))"),
    ("jaxpr_cond_float_pred", "str(jax.make_jaxpr(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(-0.5))"),
    ("jaxpr_cond_sin_cos", "str(jax.make_jaxpr(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0))"),
    ("jaxpr_cond_weak_branch", "str(jax.make_jaxpr(lambda p: lax.cond(p, lambda: 1.0, lambda: jnp.float32(2.0)))(True))"),
    ("jaxpr_while", "str(jax.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 3, lambda c: c + 1, x))(0))"),
    ("jaxpr_astype", "str(jax.make_jaxpr(lambda x: x.astype(jnp.int32) + 1)(f))"),
    ("jaxpr_compare", "str(jax.make_jaxpr(lambda x: (x > 0.5) == mask)(f))"),
    # 文本不同（0.12 的 reduce_sum 多了 out_sharding=None），原语序列相同
    ("prims_sum_mask", "prims(jax.make_jaxpr(jnp.sum)(mask))"),
    ("prims_mean_mask", "prims(jax.make_jaxpr(jnp.mean)(mask))"),
    ("prims_dense_tanh", "prims(jax.make_jaxpr(lambda x, w: jnp.sum(jnp.tanh(x @ w)))(X, jnp.ones((3, 2))))"),
    ("prims_vmap_dot", "prims(jax.make_jaxpr(jax.vmap(lambda a, b: jnp.sum(a * b)))(X, X))"),
    ("prims_batched_cond", "prims(jax.make_jaxpr(jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)))(f))"),
    # ---- 课程 lite 格子里读者会做的改动（格子 id 在名字里）----
    ("lite_96c81378_grad", "jax.grad(lambda v: jnp.sum(jnp.tanh(v) ** 2))(jnp.array([0.0, 0.5, 1.0]))"),
    ("lite_96c81378_cube", "jax.grad(lambda v: jnp.sum(jnp.tanh(v) ** 3))(jnp.array([0.0, 0.5, 1.0]))"),
    ("lite_96c81378_retrace", "g = counting(jax.vmap(jax.grad(lambda v: jnp.sum(jnp.tanh(v) ** 2)))); h = jax.jit(g); "
     "b = jnp.stack([f, 2 * f, -f]); [h(b), h(b + 1.0), h(jnp.ones((3, 3))), h(jnp.ones((5, 3)))]; g.n"),
    ("lite_ada968c1_retrace", "g = counting(lambda v: jnp.sum(jnp.tanh(jnp.sin(v) * 2.0) ** 2)); h = jax.jit(g); "
     "[h(f), h(f + 1.0), h(jnp.ones(4))]; (g.n, h(f))"),
    ("lite_ada968c1_prims", "prims(jax.make_jaxpr(lambda v: jnp.sum(jnp.tanh(jnp.sin(v) * 2.0) ** 2))(f))"),
    ("lite_ce048f11_seed", "k = jax.random.key(7); (jax.random.bits(k, (3,)), jax.random.uniform(k, (4,), minval=-5.0, "
     "maxval=5.0), jax.random.split(k, 2), jax.random.uniform(jax.random.fold_in(jax.random.split(k, 4)[0], 2)))"),
    ("lite_4ae5434e_jaxpr", "str(jax.make_jaxpr(lambda x, y: jnp.sin(x) * y + x ** 2)(1.0, 2.0))"),
    ("lite_4ae5434e_retrace", "g = counting(lambda x, y: jnp.sin(x) * y); h = jax.jit(g); "
     "[h(v, 2.0) for v in (1.0, 2.0, 3.0)]; h(jnp.ones(3), 2.0); g.n"),
    ("lite_37dbb712_fori_jit", "g = counting(lambda x, n: lax.fori_loop(0, n, lambda i, v: jnp.sin(v), x)); h = jax.jit(g); "
     "(h(1.0, 10), h(1.0, 100), g.n)"),
    ("lite_37dbb712_static", "g = counting(lambda x, n: lax.fori_loop(0, n, lambda i, v: jnp.sin(v), x)); "
     "h = jax.jit(g, static_argnums=1); (h(1.0, 3), h(1.0, 30), g.n)"),
    ("lite_37dbb712_traced_bound", "prims(jax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, v: jnp.sin(v), x))(1.0, 3))"),
    ("lite_3b04092f_negative", "jax.jit(lambda x, n: x * n if x > 0 else -x * n, static_argnames='n')(-2.0, 3)"),
    ("lite_3b04092f_where", "g = counting(lambda x, n: jnp.where(x > 0, x, -x) * n); h = jax.jit(g, static_argnames='n'); "
     "([h(v, n=3) for v in (2.0, -2.0, 5.0, 2.0)], g.n)"),
    ("lite_3b04092f_static_both", "g = counting(lambda x, n: x * n if x > 0 else -x * n); "
     "h = jax.jit(g, static_argnames=('x', 'n')); ([h(x=v, n=3) for v in (2.0, -2.0, 5.0, 2.0)], g.n)"),
    ("lite_1c8416a7_dict", "g = counting(lambda x, k, y=0.0: sum(jnp.sum(l) for l in jax.tree_util.tree_leaves(x)) * k + y); "
     "h = jax.jit(g, static_argnums=1); [h(jnp.ones(3), 2), h({'a': jnp.ones(3)}, 2), h({'a': jnp.ones(3), 'b': 1.0}, 2), "
     "h({'a': jnp.zeros(3)}, 2), h(jnp.ones(3, jnp.int32), 2), h(jnp.ones(3), 2, jnp.array(3.0))]; g.n"),
    ("lite_2115c32b_fd", "g = lambda x: x ** 2 * jnp.sin(x); xf = jnp.float32(1.3); "
     "[(g(xf + h) - g(xf - h)) / (2 * h) for h in (1e-1, 1e-3, 1e-5)]"),
    ("lite_2115c32b_exp", "jax.grad(jnp.exp)(1.3)"),
    ("lite_e8f208cf_jvp", "jax.jvp(lambda x, w: jnp.sin(x * w) + w, (0.7, 1.9), (1.0, 1.0))"),
    ("lite_e8f208cf_vjp", "y, back = jax.vjp(lambda x, w: jnp.sin(x * w), 0.7, 1.9); (y, back(1.0))"),
    ("lite_5ba13a8d_tall", "s = jnp.array([0.5, 1.0, 1.5, 2.0, 2.5]); y, back = jax.vjp(lambda t: jnp.tanh(t * s), 0.3); "
     "(jax.jvp(lambda t: jnp.tanh(t * s), (0.3,), (1.0,)), back(jnp.array([0.0, 1.0, 0.0, 0.0, 0.0])))"),
    ("lite_2cf89618_cube", "jax.value_and_grad(lambda x: x * x * x)(1.0)"),
    ("lite_d4f4e491_poly", "p = lambda x: x ** 3 + 2 * x ** 2 - 3 * x + 1; [jax.grad(p)(2.0), jax.grad(jax.grad(p))(2.0), "
     "jax.grad(jax.grad(jax.grad(p)))(2.0), jax.grad(jax.grad(jax.grad(jax.grad(p))))(2.0)]"),
    ("lite_d4f4e491_poly_int", "p = lambda x: x ** 3 + 2 * x ** 2 - 3 * x + 1; jax.grad(p)(2)"),
    ("lite_d4f4e491_exp2", "jax.grad(jax.grad(jnp.exp))(1.0)"),
    ("lite_d389834e_max", "jax.vmap(lambda a, b: jnp.max(a * b))(jnp.arange(12).astype(jnp.float32).reshape((4, 3)), "
     "jnp.ones((4, 3)))"),
    ("lite_d389834e_int_batch", "jax.vmap(lambda a, b: jnp.sum(a * b))(jnp.arange(12).reshape((4, 3)), jnp.ones((4, 3)))"),
    ("lite_5e48fd56_axis0", "jax.vmap(jnp.sum, in_axes=0)(X)"),
    ("lite_5e48fd56_shift", "jax.vmap(lambda x, s, t: x * s + t, in_axes=(0, None, None))(X, 10.0, f)"),
    ("lite_5e48fd56_out_axes", "[jax.vmap(lambda x: jnp.ones((2, 3)) * x, out_axes=a)(f).shape for a in (0, 1, 2, -1)]"),
    ("lite_d5b7f0de_flipped", "jax.vmap(jax.vmap(lambda x, y: jnp.sum((x - y) ** 2), in_axes=(0, None)), in_axes=(None, 0))"
     "(X, X[:2])"),
    ("lite_d5b7f0de_psum_typo", "jax.vmap(jax.vmap(lambda x: x / lax.psum(x, 'cols'), axis_name='col'), axis_name='row')(X)"),
    ("lite_d5b7f0de_psum_rows", "jax.vmap(jax.vmap(lambda x: x / lax.psum(x, 'row'), axis_name='col'), axis_name='row')(X)"),
    ("lite_3cdc6c8c_all_mapped", "loss = lambda w, x, y: (jnp.dot(w, x) - y) ** 2; "
     "jax.vmap(jax.grad(loss), in_axes=(0, 0, 0))(W, X, jnp.array([0.0, 1.0, 0.0, 1.0]))"),
    ("lite_3cdc6c8c_grad_of_vmap", "loss = lambda w, x, y: (jnp.dot(w, x) - y) ** 2; "
     "jax.grad(jax.vmap(loss, in_axes=(None, 0, 0)))(W, X, jnp.array([0.0, 1.0, 0.0, 1.0]))"),
    ("lite_7ab82037_collectives", "ring = [(j, (j + 1) % 4) for j in range(4)]; "
     "jax.vmap(lambda v: {'i': lax.axis_index('i'), 's': lax.psum(v, 'i'), 'g': lax.all_gather(v, 'i'), "
     "'r': lax.ppermute(v, 'i', ring)}, axis_name='i')(jnp.arange(4) * 10.0 + 1.0)"),
    ("lite_79f1ffe4_dp_grad", "mse = lambda w, X, y: jnp.mean((jnp.dot(X, w) - y) ** 2); Xb = jnp.reshape(jnp.arange(24) * 0.25 - 3.0, "
     "(4, 2, 3)); yb = jnp.ones((4, 2)); jax.vmap(lambda w, X, y: lax.psum(jax.grad(mse)(w, X, y), 'i') / 4, "
     "in_axes=(None, 0, 0), axis_name='i')(W, Xb, yb)"),
    ("lite_0ffcd0cc_key1", "k = jax.random.key(1); ks = jax.random.split(k, 5); k2, sub = jax.random.split(k); "
     "(jax.random.uniform(k, (3,)), ks, jax.random.bits(k2, (4,)), jax.random.bits(sub, (4,)))"),
    ("lite_737f8334_counter", "g = counting(lambda c: (c, c + 1)); h = jax.jit(g); c = jnp.int32(10); outs = []; "
     "[outs.append(int(h(c)[0])) or None for _ in range(1)]; c = h(c)[1]; c = h(c)[1]; (outs, c, g.n)"),
    ("lite_737f8334_python_state", "g = counting(lambda c: (c, c + 1)); h = jax.jit(g); c = 0.0; "
     "outs = [h(c)[0] for _ in range(2)]; c = h(c)[1]; c = h(c)[1]; h(jnp.float32(0.0)); (outs, c, g.n)"),
    ("lite_737f8334_scan", "lax.scan(lambda c, _: (c + 1, c), jnp.int32(10), None, length=5)"),
    ("lite_737f8334_scan_float", "lax.scan(lambda c, _: (c + 1, c), 0.0, None, length=3)"),
    ("lite_999332aa_tuple", "str(jax.tree_util.tree_structure((jnp.ones(2), {'b': jnp.array(1.0)})))"),
    ("lite_999332aa_extra_key", "jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, [{'w': 1.0}], [{'w': 1.0, 's': 2.0}])"),
    ("lite_5ced7f44_momentum", "Xd = jax.random.uniform(jax.random.key(42), (8, 3), minval=-1.0, maxval=1.0); "
     "y = Xd @ jnp.array([1.0, -2.0, 0.5]) + 0.3; loss = lambda p: jnp.mean((Xd @ p['w'] + p['b'] - y) ** 2); "
     "step = counting(lambda p, v: (lambda l, g: (jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, "
     "jax.tree_util.tree_map(lambda gi, vi: gi + 0.9 * vi, g, v)), jax.tree_util.tree_map(lambda gi, vi: gi + 0.9 * vi, "
     "g, v), l))(*jax.value_and_grad(loss)(p))); js = jax.jit(step); p = {'w': jnp.zeros(3), 'b': jnp.float32(0.0)}; "
     "v = {'w': jnp.zeros(3), 'b': jnp.float32(0.0)}; out = [js(p, v) for _ in range(1)][0]; p, v, l = js(*out[:2]); (p, l, step.n)"),
    ("lite_4e9ca2cb_masks", "base = jax.random.key(123); jnp.stack([jax.random.uniform(jax.random.fold_in(base, s), (10,)) "
     "< 0.8 for s in range(3)]).astype(jnp.int32)"),
    ("lite_4e9ca2cb_mask_sum", "base = jax.random.key(124); jnp.sum(jax.random.uniform(base, (10,)) < 0.5)"),
    ("lite_47df4da6_lengths", "g = counting(lambda x: jnp.mean(x)); h = jax.jit(g); "
     "[h(jnp.arange(n, dtype=jnp.float32)) for n in (5, 7, 12, 5)]; g.n"),
    ("lite_47df4da6_int_lengths", "g = counting(lambda x: jnp.mean(x)); h = jax.jit(g); [h(jnp.arange(n)) for n in (5, 7)]"),
    ("lite_47df4da6_bool_mask", "h = jax.jit(lambda x, m: jnp.sum(x * m) / jnp.sum(m)); "
     "h(jnp.arange(8.0), jnp.arange(8) < 5)"),
    ("lite_eca1b2d8_lse", "x = jnp.array([10.0, 10.0, 0.0]); (jnp.log(jnp.sum(jnp.exp(x))), jnp.log(jnp.sum(jnp.exp(x * 100.0))))"),
    ("lite_eca1b2d8_softmax_grad", "sm = lambda z: jnp.exp(z - jnp.max(z)) / jnp.sum(jnp.exp(z - jnp.max(z))); "
     "ce = lambda z: -jnp.log(sm(z))[1]; [jax.grad(ce)(jnp.array([0.0, v, 5.0])) for v in (-20.0, -200.0)]"),
    ("lite_872ba30c_adam_bias", "b1 = 0.9; [1 - jnp.float32(b1) ** c for c in (1, 2, 10)]"),
    ("lite_872ba30c_adam_step", "g = jnp.array([0.5, -2.0]); mu = 0.0 * g + 0.1 * g; nu = 0.001 * g * g; "
     "-0.05 * (mu / (1 - jnp.float32(0.9) ** 1)) / (jnp.sqrt(nu / (1 - jnp.float32(0.999) ** 1)) + 1e-8)"),
    ("lite_09c7d454_lr_search", "Xb = jnp.reshape(jnp.arange(24) * 0.1, (2, 4, 3)); yb = jnp.ones((2, 4)); "
     "mse = lambda p, x, y: jnp.mean((x @ p['w'] + p['b'] - y) ** 2); "
     "train = lambda lr: lax.scan(lambda p, b: (jax.tree_util.tree_map(lambda pi, gi: pi - lr * gi, p, "
     "jax.grad(mse)(p, *b)), mse(p, *b)), {'w': jnp.zeros(3), 'b': jnp.float32(0.0)}, (Xb, yb)); "
     "jax.jit(jax.vmap(train))(jnp.array([0.01, 0.1]))"),
    ("lite_mini-scan_prod_grad", "jax.grad(lambda v: jnp.sum(lax.scan(lambda c, x: (c * x, c * x), 1.0, v)[1]))(f)"),
    ("lite_mini-loops_cube4", "jax.jvp(lambda x: lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, s[1] * x), "
     "(0, 1.0))[1], (2.0,), (1.0,))"),
    ("lite_mini-loops_jit_grad_fori", "jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0)))(2.0, 3)"),
    ("lite_mini-loops_static", "jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0)), "
     "static_argnums=1)(2.0, 5)"),
    ("lite_mini-cond_batched_pred", "jax.vmap(lambda x, p: lax.cond(p, jnp.sin, jnp.cos, x), in_axes=(0, 0))"
     "(jnp.array([1.0, -1.0, 2.0]), jnp.array([True, False, True]))"),
    ("lite_mini-cond_sign", "jax.vmap(lambda x: lax.cond(x < 0, jnp.sin, jnp.cos, x))(jnp.array([1.0, -1.0, 2.0]))"),
    ("lite_mini-cond_float_pred", "jax.vmap(lambda x: lax.cond(x, jnp.sin, jnp.cos, x))(jnp.array([1.0, 0.0, -2.0]))"),
    ("lite_mini-cond_int_branch", "jax.vmap(lambda x: lax.cond(x > 0, lambda v: v, lambda v: 0, x))(jnp.array([1.0, -1.0]))"),
    ("lite_mini-while_need", "jax.vmap(lambda n: lax.while_loop(lambda c: c < n, lambda c: c + 1, 0))"
     "(jnp.array([1, 3, 20, 2]))"),
    ("lite_mini-flops_exp", "prims(jax.make_jaxpr(lambda x, w: jnp.sum(jnp.exp(x @ w)))(jnp.zeros((4, 8)), jnp.zeros((8, 2))))"),
    ("lite_mini-retrace_closure", "s = [2.0]; g = counting(lambda x, p: x ** p * s[0]); h = jax.jit(g, static_argnums=1); "
     "a = h(jnp.ones(3), 2); s[0] = 10.0; (a, h(jnp.ones(3), 2), h(jnp.ones(5), 2), g.n)"),
    ("lite_mini-cancel_offset", "a = jnp.array([[1000.5, 1001.25]]); b = jnp.array([[1000.625, 1001.0]]); "
     "jnp.sqrt(jnp.maximum(jnp.sum(a * a, axis=1) + jnp.sum(b * b, axis=1) - 2.0 * jnp.sum(a * b, axis=1), 0.0))"),
    ("lite_mini-dp_local", "jax.vmap(lambda xb: jax.grad(lambda w, x: jnp.sum(w * x))(2.0, xb))(jnp.array([[0.0, 1.0], [2.0, 3.0]]))"),
    ("lite_mini-coll_ring2", "jax.vmap(lambda x: lax.ppermute(x, 'd', [(k, (k + 2) % 8) for k in range(8)]), "
     "axis_name='d')(jnp.arange(8.0))"),
    ("lite_fd722aeb_exp", "g = lambda x: jnp.stack([jnp.exp(x[0]) * x[2], x[1] - x[0]]); y, back = jax.vjp(g, f); "
     "(jax.jvp(g, (f,), (jnp.array([1.0, 0.0, -1.0]),)), back(jnp.array([2.0, -1.0])))"),
    ("lite_2c1d7187_at_4", "[jax.grad(lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0))(4.0), jax.grad(jnp.sqrt)(4.0)]"),
    ("lite_fb7db65d_softplus", "sp = lambda x: jnp.maximum(x, 0.0) + jnp.log(1.0 + jnp.exp(-jnp.maximum(x, -x))); "
     "[jax.grad(sp)(p) for p in (-30.0, 0.0, 30.0)] + [jax.grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(v) for v in (30.0, 100.0)]"),
    ("lite_p05-038_pow3", "str(jax.make_jaxpr(lambda x: jnp.tanh(x) ** 3 + x)(1.0))"),
    ("lite_c06-019_micro", "loss = lambda w, x, y: jnp.mean((x @ w - y) ** 2); "
     "[jax.grad(loss)(W, X[2 * k:2 * k + 2], jnp.ones(2)) for k in range(2)]"),
    ("lite_mini-print_count", "g = counting(lambda x: x * 2.0 + 1.0); h = jax.jit(g); "
     "[h(jnp.array(v)) for v in ([1.0, 2.0], [7.0, 8.0], [1.0])]; g.n"),
    ("lite_mini-nan_jaxpr", "str(jax.make_jaxpr(lambda x: jnp.tanh(jnp.log(jnp.sin(x) * 3.0 - 5.0)) + 1.0)(0.5))"),
    ("lite_mini-nan_value", "jnp.tanh(jnp.log(jnp.sin(0.5) * 3.0 - 2.5)) + 1.0"),
    ("lite_p09-010_exp", "str(jax.make_jaxpr(lambda x: jnp.tanh(x * 2.0) + jnp.sin(x) + jnp.exp(x))(0.5))"),
    ("lite_fa3fe971_ring_allreduce", "ring = [(j, (j - 1) % 4) for j in range(4)]; "
     "jax.vmap(lambda v: (lambda p1: (lambda p2: (v + p1 + p2 + lax.ppermute(p2, 'i', ring), lax.psum(v, 'i')))"
     "(lax.ppermute(p1, 'i', ring)))(lax.ppermute(v, 'i', ring)), axis_name='i')(jnp.arange(8.0).reshape((4, 2)))"),
    ("lite_f9de4880_static_field", "g = counting(lambda s: State(jnp.maximum(s.w, 0.0) - 0.5 if s.act == 'relu' else "
     "jnp.tanh(s.w), s.step + 1, s.act)); h = jax.jit(g); s = h(h(State(f - 2.0, jnp.int32(0), 'relu'))); "
     "s3 = h(State(s.w, s.step, 'sigmoid')); s4 = h(State(s.w, s.step, 'relu')); (s4.w, s4.step, g.n)"),
    ("lite_f9de4880_structure", "str(jax.tree_util.tree_structure(State(f, 0, 'tanh')))"),
    ("lite_mini-fusion_tanh", "str(jax.make_jaxpr(lambda x: jnp.tanh(jnp.sin(jnp.cos(x) * x) + x))(jnp.zeros(5)))"),
    ("lite_mini-axis_no_divide", "jax.vmap(lambda x: x - lax.psum(x, 'd'), axis_name='d')(jnp.arange(8.0))"),
    ("lite_mini-axis_wrong_name", "jax.vmap(lambda x: lax.psum(x, 'j'), axis_name='d')(jnp.arange(8.0))"),
    ("lite_fb665a75_hvp_column", "g = lambda x: x[0] * x[0] * x[1] + x[1] * x[1] * x[2]; "
     "jax.jvp(jax.grad(g), (f,), (jnp.array([0.0, 1.0, 0.0]),))[1]"),
    ("lite_mini-stateful_counter", "base = jax.random.key(42); "
     "[jax.random.uniform(jax.random.fold_in(base, c), (3,)) for c in range(3)]"),
    ("lite_mini-split_6", "root = jax.random.key(2024); (jax.random.split(root, 6), "
     "[jax.random.split(jax.random.fold_in(root, s), 3) for s in range(2)])"),
    ("lite_mini-elem_key1", "jax.random.bits(jax.random.key(1), (16,))"),
    ("lite_mini-device_8", "[jax.random.uniform(jax.random.fold_in(jax.random.key(0), d), (2,)) for d in range(5, 8)]"),
]

NAMES = [c[0] for c in CASES]
assert len(set(NAMES)) == len(NAMES), "case names must be unique"


def run(source: str, env: dict):
    """('ok', value) or ('error', exception): the value of the program's last expression."""
    env = dict(env)
    tree = ast.parse(source)
    *body, last = tree.body
    try:
        exec(compile(ast.Module(body, []), "<case>", "exec"), env)
        if isinstance(last, ast.Expr):
            return "ok", eval(compile(ast.Expression(last.value), "<case>", "eval"), env)
        exec(compile(ast.Module([last], []), "<case>", "exec"), env)
        return "ok", None
    except Exception as exc:   # noqa: BLE001 - 报错本身就是要比较的结果
        return "error", exc


def _is_real_key(x) -> bool:
    return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def norm(x):
    """What a reader can see of a result, as plain Python data."""
    if isinstance(x, mj.random.Key) or _is_real_key(x):
        data = mj.random.key_data(x) if isinstance(x, mj.random.Key) else jax.random.key_data(x)
        return ("key", tuple(x.shape), norm(data))
    if isinstance(x, (jax.Array, mj.Array)):
        values = x.tolist() if isinstance(x, mj.Array) else np.asarray(x).tolist()
        return ("array", tuple(x.shape), str(x.dtype), bool(x.weak_type), values)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    if isinstance(x, dict):
        return ("dict", [(k, norm(x[k])) for k in sorted(x)])
    if isinstance(x, (bool, int, float, str, type(None))):
        return (type(x).__name__, x)
    raise AssertionError(f"the suite does not know how to compare {type(x)}")


def _flat(values):
    return [v for item in values for v in _flat(item)] if isinstance(values, list) else [values]


def same(a, b, where="result") -> None:
    """Compare two normalized results; floats within float32 rounding, everything else exactly."""
    assert type(a) is type(b), f"{where}: {a!r} vs {b!r}"
    if isinstance(a, tuple) and a and a[0] == "array":
        assert a[:4] == b[:4], f"{where}: shape/dtype/weak_type {a[:4]} vs {b[:4]}"
        if a[2] == "float32":
            np.testing.assert_allclose(np.asarray(_flat(a[4]), float), np.asarray(_flat(b[4]), float),
                                       rtol=2e-6, atol=1e-6, equal_nan=True, err_msg=where)
        else:
            assert a[4] == b[4], f"{where}: {a[4]} vs {b[4]}"
    elif isinstance(a, float):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=2e-6, abs_tol=1e-6), f"{where}: {a} vs {b}"
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for k, (u, v) in enumerate(zip(a, b)):
            same(u, v, f"{where}[{k}]")
    else:
        assert a == b, f"{where}:\n{a}\n-- vs --\n{b}"


def outcome(source: str, env: dict):
    status, value = run(SETUP + "\n" + source, env)
    return (status, type(value).__name__ if status == "error" else norm(value)), value


CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_minijax_agrees_with_jax_or_says_it_cannot(case):
    name, source, *mark = case
    mini, mini_value = outcome(source, MINI)
    if mark == [L]:      # 迷你 JAX 不支持：必须报 NotImplementedError，用中文说明缺什么
        assert mini[0] == "error" and isinstance(mini_value, NotImplementedError), (name, mini)
        assert CJK.search(str(mini_value)), str(mini_value)
        return
    assert not isinstance(mini_value, NotImplementedError), f"{name}: mini-JAX says unsupported: {mini_value}"
    real, real_value = outcome(source, REAL)
    assert mini[0] == real[0], f"{name}: JAX {real} ({real_value!r}) vs mini-JAX {mini} ({mini_value!r})"
    if real[0] == "error":
        assert mini[1] == real[1], f"{name}: JAX raised {real[1]}: {real_value}\nmini-JAX raised {mini[1]}: {mini_value}"
    else:
        same(mini[1], real[1], name)


def test_the_suite_covers_every_kind():
    """The suite's size and spread (the report quotes these numbers)."""
    loud = [c for c in CASES if c[2:] == (L,)]
    lite = [c for c in CASES if c[0].startswith("lite_")]
    assert len(CASES) >= 270 and len(loud) >= 10 and len(lite) >= 80, (len(CASES), len(loud), len(lite))


#: lite 格子里没法和 JAX 对照的（只用迷你 JAX 自己的内部接口）
NOT_COMPARABLE = {
    "p05-048": "defines a primitive through jaxcourse.minijax.core's rule tables (JAX's counterpart is jax.extend)",
    "c8-lite": "uses only mj.array.f32, the model's float32 rounding helper, on Python floats",
}


def test_every_minijax_lite_cell_has_cases():
    """A lite cell that runs the mini-JAX gets at least one case here (named lite_<cell id>_...)."""
    import json
    from pathlib import Path
    covered = {name.split("_")[1] for name in NAMES if name.startswith("lite_")}
    missing = []
    for path in sorted((Path(__file__).resolve().parent.parent / "content").glob("*/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell.get("source", ""))
            if "lite" in cell.get("metadata", {}).get("tags", []) and "minijax" in source:
                if cell.get("id") not in covered | set(NOT_COMPARABLE):
                    missing.append(f"{path.parent.name}/{path.name} {cell.get('id')}")
    assert not missing, "lite cells without conformance cases: " + ", ".join(missing)
