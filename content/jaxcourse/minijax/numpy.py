"""迷你 JAX 的 numpy：像 jax.numpy 一样的函数，每个都落到 prims.py 的原语上。

和 jax.numpy 一样，秩不同的两个数组先用 broadcast_in_dim 补齐维度（Python 标量除外：它们是弱类型的常数，
直接写进方程），所以简单函数的 jaxpr 和 jax.make_jaxpr 打印的原语序列相同。
"""

from __future__ import annotations

from . import prims as P
from .array import Array, asarray
from .core import Tracer, get_aval

class _DType(str):
    """A dtype name that also builds a strongly typed scalar, like jnp.float32(1.0)."""

    def __call__(self, value):
        return Array([value], (), str(self))


float32, int32, uint32 = _DType("float32"), _DType("int32"), _DType("uint32")


def _literal(x, other):
    """A Python scalar next to an array takes the array's dtype and stays weak (as in jax.numpy)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and isinstance(other, (Array, Tracer)):
        dtype = get_aval(other).dtype
        if dtype in ("float32", "int32", "uint32") and not (isinstance(x, float) and dtype != "float32"):
            return Array([x], (), dtype, weak_type=True)
    return x


def _rank_promote(x, y):
    x, y = _literal(x, y), _literal(y, x)
    ax, ay = get_aval(x), get_aval(y)
    if ax.ndim == ay.ndim or (not isinstance(x, (Tracer, Array)) or not isinstance(y, (Tracer, Array))):
        return x, y
    if ax.ndim < ay.ndim and ax.ndim > 0:
        x = P.broadcast_in_dim(x, (1,) * (ay.ndim - ax.ndim) + ax.shape, range(ay.ndim - ax.ndim, ay.ndim))
    elif ay.ndim < ax.ndim and ay.ndim > 0:
        y = P.broadcast_in_dim(y, (1,) * (ax.ndim - ay.ndim) + ay.shape, range(ax.ndim - ay.ndim, ax.ndim))
    return x, y


def _binary(prim):
    return lambda x, y: P.bind1(prim, *_rank_promote(x, y))


def _to_float(x):
    """jax.numpy turns integers into float32 before sin, exp, true division ... (lax would refuse them)."""
    if isinstance(x, (Array, Tracer)) and get_aval(x).dtype != "float32":
        return P.convert_element_type(x, "float32")
    return float(x) if isinstance(x, int) and not isinstance(x, bool) else x


def divide(x, y):
    if all(isinstance(v, int) or get_aval(v).dtype != "float32" for v in (x, y) if not isinstance(v, float)):
        x, y = _to_float(x), _to_float(y)    # 整数 / 整数 得到 float32（真除法），和 jnp 一样
    return P.bind1(P.div_p, *_rank_promote(x, y))


add, subtract, multiply = _binary(P.add_p), _binary(P.sub_p), _binary(P.mul_p)
maximum, minimum = _binary(P.max_p), _binary(P.min_p)
greater, less, greater_equal, less_equal = _binary(P.gt_p), _binary(P.lt_p), _binary(P.ge_p), _binary(P.le_p)
equal, not_equal = _binary(P.eq_p), _binary(P.ne_p)
def _float_unary(fn):
    return lambda x: fn(_to_float(x))


sin, cos, exp, log, tanh, sqrt = (_float_unary(f) for f in (P.sin, P.cos, P.exp, P.log, P.tanh, P.sqrt))
negative = P.neg


def power(x, y):
    if not isinstance(y, int):
        raise NotImplementedError("迷你 JAX 只支持整数次幂 x ** n（integer_pow）；其他用 exp(y * log(x))")
    return P.integer_pow(x, y)


def array(x, dtype=None):
    """Like jnp.array: a Python scalar stays weakly typed (jnp.array(1.0).weak_type is True), lists do not."""
    return asarray(x, str(dtype)) if dtype else asarray(x)


def zeros(shape, dtype=float32):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return Array([0] * _size(shape), shape, dtype)


def ones(shape, dtype=float32):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return Array([1] * _size(shape), shape, dtype)


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def zeros_like(x):
    a = get_aval(x)
    return zeros(a.shape, a.dtype)


def ones_like(x):
    a = get_aval(x)
    return ones(a.shape, a.dtype)


def arange(start, stop=None, dtype=None):
    start, stop = (0, start) if stop is None else (start, stop)
    vals = list(range(start, stop))
    return Array(vals, (len(vals),), dtype or int32)


def linspace(start, stop, num):
    return Array([start + (stop - start) * i / (num - 1) for i in range(num)], (num,), float32)


def where(cond, x, y):
    x, y = _rank_promote(x, y)
    return P.select_n(cond, y, x)     # select_n 的第 0 个分支对应 False


def sum(x, axis=None):   # noqa: A001 - 与 jnp.sum 同名
    nd = get_aval(x).ndim
    axes = range(nd) if axis is None else [axis % nd] if isinstance(axis, int) else [a % nd for a in axis]
    return P.reduce_sum(x, axes)


def max(x, axis=None):   # noqa: A001
    nd = get_aval(x).ndim
    axes = range(nd) if axis is None else [axis % nd] if isinstance(axis, int) else [a % nd for a in axis]
    return P.reduce_max(x, axes)


def mean(x, axis=None):
    shape = get_aval(x).shape
    nd = len(shape)
    axes = range(nd) if axis is None else [axis % nd] if isinstance(axis, int) else [a % nd for a in axis]
    n = 1
    for a in axes:
        n *= shape[a]
    return P.div(sum(x, axis), float(n))


def dot(x, y):
    """Vector·vector, matrix@vector, matrix@matrix (contract x's last axis with y's first)."""
    ax, ay = get_aval(x), get_aval(y)
    if ax.ndim == 0 or ay.ndim == 0:
        return multiply(x, y)
    return P.dot_general(x, y, (((ax.ndim - 1,), (0,)), ((), ())))


matmul = dot


def transpose(x, axes=None):
    nd = get_aval(x).ndim
    return P.transpose(x, tuple(reversed(range(nd))) if axes is None else axes)


def reshape(x, shape):
    """Like jnp.reshape; one -1 stands for whatever size is left."""
    shape = [shape] if isinstance(shape, int) else list(shape)
    if -1 in shape:
        known = _size([d for d in shape if d != -1])
        shape[shape.index(-1)] = _size(get_aval(x).shape) // known
    if _size(shape) != _size(get_aval(x).shape):
        raise TypeError(f"cannot reshape array of shape {get_aval(x).shape} into shape {tuple(shape)}")
    return P.reshape(x, tuple(shape))


def stack(xs, axis=0):
    return P.stack(list(xs), axis)


def astype(x, dtype):
    return P.convert_element_type(x, dtype)


# ---- 运算符：Array 和 Tracer 上的 + - * / ** @ < > [] 都落到上面的函数 ----
def _getitem(x, i):
    if isinstance(i, int):
        n = get_aval(x).shape[0]
        return P.index(x, i % n, 0)
    if isinstance(i, slice) and isinstance(x, Array):
        return Array(*_slice(x, i))
    raise NotImplementedError("迷你 JAX 的下标只支持整数（追踪时）或切片（具体数组）")


def _slice(x, s):
    rows = list(range(x.shape[0]))[s]
    step = len(x.data) // x.shape[0] if x.shape[0] else 0
    data = [v for r in rows for v in x.data[r * step:(r + 1) * step]]
    return data, (len(rows),) + x.shape[1:], x.dtype


_OPS = {
    "__add__": add, "__radd__": lambda x, y: add(y, x), "__sub__": subtract, "__rsub__": lambda x, y: subtract(y, x),
    "__mul__": multiply, "__rmul__": lambda x, y: multiply(y, x), "__truediv__": divide,
    "__rtruediv__": lambda x, y: divide(y, x), "__pow__": power, "__neg__": negative,
    "__matmul__": dot, "__rmatmul__": lambda x, y: dot(y, x),
    "__gt__": greater, "__lt__": less, "__ge__": greater_equal, "__le__": less_equal,
    "__eq__": equal, "__ne__": not_equal, "__getitem__": _getitem,
    "sum": sum, "max": max, "mean": mean, "reshape": reshape, "astype": astype,
}
for _cls in (Array, Tracer):
    for _name, _fn in _OPS.items():
        setattr(_cls, _name, _fn)
    _cls.__hash__ = object.__hash__
    _cls.T = property(transpose)
