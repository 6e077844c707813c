"""make_jaxpr 和 jit。

jit 在这里就是一个缓存：键是参数的抽象签名（每个叶子的形状、dtype、弱类型，pytree 结构，静态参数的值），
值是追踪得到的 jaxpr。命中就直接执行 jaxpr，不再运行 Python 函数体；没命中才追踪（trace_count 加 1）。
缓存跟着函数走：在循环里对同一个函数反复写 jit(f)(x)，只追踪一次（每次新建的 lambda 才是新函数）。
真 JAX 在这之后还要把 jaxpr 编译成机器码（这一步这里省略：直接逐条执行）。
"""

from __future__ import annotations

import functools
import inspect
import weakref

from .array import asarray
from .core import Tracer, eval_jaxpr, get_aval, trace_to_jaxpr
from .errors import no_options, unsupported
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
        if type(x).__name__ == "Key":
            raise unsupported("把 random 的 key 传进 jit / make_jaxpr", "在函数外面用 key 生成随机数，再把数组传进去")
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


def _static_config(f, static_argnums, static_argnames):
    """Static arguments by position and by name, each completed from the other (JAX reads the signature)."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    try:
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        names = []
    nums = tuple(sorted(set(static_argnums) | {names.index(n) for n in static_argnames if n in names}))
    names_out = tuple(sorted(set(static_argnames) | {names[i] for i in nums if i < len(names)}))
    return nums, names_out


class _Cache:
    """One function's traced jaxprs: key → (jaxpr, output tree), plus the count of traces."""

    def __init__(self):
        self.entries, self.traces = {}, []


#: 每个函数一份缓存（和 JAX 一样）：对同一个函数再调用一次 jit(f)，拿到的还是原来的缓存，不会重新追踪
_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cache_for(f, config) -> _Cache:
    try:
        per_function = _caches.setdefault(f, {})
    except TypeError:             # 不能弱引用的可调用对象：只给这一个 jit 用
        per_function = {}
    return per_function.setdefault(config, _Cache())


class jit:   # noqa: N801 - 和 jax.jit 同名
    """jit(f): a cache of traced jaxprs keyed by the abstract signature; `.trace_count` counts the traces.

    键 =（参数的 pytree 结构，每个叶子的抽象值，静态参数的（类型，值））。命中：只执行记下的 jaxpr。
    """

    def __init__(self, f, static_argnums=(), static_argnames=(), **options):
        no_options("jax.jit", options)
        self.f = f
        self.static_argnums, self.static_argnames = _static_config(f, static_argnums, static_argnames)
        self.cache = _cache_for(f, (self.static_argnums, self.static_argnames))
        self.__name__ = getattr(f, "__name__", "f")
        self.__wrapped__ = f

    trace_count = property(lambda self: len(self.cache.traces))
    traces = property(lambda self: self.cache.traces)

    def cache_size(self) -> int:
        return len(self.cache.entries)

    def __get__(self, obj, objtype=None):      # 装饰类里的方法时，像函数一样绑定 self
        return self if obj is None else functools.partial(self, obj)

    def __getattr__(self, name):               # jit(f).lower(...)、.trace(...) 等迷你 JAX 没有
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(f"jit 函数的 .{name}", "迷你 JAX 的 jit 只有调用、trace_count、traces 和 cache_size()")

    def _key(self, args, kwargs):
        """(key, dynamic leaves, static keyword values) of one call."""
        static_kw = {k: kwargs.pop(k) for k in self.static_argnames if k in kwargs}
        # 静态参数按（类型，值）进键：1、1.0、True 在 Python 里相等，JAX 仍把它们分开
        static = tuple((type(args[i]), args[i]) for i in self.static_argnums if i < len(args)) + tuple(
            (k, type(v), v) for k, v in sorted(static_kw.items()))
        try:
            hash(static)
        except TypeError:
            raise ValueError("Non-hashable static arguments are not supported.（静态参数要能哈希：列表换成元组）") from None
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        leaves, tree = tree_flatten((dynamic, kwargs))
        return (tree, _avals(leaves), static), leaves, static_kw

    def _trace(self, key, args, static_kw):
        """Run the Python function on tracers once and record its jaxpr (a cache miss)."""
        def call(*dynamic, **kwargs):
            it = iter(dynamic)
            full = [args[i] if i in self.static_argnums else next(it) for i in range(len(args))]
            return self.f(*full, **kwargs, **static_kw)
        out_trees = []
        jaxpr = trace_to_jaxpr(_flatten_fun(call, key[0], out_trees), key[1])
        self.cache.traces.append(key)
        self.cache.entries[key] = (jaxpr, out_trees[0])

    def __call__(self, *args, **kwargs):
        key, leaves, static_kw = self._key(args, dict(kwargs))
        if key not in self.cache.entries:
            self._trace(key, args, static_kw)
        jaxpr, out_tree = self.cache.entries[key]
        outs = [asarray(o) for o in eval_jaxpr(jaxpr, leaves)]      # 命中：只执行记下的程序
        return tree_unflatten(out_tree, outs)


def describe_key(key) -> str:
    """A cache key in words: 'f32[3], weak f32[] | static (2,) | PyTreeDef(...)'."""
    tree, avals, static = key
    text = ", ".join(("弱类型 " if a.weak_type else "") + str(a) for a in avals)
    values = [repr(s[-1]) for s in static]
    return text + (f" | 静态参数 {', '.join(values)}" if static else "")


__all__ = ["Tracer", "describe_key", "jit", "make_jaxpr"]
