"""vmap：批处理变换，以及在“模拟设备”上的集合通信（psum、all_gather、ppermute、axis_index）。

一层 BatchTrace，每个追踪器带着（值, 批维度）；批维度总放在第 0 维（或没有：None）。
原语的批处理规则把“对每个样本做一次”改写成“对整批做一次”——不是 Python 循环。

集合通信的道理和 JAX 的 vmap 一样：给 vmap 起一个轴名（axis_name），批维度上的每一份就是一台
“设备”上的数据；psum 把这一维求和、再发给每一份。pmap 在这里就是带轴名的 vmap。
"""

from __future__ import annotations

from .core import Primitive, Trace, Tracer, batch_rules, bind, get_aval, new_main, shape_rules
from .prims import batched, index, move_to_front, reduce_sum, stack, transpose, zeros
from .array import Array
from .errors import no_options
from .tree import tree_flatten, tree_unflatten


class BatchTracer(Tracer):
    def __init__(self, trace, val, bdim):
        self._trace, self.val, self.bdim = trace, val, bdim

    @property
    def aval(self):
        a = get_aval(self.val)
        if self.bdim is None:
            return a
        return type(a)(a.shape[1:], a.dtype, a.weak_type)

    def __repr__(self):
        return f"VmapTracer(aval={self.aval.long()}, batched={get_aval(self.val).long()})"


class BatchTrace(Trace):
    axis = property(lambda self: self.main.global_data)   # （批大小，轴名）

    def pure(self, val):
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        vals, dims = [t.val for t in tracers], [t.bdim for t in tracers]
        if prim in COLLECTIVES and params["axis_name"] != self.axis[1]:   # 别的轴的集合通信：交给外层
            out = bind(prim, *vals, **params)[0]
            if dims[0] is not None and prim is all_gather_p:    # 新加的一维在最前面，本层的批维度挪到了第 1 维
                out = move_to_front(out, 1)
            return [BatchTracer(self, out, dims[0])]
        if all(d is None for d in dims) and prim not in COLLECTIVES:
            outs = bind(prim, *vals, **params)      # 没有一个输入带批维度：照常计算，结果也不带
            out_dims = [None] * len(outs)
        else:
            if prim not in batch_rules:
                raise NotImplementedError(f"迷你 JAX 没有 {prim} 的批处理规则")
            outs, out_dims = batch_rules[prim](self.axis, vals, dims, **params)
        return [BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]


def _axis_spec(spec, n):
    return list(spec) if isinstance(spec, (list, tuple)) else [spec] * n


def vmap(f, in_axes=0, out_axes=0, axis_name=None, axis_size=None, **options):
    """Vectorize f over an axis of its arguments: in_axes / out_axes per argument / output (None = not batched)."""
    no_options("jax.vmap", options)
    def wrapped(*args):
        leaves, tree = tree_flatten(args)
        specs = _expand(in_axes, args)
        for x, a in zip(leaves, specs):
            nd = get_aval(x).ndim
            if a is not None and not -nd <= a < nd:
                raise ValueError(f"vmap was requested to map its argument along axis {a}, which implies that its rank "
                                 f"should be at least {a + 1 if a >= 0 else -a}, but is only {nd} (its shape is "
                                 f"{get_aval(x).shape})（in_axes 超出了参数的维数）")
        sizes = {get_aval(x).shape[a] for x, a in zip(leaves, specs) if a is not None}
        if len(sizes) > 1:
            raise ValueError(f"vmap 的各个输入在映射轴上的长度不一样：{sorted(sizes)}")
        n = sizes.pop() if sizes else axis_size
        with new_main(BatchTrace, (n, axis_name)) as main:
            trace = BatchTrace(main)
            ins = [BatchTracer(trace, move_to_front(x, a), None if a is None else 0) if a is not None
                   else trace.pure(x) for x, a in zip(leaves, specs)]
            out = f(*tree_unflatten(tree, ins))
            outs, out_tree = tree_flatten(out)
            outs = [trace.full_raise(o) for o in outs]
            result = []
            for o, a in zip(outs, _axis_spec(out_axes, len(outs))):
                v = batched(o.val, o.bdim, n) if a is not None else _unbatched(o)
                if a not in (None, 0):
                    nd = get_aval(v).ndim
                    a = a % nd
                    v = transpose(v, list(range(1, a + 1)) + [0] + list(range(a + 1, nd)))   # 第 0 维挪到 a
                result.append(v)
        return tree_unflatten(out_tree, result)
    return wrapped


def _unbatched(tracer):
    if tracer.bdim is not None:
        raise ValueError("out_axes=None 要求这个输出在批维度上不变，但它随批次变化")
    return tracer.val


def _expand(in_axes, args):
    """in_axes as one entry per leaf of args: an int or None applies to everything below it (a tree prefix)."""
    if not isinstance(in_axes, (list, tuple)):
        in_axes = [in_axes] * len(args)
    if len(in_axes) != len(args):
        raise ValueError(f"vmap in_axes 有 {len(in_axes)} 项，函数却收到 {len(args)} 个参数")
    return [a for spec, arg in zip(in_axes, args) for a in _prefix(spec, arg)]


def _prefix(spec, arg):
    if spec is None or isinstance(spec, int):
        return [spec] * len(tree_flatten(arg)[0])
    if isinstance(spec, (list, tuple)) and isinstance(arg, (list, tuple)) and len(spec) == len(arg):
        return [a for s, x in zip(spec, arg) for a in _prefix(s, x)]
    if isinstance(spec, dict) and isinstance(arg, dict) and sorted(spec) == sorted(arg):
        return [a for k in sorted(arg) for a in _prefix(spec[k], arg[k])]
    raise ValueError(f"vmap in_axes must be a tree prefix of the arguments（in_axes 的结构要和参数对得上）：{spec!r}")


def pmap(f, axis_name, in_axes=0, out_axes=0):
    """Simulated devices: f runs once per slice of the leading axis, each slice a 'device' named axis_name."""
    return vmap(f, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)


# ---- 集合通信 ----
psum_p, all_gather_p, ppermute_p, axis_index_p = (Primitive("psum"), Primitive("all_gather"),
                                                   Primitive("ppermute"), Primitive("axis_index"))
COLLECTIVES = {psum_p, all_gather_p, ppermute_p, axis_index_p}


def _check(axis, axis_name):
    if axis[1] != axis_name:
        raise NameError(f"unbound axis name: {axis_name}（最内层的 vmap 的轴名是 {axis[1]}）")


def _psum_batch(axis, vals, dims, axis_name):
    _check(axis, axis_name)
    x = batched(vals[0], dims[0], axis[0])
    return [reduce_sum(x, [0])], [None]            # 每台设备拿到同一个和：结果不随设备变化


def _all_gather_batch(axis, vals, dims, axis_name):
    _check(axis, axis_name)
    return [batched(vals[0], dims[0], axis[0])], [None]     # 每台设备都拿到全部


def _ppermute_batch(axis, vals, dims, axis_name, perm):
    _check(axis, axis_name)
    x = batched(vals[0], dims[0], axis[0])
    src = {d: s for s, d in perm}
    z = zeros(get_aval(index(x, 0)))
    return [stack([index(x, src[d]) if d in src else z for d in range(axis[0])])], [0]  # 没人发来的设备得到 0


def _axis_index_batch(axis, vals, dims, axis_name):
    _check(axis, axis_name)
    return [Array(range(axis[0]), (axis[0],), "int32")], [0]


batch_rules.update({psum_p: _psum_batch, all_gather_p: _all_gather_batch, ppermute_p: _ppermute_batch,
                    axis_index_p: _axis_index_batch})
shape_rules[psum_p] = shape_rules[ppermute_p] = lambda a, **p: [a]


def _collective(prim, *args, **params):
    """Bind a collective at the vmap/pmap level that owns its axis name (JAX keeps an axis environment)."""
    from .core import trace_stack
    name = params["axis_name"]
    main = next((m for m in reversed(trace_stack) if m.trace_type is BatchTrace and m.global_data[1] == name), None)
    if main is None:
        raise NameError(f"unbound axis name: {name}（{prim} 只能在起了这个轴名的 vmap/pmap 里用）")
    if any(isinstance(a, Tracer) and a._trace.main.level > main.level for a in args):
        return bind(prim, *args, **params)[0]   # 值来自更内层的 vmap：内层逐层转交（见 BatchTrace）
    trace = BatchTrace(main)
    return trace.process_primitive(prim, [trace.full_raise(a) for a in args], params)[0]


def psum(x, axis_name):
    """Sum over the devices of axis_name; every device gets the same total."""
    return _collective(psum_p, x, axis_name=axis_name)


def all_gather(x, axis_name):
    """Every device gets the values of all devices, stacked along a new leading axis."""
    return _collective(all_gather_p, x, axis_name=axis_name)


def ppermute(x, axis_name, perm):
    """Send x along the (source, destination) pairs of perm; a device nobody sends to gets zeros."""
    return _collective(ppermute_p, x, axis_name=axis_name, perm=tuple(map(tuple, perm)))


def axis_index(axis_name):
    """This device's position along axis_name (0, 1, ...)."""
    return _collective(axis_index_p, axis_name=axis_name)
