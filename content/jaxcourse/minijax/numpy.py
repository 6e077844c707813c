"""迷你 JAX 的 numpy：像 jax.numpy 一样的函数，每个都落到 prims.py 的原语上。

每个逐元素函数先做 jax.numpy 做的两件事，再交给原语：
1. 类型提升（规则在 dtypes.py）：dtype 不同的数组先 convert_element_type 成同一个 dtype，
   Python 标量变成这个 dtype 的弱类型常数（直接写进方程：2.0:f32[]）；
2. 秩提升：秩不同的两个数组，秩小的那个先用 broadcast_in_dim 在前面补上长度为 1 的维度。
所以简单函数的 jaxpr 和 jax.make_jaxpr 打印的一样。迷你 JAX 没有的函数，取用时报 NotImplementedError。
"""

from __future__ import annotations

import builtins
import math

from . import dtypes
from . import prims as P
from .array import Array, asarray as _asarray
from .core import Tracer, get_aval
from .errors import no_options, unsupported


class _DType(str):
    """A dtype name that also builds a strongly typed scalar, like jnp.float32(1.0)."""

    def __call__(self, value):
        if _is_array(value) or isinstance(value, (list, tuple)):
            return array(value, self)                     # jnp.float32(数组)：转换 dtype
        return Array([value], (), str(self))


float32, int32, uint32 = _DType("float32"), _DType("int32"), _DType("uint32")
bool_ = _DType("bool")
pi, e, inf, nan = math.pi, math.e, math.inf, math.nan      # 和 jnp 一样是 Python 的 float


def _is_array(x) -> bool:
    return isinstance(x, (Array, Tracer))


def _to(x, dtype: str, weak: bool):
    """x as `dtype` (and strong when the result is): a constant is rewritten, a traced value converted.

    As in jax.numpy: a weakly typed traced value meeting a strong one gets a convert_element_type that only
    drops the weak type — its transpose gives the gradient the weak type back.
    """
    aval = get_aval(x)
    if aval.dtype == dtype and (aval.weak_type == weak or not isinstance(x, Tracer)):
        return x
    if not _is_array(x):
        return Array([x], (), dtype, weak_type=True)
    if isinstance(x, Array):
        return Array(x.data, x.shape, dtype, weak)
    return P.convert_element_type(x, dtype, weak)


def _rank_promote(xs):
    """Arrays of lower rank get leading 1s (broadcast_in_dim); scalars stay as they are."""
    rank = builtins.max(get_aval(x).ndim for x in xs)
    out = []
    for x in xs:
        a = get_aval(x)
        if _is_array(x) and 0 < a.ndim < rank:
            x = P.broadcast_in_dim(x, (1,) * (rank - a.ndim) + a.shape, range(rank - a.ndim, rank))
        out.append(x)
    return out


def _check(name, *xs):
    """jax.numpy takes arrays and scalars, not lists: jnp.sum([1, 2]) is a TypeError (jnp.array first)."""
    for i, x in enumerate(xs):
        if isinstance(x, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position {i}."
                            "（列表先用 jnp.array 变成数组）")


def _promote(*xs, name="jnp"):
    """jnp's two steps before an elementwise primitive: one dtype (dtypes.result_type), then one rank."""
    _check(name, *xs)
    dtype, weak = dtypes.result_type(*map(get_aval, xs))
    return _rank_promote([_to(x, dtype, weak) for x in xs])


def _promote_inexact(*xs, name="jnp"):
    """Like _promote, then integers and bools become float32 (sin, exp, true division)."""
    _check(name, *xs)
    dtype, weak = dtypes.inexact(*dtypes.result_type(*map(get_aval, xs)))
    return _rank_promote([_to(x, dtype, weak) for x in xs])


def _binary(prim):
    def op(x, y):
        return P.bind1(prim, *_promote(x, y, name=prim.name))
    op.__name__ = prim.name
    return op


def _float_unary(prim):
    def op(x):
        return P.bind1(prim, *_promote_inexact(x, name=prim.name))
    op.__name__ = prim.name
    return op


add, subtract, multiply = _binary(P.add_p), _binary(P.sub_p), _binary(P.mul_p)
maximum, minimum = _binary(P.max_p), _binary(P.min_p)
greater, less, greater_equal, less_equal = _binary(P.gt_p), _binary(P.lt_p), _binary(P.ge_p), _binary(P.le_p)
equal, not_equal = _binary(P.eq_p), _binary(P.ne_p)
sin, cos, exp, log, tanh, sqrt = map(_float_unary, (P.sin_p, P.cos_p, P.exp_p, P.log_p, P.tanh_p, P.sqrt_p))


def divide(x, y):
    """True division: integers divide as float32 (3 / 2 = 1.5), as in jnp."""
    return P.bind1(P.div_p, *_promote_inexact(x, y, name="divide"))


true_divide = divide


def negative(x):
    return P.neg(x)


def power(x, y):
    """x ** y: a Python int exponent is integer_pow (repeated multiplication), anything else pow on floats."""
    _check("power", x, y)
    if isinstance(y, int) and not isinstance(y, bool):
        return P.integer_pow(x, y)
    return P.bind1(P.pow_p, *_promote_inexact(x, y, name="power"))


def array(x, dtype=None, **options):
    """Like jnp.array: a Python scalar stays weakly typed (jnp.array(1.0).weak_type is True), lists do not.

    Traced values pass through (inside jit or grad); a list holding traced values is stacked.
    """
    no_options("jnp.array", options)
    dtype = dtypes.canonical(dtype) if dtype is not None else None
    if isinstance(x, Tracer):
        return x if dtype is None or dtype == x.dtype else P.convert_element_type(x, dtype)
    if isinstance(x, (list, tuple)) and _holds_tracer(x):      # 列表造出的数组是强类型的
        x = stack([array(v) for v in x])
        target = dtype or x.dtype
        return x if (target, False) == (x.dtype, x.weak_type) else P.convert_element_type(x, target)
    return _asarray(x, dtype) if dtype else _asarray(x)


def _holds_tracer(x) -> bool:
    return any(_holds_tracer(v) if isinstance(v, (list, tuple)) else isinstance(v, Tracer) for v in x)


def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def zeros(shape, dtype=float32, **options):
    no_options("jnp.zeros", options)
    shape = _shape(shape)
    return Array([0] * _size(shape), shape, dtypes.canonical(dtype))


def ones(shape, dtype=float32, **options):
    no_options("jnp.ones", options)
    shape = _shape(shape)
    return Array([1] * _size(shape), shape, dtypes.canonical(dtype))


def zeros_like(x):
    a = get_aval(x)
    return zeros(a.shape, a.dtype)


def ones_like(x):
    a = get_aval(x)
    return ones(a.shape, a.dtype)


def arange(start, stop=None, step=1, dtype=None, **options):
    """Like jnp.arange: int32 for integer arguments, float32 when any argument is a float."""
    no_options("jnp.arange", options)
    start, stop = (0, start) if stop is None else (start, stop)
    dtype = dtypes.canonical(dtype) if dtype is not None else None
    if builtins.any(isinstance(v, float) for v in (start, stop, step)) or dtype == "float32":
        n = builtins.max(0, math.ceil((stop - start) / step))
        return Array([start + i * step for i in range(n)], (n,), "float32")
    vals = list(range(start, stop, step))
    return Array(vals, (len(vals),), str(dtype or int32))


def linspace(start, stop, num=50, **options):
    no_options("jnp.linspace", options)
    return Array([start + (stop - start) * i / (num - 1) for i in range(num)], (num,), float32)


def where(cond, x=None, y=None):
    """select_n(cond, y, x): select_n's case 0 is for False."""
    if x is None or y is None:
        raise unsupported("只给条件的 jnp.where(cond)（返回下标）", "迷你 JAX 的 where 要三个参数 where(cond, x, y)")
    _check("where", cond, x, y)
    if get_aval(cond).dtype != "bool":
        cond = not_equal(cond, 0)
    x, y = _promote(x, y, name="where")
    return P.select_n(cond, y, x)


def _axis(a: int, nd: int) -> int:
    """A (possibly negative) axis as 0 … nd-1; out of range is a ValueError, as in JAX."""
    if not -nd <= a < nd:
        raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
    return a % nd


def _axes(x, axis) -> list:
    nd = get_aval(x).ndim
    if axis is None:
        return list(range(nd))
    return [_axis(a, nd) for a in ((axis,) if isinstance(axis, int) else axis)]


def sum(x, axis=None, **options):   # noqa: A001 - 与 jnp.sum 同名
    """bool is summed as int32 (jnp.sum(mask) counts the Trues)."""
    no_options("jnp.sum", options)
    _check("sum", x)
    if get_aval(x).dtype == "bool":
        x = P.convert_element_type(x, "int32")
    return P.reduce_sum(x, _axes(x, axis))


def max(x, axis=None, **options):   # noqa: A001
    no_options("jnp.max", options)
    _check("max", x)
    return P.reduce_max(x, _axes(x, axis))


def mean(x, axis=None, **options):
    """Integers and bools are averaged as float32 (bool goes through int32, as jnp does)."""
    no_options("jnp.mean", options)
    _check("mean", x)
    shape, dtype = get_aval(x).shape, get_aval(x).dtype
    count = _size(shape if axis is None else [shape[a] for a in ((axis,) if isinstance(axis, int) else axis)])
    if dtype == "bool":
        x = P.convert_element_type(x, "int32")
    if dtype != "float32":
        x = P.convert_element_type(x, "float32")
    return P.div(sum(x, axis), float(count))


def dot(x, y):
    """Vector·vector, matrix@vector, matrix@matrix (contract x's last axis with y's first)."""
    _check("dot", x, y)
    dtype, weak = dtypes.result_type(get_aval(x), get_aval(y))
    x, y = _to(x, dtype, weak), _to(y, dtype, weak)
    ax, ay = get_aval(x), get_aval(y)
    if ax.ndim == 0 or ay.ndim == 0:
        return multiply(x, y)
    if ay.ndim > 2:
        raise unsupported("dot / @ 的第二个数组超过 2 维", "用 vmap 把批维度拆开")
    return P.dot_general(x, y, (((ax.ndim - 1,), (0,)), ((), ())))


matmul = dot


def transpose(x, axes=None):
    nd = get_aval(x).ndim
    return P.transpose(x, tuple(reversed(range(nd))) if axes is None else tuple(_axis(a, nd) for a in axes))


def reshape(x, shape):
    """Like jnp.reshape; one -1 stands for whatever size is left."""
    _check("reshape", x)
    shape = [shape] if isinstance(shape, int) else list(shape)
    if -1 in shape:
        known = _size([d for d in shape if d != -1])
        shape[shape.index(-1)] = _size(get_aval(x).shape) // known
    if _size(shape) != _size(get_aval(x).shape):
        raise TypeError(f"cannot reshape array of shape {get_aval(x).shape} (size {_size(get_aval(x).shape)}) "
                        f"into shape {tuple(shape)} (size {_size(shape)})")
    return P.reshape(x, tuple(shape))


def stack(xs, axis=0, **options):
    no_options("jnp.stack", options)
    _check("stack", *xs)
    dtype, weak = dtypes.result_type(*map(get_aval, xs))
    return P.stack([_to(x, dtype, weak) for x in xs], axis)


def astype(x, dtype):
    return P.convert_element_type(x, dtypes.canonical(dtype))


asarray = array


# ---- 运算符：Array 和 Tracer 上的 + - * / ** @ < > [] 都落到上面的函数 ----
def _getitem(x, i):
    """An integer index; out of range is clamped to the ends, as JAX does (no IndexError)."""
    if isinstance(i, int) and not isinstance(i, bool):
        n = get_aval(x).shape[0]
        i = i + n if i < 0 else i
        return P.index(x, builtins.min(builtins.max(i, 0), n - 1), 0)
    if isinstance(i, slice) and isinstance(x, Array):
        return Array(*_slice(x, i))
    raise unsupported(f"下标 {type(i).__name__}", "迷你 JAX 的下标只支持整数（追踪时）或切片（具体数组）")


def _slice(x, s):
    rows = list(range(x.shape[0]))[s]
    step = len(x.data) // x.shape[0] if x.shape[0] else 0
    data = [v for r in rows for v in x.data[r * step:(r + 1) * step]]
    return data, (len(rows),) + x.shape[1:], x.dtype


def _reshape_method(x, *shape):   # x.reshape(2, 3) 和 x.reshape((2, 3)) 都行
    return reshape(x, shape[0] if len(shape) == 1 else shape)


def _swap(fn):
    def reflected(x, y):
        return fn(y, x)
    return reflected


def _missing_operator(symbol):
    def op(*args):
        raise unsupported(f"运算符 {symbol}", "换成已有的运算（比如 a // b 写成 astype(a / b, int32) 要注意取整方向）")
    return op


_OPS = {
    "__add__": add, "__radd__": _swap(add), "__sub__": subtract, "__rsub__": _swap(subtract),
    "__mul__": multiply, "__rmul__": _swap(multiply), "__truediv__": divide, "__rtruediv__": _swap(divide),
    "__pow__": power, "__rpow__": _swap(power), "__neg__": negative, "__matmul__": dot, "__rmatmul__": _swap(dot),
    "__gt__": greater, "__lt__": less, "__ge__": greater_equal, "__le__": less_equal,
    "__eq__": equal, "__ne__": not_equal, "__getitem__": _getitem,
    "sum": sum, "max": max, "mean": mean, "reshape": _reshape_method, "astype": astype,
}
for _symbol, _names in {"//": ("__floordiv__", "__rfloordiv__"), "%": ("__mod__", "__rmod__"),
                        "&": ("__and__", "__rand__"), "|": ("__or__", "__ror__"), "^": ("__xor__", "__rxor__"),
                        "~": ("__invert__",), "abs()": ("__abs__",)}.items():
    for _name in _names:
        _OPS[_name] = _missing_operator(_symbol)
for _cls in (Array, Tracer):
    for _name, _fn in _OPS.items():
        setattr(_cls, _name, _fn)
    _cls.__hash__ = object.__hash__
    _cls.T = property(transpose)


def _missing_attribute(self, name):
    """x.min()、x.argmax() ……：数组上迷你 JAX 没有的方法，说清楚缺的是什么。"""
    if name.startswith("_"):
        raise AttributeError(name)
    raise unsupported(f"数组的 .{name}", "迷你 JAX 的数组只有 shape、dtype、ndim、T、sum、max、mean、reshape、astype、"
                      "item、tolist")


for _cls in (Array, Tracer):
    _cls.__getattr__ = _missing_attribute


def __getattr__(name):   # jnp 里有、迷你 JAX 里没有的函数：说清楚缺的是什么
    if name.startswith("_"):
        raise AttributeError(name)
    raise unsupported(f"jax.numpy.{name}", "迷你 JAX 的 numpy 只有 README 列出的这些函数")
