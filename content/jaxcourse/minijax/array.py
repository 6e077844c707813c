"""迷你 JAX 的数组：只用标准库的 n 维数组（行优先的扁平列表 + 形状 + dtype）。

JAX 的数组由 XLA 在设备上计算；这里每个元素是一个 Python 数。float32 的结果在每一步之后都舍入到
float32（用 struct 打包再解包），所以精度问题（比如有限差分的抵消）和真 JAX 一样会出现。
超越函数用 Python 的 math 先算出双精度再舍入，与 XLA 的实现可能差最后一位：比较时用容差。
"""

from __future__ import annotations

import itertools
import math
import struct

from . import dtypes

DTYPES = {"float32": "f32", "int32": "i32", "uint32": "u32", "bool": "bool"}


TINY = 2.0 ** -126     # 最小的正规 float32；XLA 在 CPU 上把比它小的（次正规数）冲成 0


def f32(x: float) -> float:
    """Round a Python float to float32 as XLA on a CPU does: overflow gives ±inf, subnormals flush to ±0."""
    try:
        r = struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    return math.copysign(0.0, r) if 0 < abs(r) < TINY else r


def cast(x, dtype: str):
    """One element converted to `dtype` the way XLA does for these four types."""
    if dtype == "float32":
        return f32(float(x))
    if dtype == "bool":
        return bool(x)
    if isinstance(x, float):
        if math.isnan(x):
            return 0
        x = int(x)              # 向零取整
    x = int(x)
    if dtype == "uint32":
        return x & 0xFFFFFFFF
    x &= 0xFFFFFFFF             # int32：按补码回绕
    return x - (1 << 32) if x >= 1 << 31 else x


def short_float(x: float, scalar: bool = False) -> str:
    """The shortest decimal that reads back as the same float32 (what NumPy/JAX print).

    NumPy writes a whole number as `2.` inside an array and `2.0` alone (`scalar=True`).
    """
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    for digits in range(1, 10):
        text = f"{x:.{digits}g}"
        if f32(float(text)) == x:
            break
    text = repr(float(text))               # 20.0、0.1、1e-05：Python 的最短写法
    if "e" in text or scalar:
        return text
    return text[:-1] if text.endswith(".0") else text


def size(shape) -> int:
    return math.prod(shape)


def strides(shape) -> list[int]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return out[::-1]


def indices(shape):
    """Every index tuple of `shape`, row-major."""
    return itertools.product(*(range(n) for n in shape))


def broadcast_shapes(*shapes, name: str = "broadcast_shapes") -> tuple:
    """NumPy's broadcasting: align on the right; a dimension of 1 stretches. `name` is the operation, for the error."""
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded):
        big = {d for d in dims if d != 1}
        if len(big) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(tuple(s)) for s in shapes)}.（形状无法广播）")
        out.append(big.pop() if big else 1)
    return tuple(out)


class Array:
    """A concrete array: flat row-major `data`, `shape`, `dtype`, and JAX's weak-type flag."""

    __array_priority__ = 100

    def __init__(self, data, shape=(), dtype="float32", weak_type=False):
        self.shape, self.dtype, self.weak_type = tuple(shape), dtype, weak_type
        self.data = [cast(v, dtype) for v in data]
        assert len(self.data) == size(self.shape), (len(self.data), self.shape)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: len(self.data))

    def at(self, index) -> object:
        return self.data[sum(i * s for i, s in zip(index, strides(self.shape)))]

    def broadcast_to(self, shape) -> list:
        """The flat data of this array stretched to `shape` (NumPy broadcasting)."""
        if tuple(shape) == self.shape:
            return list(self.data)
        pad = len(shape) - self.ndim
        st = [0] * pad + [s if n != 1 else 0 for s, n in zip(strides(self.shape), self.shape)]
        return [self.data[sum(i * s for i, s in zip(idx, st))] for idx in indices(shape)]

    def tolist(self):
        def build(flat, shape):
            if not shape:
                return flat[0]
            step = len(flat) // shape[0] if shape[0] else 0
            return [build(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
        return build(self.data, self.shape)

    def item(self):
        if self.size != 1:
            raise ValueError(f"只有一个元素的数组才能转成 Python 数（这个数组的形状是 {self.shape}）")
        return self.data[0]

    __float__ = lambda self: float(self.item())
    __int__ = lambda self: int(self.item())
    __index__ = lambda self: int(self.item())

    def __bool__(self):
        return bool(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):           # 沿第 0 维逐个取出（和 NumPy、JAX 一样）
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def _text(self, sep: str = " ", pad: bool = True) -> str:
        """NumPy-like text: `str` pads items to one width and separates with spaces; `repr` uses commas."""
        def one(v):
            return short_float(v) if self.dtype == "float32" else str(v)
        if not self.shape:
            return short_float(self.data[0], scalar=True) if self.dtype == "float32" else one(self.data[0])
        items = [one(v) for v in self.data]
        if pad and items and self.dtype == "float32" and not any("e" in s or "n" in s for s in items):
            heads, tails = zip(*(s.split(".") for s in items))      # 像 NumPy 一样按小数点对齐
            hw, tw = max(map(len, heads)), max(map(len, tails))
            items = [h.rjust(hw) + "." + t.ljust(tw) for h, t in zip(heads, tails)]
        elif pad and items:
            width = max(map(len, items))
            items = [s.rjust(width) for s in items]

        def build(flat, shape, depth):
            if len(shape) == 1:
                return "[" + sep.join(flat) + "]"
            step = len(flat) // shape[0] if shape[0] else 0
            rows = [build(flat[i * step:(i + 1) * step], shape[1:], depth + 1) for i in range(shape[0])]
            return "[" + (sep.rstrip() + "\n" + " " * (depth + 1)).join(rows) + "]"
        return build(items, self.shape, 0)

    def __str__(self):
        return self._text()

    def __repr__(self):   # NumPy 的 repr 把 0 维的 2.0 写成 2.，str 写成 2.0
        body = (short_float(self.data[0]) if self.dtype == "float32" and not self.shape
                else self._text(", ").replace("\n", "\n      "))
        weak = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={self.dtype}{weak})"


def asarray(x, dtype=None) -> Array:
    """A Python number, bool, (nested) list or Array as an Array; Python scalars are weakly typed."""
    if isinstance(x, Array):
        return x if dtype is None or dtype == x.dtype else Array(x.data, x.shape, dtype)
    if isinstance(x, (bool, int, float)):
        own, weak = dtypes.of_python(x)
        return Array([x], (), dtype or own, weak_type=weak and dtype is None)
    if isinstance(x, (list, tuple)):
        def shape_of(v):
            if isinstance(v, Array):
                return v.shape
            return (len(v),) + (shape_of(v[0]) if v else ()) if isinstance(v, (list, tuple)) else ()

        def flat(v):
            if isinstance(v, Array):
                return list(v.data)
            return [e for item in v for e in flat(item)] if isinstance(v, (list, tuple)) else [v]
        shape, items = shape_of(x), flat(x)
        if len(items) != size(shape):
            raise ValueError(f"嵌套列表的长度不整齐，拼不成数组：{x!r}")
        return Array(items, shape, dtype or dtypes.of_list(items))
    raise TypeError(f"迷你 JAX 不认识这种值：{type(x).__name__}（只接受数、列表和 Array）")
