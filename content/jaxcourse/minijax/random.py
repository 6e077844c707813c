"""threefry2x32 伪随机数：key、split、fold_in、bits、uniform，和 jax.random 逐位相同。

JAX 的 key 就是两个 uint32。生成随机数不改 key，而是用 threefry2x32（一个由 key 决定、把计数器
打乱成随机位的函数）：split 和 bits 都是“把 0, 1, 2, … 这些计数器加密”，所以同一个 key 永远给同样的数，
拆开的子 key 之间互不相关。下面按 JAX 0.12 的默认实现（jax_threefry_partitionable=True）写。
"""

from __future__ import annotations

import struct

from .array import Array, f32
from .errors import no_options, unsupported

MASK = 0xFFFFFFFF


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & MASK


def threefry2x32(key, count):
    """Encrypt the 2×32-bit counter `count` with the 2×32-bit `key`: 20 rounds of add–rotate–xor."""
    k0, k1 = key
    ks = [k0, k1, k0 ^ k1 ^ 0x1BD11BDA]
    x = [(count[0] + ks[0]) & MASK, (count[1] + ks[1]) & MASK]
    rotations = [(13, 15, 26, 6), (17, 29, 16, 24)]
    for i in range(5):
        for r in rotations[i % 2]:
            x[0] = (x[0] + x[1]) & MASK
            x[1] = _rotl(x[1], r) ^ x[0]
        x[0] = (x[0] + ks[(i + 1) % 3]) & MASK
        x[1] = (x[1] + ks[(i + 2) % 3] + i + 1) & MASK
    return x[0], x[1]


class Key:
    """A typed key array (jax.random.key: shape (); split: shape (n,)): each key is two uint32 words."""

    dtype = "key<fry>"

    def __init__(self, words, shape=()):
        self.shape = tuple(shape)
        self.pairs = [tuple(int(w) & MASK for w in p) for p in (words if self.shape else [words])]

    words = property(lambda self: self._scalar("key_data").pairs[0])
    ndim = property(lambda self: len(self.shape))

    def _scalar(self, name) -> "Key":
        if self.shape != ():
            raise ValueError(f"{name} accepts a single key, but was given a key array of shape {self.shape} != (). "
                             "Use jax.vmap for batching.（先取出一个 key：keys[0]）")
        return self

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, i):
        if not self.shape:
            raise TypeError("Too many indices: 0-dimensional key array indexed with 1 index.")
        if isinstance(i, slice):
            kept = self.pairs[i]
            return Key(kept, (len(kept),))
        n = self.shape[0]
        return Key(self.pairs[min(max(i + n if i < 0 else i, 0), n - 1)])   # 越界和 JAX 一样取到两端

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{key_data(self)}"

    def __eq__(self, other):
        """Like JAX: an array of bools (a single key gives a 0-d one, usable in `if`)."""
        if not isinstance(other, Key) or other.shape != self.shape:
            return NotImplemented
        same = [a == b for a, b in zip(self.pairs, other.pairs)]
        return Array(same, self.shape, "bool")

    __hash__ = object.__hash__


def key(seed: int) -> Key:
    """jax.random.key(seed): the words (0, seed mod 2**32) — without x64, JAX keeps only 32 bits of the seed."""
    return Key((0, int(seed) & MASK))


def key_data(k: Key) -> Array:
    """The uint32 words under the keys: shape k.shape + (2,)."""
    return Array([w for p in k.pairs for w in p], k.shape + (2,), "uint32")


def _counters(n):
    return [(i >> 32, i & MASK) for i in range(n)]   # 计数器 i 拆成高 32 位、低 32 位


def split(k: Key, num: int = 2) -> Key:
    """A key array of `num` child keys: key i is threefry2x32(k, counter i)."""
    words = k._scalar("split").words
    return Key([threefry2x32(words, c) for c in _counters(num)], (num,))


def fold_in(k: Key, data: int) -> Key:
    """A new key derived from k and an integer (a step number, a device index...)."""
    return Key(threefry2x32(k._scalar("fold_in").words, (0, int(data) & MASK)))


def _key_words(k, name):
    if not isinstance(k, Key):
        raise unsupported(f"{name} 的这种 key（{type(k).__name__}）",
                          "迷你 JAX 只认 random.key(seed) 造出的 key，没有旧式的 PRNGKey（uint32[2] 数组）")
    return k._scalar(name).words


def bits(k: Key, shape=(), **options) -> Array:
    """uint32 random bits: element i is the xor of the two words of threefry2x32(k, counter i)."""
    no_options("jax.random.bits", options)
    words = _key_words(k, "bits")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = 1
    for d in shape:
        n *= d
    return Array([a ^ b for a, b in (threefry2x32(words, c) for c in _counters(n))], shape, "uint32")


def uniform(k: Key, shape=(), minval=0.0, maxval=1.0, fma: bool = True, **options) -> Array:
    """float32 in [minval, maxval): 23 random bits become the mantissa of a float in [1, 2), minus 1.

    Then `v * span + lo`. On a CPU with FMA (x86 since 2013, every ARM64) XLA fuses the multiply-add into
    one rounding; without FMA (XLA held to AVX or older) it rounds the product first: fma=False.
    """
    no_options("jax.random.uniform", options)
    _key_words(k, "uniform")
    b = bits(k, shape)
    floats = [struct.unpack("<f", struct.pack("<I", (x >> 9) | 0x3F800000))[0] - 1.0 for x in b.data]
    lo, span = f32(minval), f32(f32(maxval) - f32(minval))
    # 一次舍入：在双精度里算完再舍入（乘积在双精度里是精确的）；两次舍入：先把乘积舍入成 float32
    return Array([max(lo, f32(v * span + lo) if fma else f32(f32(v * span) + lo)) for v in floats], b.shape, "float32")


def __getattr__(name):   # jax.random 里有、迷你 JAX 里没有的（normal、PRNGKey……）：说清楚缺的是什么
    if name.startswith("_"):
        raise AttributeError(name)
    raise unsupported(f"jax.random.{name}", "迷你 JAX 的 random 只有 key、key_data、split、fold_in、bits、uniform")
