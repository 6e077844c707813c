"""make_jaxpr 和 jit。

jit 在这里就是一个缓存：键是参数的抽象签名（每个叶子的形状、dtype、弱类型，pytree 结构，静态参数的值），
值是追踪得到的 jaxpr。命中就直接执行 jaxpr，不再运行 Python 函数体；没命中才追踪（trace_count 加 1）。
真 JAX 在这之后还要把 jaxpr 编译成机器码（这一步这里省略：直接逐条执行）。
"""

from __future__ import annotations

import inspect

from .core import Tracer, eval_jaxpr, get_aval, trace_to_jaxpr
from .tree import tree_flatten, tree_unflatten


def _flatten_fun(f, in_tree, out_trees):
    def flat(*leaves):
        args, kwargs = tree_unflatten(in_tree, leaves)
        out, tree = tree_flatten(f(*args, **kwargs))
        out_trees.append(tree)
        return out
    return flat


def _avals(leaves):
    out = []
    for i, x in enumerate(leaves):
        try:
            out.append(get_aval(x))
        except TypeError:
            raise TypeError(f"Argument {i} of type {type(x)} is not a valid JAX type."
                            "（只能传数、数组和它们组成的 pytree；别的值要标成静态参数）") from None
    return tuple(out)


def make_jaxpr(f):
    """make_jaxpr(f)(*args) → the Jaxpr, printed like jax.make_jaxpr's output."""
    def wrapped(*args, **kwargs):
        leaves, tree = tree_flatten((args, kwargs))
        return trace_to_jaxpr(_flatten_fun(f, tree, []), _avals(leaves))
    return wrapped


def jit(f, static_argnums=(), static_argnames=()):
    """A cache of traced jaxprs keyed by the abstract signature; `.trace_count` counts the traces."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    try:   # 按位置和按名字指定的静态参数互相对应（和 JAX 一样看函数签名）
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        names = []
    static_argnums = tuple(sorted(set(static_argnums) | {names.index(n) for n in static_argnames if n in names}))
    static_argnames = tuple(set(static_argnames) | {names[i] for i in static_argnums if i < len(names)})
    cache = {}

    def wrapped(*args, **kwargs):
        static_kw = {k: kwargs.pop(k) for k in static_argnames if k in kwargs}
        # 静态参数按（类型，值）进键：1、1.0、True 在 Python 里相等，JAX 仍把它们分开
        static = tuple((type(args[i]), args[i]) for i in static_argnums if i < len(args)) + tuple(
            (k, type(v), v) for k, v in sorted(static_kw.items()))
        try:
            hash(static)
        except TypeError:
            raise ValueError("Non-hashable static arguments are not supported.（静态参数要能哈希：列表换成元组）") from None
        dynamic = tuple(a for i, a in enumerate(args) if i not in static_argnums)
        leaves, tree = tree_flatten((dynamic, kwargs))
        key = (tree, _avals(leaves), static)
        if key not in cache:                      # 没命中：运行 Python 函数体，记下 jaxpr
            wrapped.trace_count += 1
            wrapped.traces.append(key)

            def call(*a, **k):
                full, it = [], iter(a)
                for i in range(len(args)):
                    full.append(args[i] if i in static_argnums else next(it))
                return f(*full, **k, **static_kw)
            out_trees = []
            cache[key] = (trace_to_jaxpr(_flatten_fun(call, tree, out_trees), key[1]), out_trees[0])
        jaxpr, out_tree = cache[key]
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, leaves))   # 命中：只执行记下的程序

    wrapped.trace_count, wrapped.traces = 0, []
    wrapped.cache_size = lambda: len(cache)
    wrapped.__name__ = getattr(f, "__name__", "f")
    return wrapped


def describe_key(key) -> str:
    """A cache key in words: 'f32[3], weak f32[] | static (2,) | PyTreeDef(...)'."""
    tree, avals, static = key
    text = ", ".join(("弱类型 " if a.weak_type else "") + str(a) for a in avals)
    values = [repr(s[-1]) for s in static]
    return text + (f" | 静态参数 {', '.join(values)}" if static else "")


__all__ = ["Tracer", "describe_key", "jit", "make_jaxpr"]
