"""迷你 JAX 的原语和它们的规则：每个原语一小段，五条规则放在一起读。

- impl：在具体的 Array 上真的算出来
- shape：只看形状和 dtype（make_jaxpr、jit 追踪时用）
- jvp：前向模式，给出输出的切向量（tangent）
- vjp：反向模式，把输出的余切向量（cotangent）传回每个输入（不可导的输入给 None）
- batch：批处理规则，vmap 用；批维度要么在第 0 维（0），要么没有（None）

规则里的运算都通过 bind 完成，所以规则本身也能再被别的变换追踪：grad 套 grad、vmap 套 grad 都是这样来的。
"""

from __future__ import annotations

import math
import operator

from .array import Array, asarray, broadcast_shapes, cast, f32, indices, strides
from .core import (Primitive, ShapedArray, batch_rules, get_aval, impl_rules, jvp_rules, shape_rules,
                   vjp_rules)
from .dtypes import FLOAT, check_accepts, lax_result


def full(shape, value, dtype=FLOAT, weak_type=False) -> object:
    """A constant array (strongly typed unless asked): a broadcast of one scalar (as JAX writes it in a jaxpr)."""
    scalar = Array([value], (), dtype, weak_type)
    return scalar if tuple(shape) == () else broadcast_in_dim(scalar, shape, ())


def zeros(aval) -> object:
    """Zeros of an aval; an array is a broadcast of the scalar 0 (as JAX writes it in a jaxpr)."""
    zero = Array([0], (), aval.dtype, aval.weak_type)
    return zero if aval.shape == () else broadcast_in_dim(zero, aval.shape, ())


def _batch_elementwise(prim):
    """vmap of an elementwise primitive: batch dimensions sit at 0, so a batched operand of lower rank gets
    1s right after it (then ordinary broadcasting lines everything up); one call does the whole batch."""
    def rule(axis, vals, dims, **params):
        rank = max(get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims))
        new = []
        for v, d in zip(vals, dims):
            shape = get_aval(v).shape
            if d is not None and len(shape) - 1 < rank:
                v = reshape(v, shape[:1] + (1,) * (rank - len(shape) + 1) + shape[1:])
            new.append(v)
        return [bind1(prim, *new, **params)], [0]
    return rule


# ---- 逐元素的原语 ----
def _elementwise(name, fn, out_dtype=None):
    """A primitive applying fn to each element; operands broadcast, their dtypes checked as lax does."""
    prim = Primitive(name)

    def operand_dtype(avals):
        dtype, weak = lax_result(name, avals)
        check_accepts(name, dtype)
        return dtype, weak

    def shape_rule(*avals, **params):
        dtype, weak = operand_dtype(avals)
        shape = broadcast_shapes(*(a.shape for a in avals), name=name)
        return [ShapedArray(shape, out_dtype or dtype, weak and out_dtype is None)]

    def impl(*xs, **params):
        xs = [asarray(x) for x in xs]
        dtype, _ = operand_dtype([get_aval(x) for x in xs])
        (out,) = shape_rule(*(get_aval(x) for x in xs), **params)
        cols = [x.broadcast_to(out.shape) if x.dtype == dtype else [cast(v, dtype) for v in x.broadcast_to(out.shape)]
                for x in xs]      # 弱类型的 Python 标量先变成操作数的 dtype（比如 1 → 1.0）
        data = [fn(*vals, **params) for vals in zip(*cols)]
        return [Array(data, out.shape, out.dtype, out.weak_type)]

    impl_rules[prim], shape_rules[prim], batch_rules[prim] = impl, shape_rule, _batch_elementwise(prim)
    return prim


def _safe(fn):
    def wrapped(*xs):
        try:
            return f32(fn(*xs))
        except (ValueError, ZeroDivisionError):    # 像 IEEE 浮点：log(0) = -inf，0/0 = nan
            return _ieee(fn, *xs)
        except OverflowError:
            return math.inf
    return wrapped


def _ieee(fn, *xs):
    if fn is math.log:
        return -math.inf if xs[0] == 0 else math.nan
    if fn is operator.truediv:
        x, y = xs
        return math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1, y)
    if fn is math.pow:                                   # 0 的负数次幂是 inf，负数的非整数次幂是 nan
        return math.inf if xs[0] == 0 else math.nan
    return math.nan


def _div(x, y):
    if isinstance(x, int) and isinstance(y, int):     # 整数除法按 C 的规则向零取整
        return int(x / y) if y else 0
    return _safe(operator.truediv)(x, y)


def _arith(op):
    def fn(x, y):
        r = op(x, y)
        return f32(r) if isinstance(r, float) else r
    return fn


add_p = _elementwise("add", _arith(operator.add))
add_any_p = _elementwise("add_any", _arith(operator.add))   # 反向模式里累加余切向量用的加法
sub_p = _elementwise("sub", _arith(operator.sub))
mul_p = _elementwise("mul", _arith(operator.mul))
div_p = _elementwise("div", _div)
max_p = _elementwise("max", lambda x, y: x if (x >= y or math.isnan(x)) else y)
min_p = _elementwise("min", lambda x, y: x if (x <= y or math.isnan(x)) else y)
neg_p = _elementwise("neg", lambda x: -x)
sin_p = _elementwise("sin", _safe(math.sin))
cos_p = _elementwise("cos", _safe(math.cos))
exp_p = _elementwise("exp", _safe(math.exp))
log_p = _elementwise("log", _safe(math.log))
tanh_p = _elementwise("tanh", _safe(math.tanh))
sqrt_p = _elementwise("sqrt", _safe(math.sqrt))
pow_p = _elementwise("pow", _safe(math.pow))                 # x ** y，y 不是 Python 整数时
integer_pow_p = _elementwise("integer_pow", lambda x, y: f32(x ** y) if isinstance(x, float) else x ** y)
gt_p = _elementwise("gt", operator.gt, "bool")
lt_p = _elementwise("lt", operator.lt, "bool")
ge_p = _elementwise("ge", operator.ge, "bool")
le_p = _elementwise("le", operator.le, "bool")
eq_p = _elementwise("eq", operator.eq, "bool")
ne_p = _elementwise("ne", operator.ne, "bool")
select_n_p = _elementwise("select_n", lambda which, *cases: cases[int(which)])


def _select_shape(which, *cases):
    shape = broadcast_shapes(which.shape, *(c.shape for c in cases), name="select_n")
    return [ShapedArray(shape, *lax_result("select_n", cases))]


def _select_impl(which, *cases):
    which, cases = asarray(which), [asarray(c) for c in cases]
    (out,) = _select_shape(get_aval(which), *map(get_aval, cases))
    cols = [which.broadcast_to(out.shape)] + [c.broadcast_to(out.shape) for c in cases]
    return [Array([vals[1 + int(vals[0])] for vals in zip(*cols)], out.shape, out.dtype, out.weak_type)]


shape_rules[select_n_p], impl_rules[select_n_p] = _select_shape, _select_impl

stop_gradient_p = Primitive("stop_gradient")   # 值不变；导数在这里被截断
convert_element_type_p = Primitive("convert_element_type")


def _identity_impl(x):
    return [asarray(x)]


def _identity_shape(a):
    return [a]


def _convert_impl(x, new_dtype, weak_type=False):
    x = asarray(x)
    return [Array(x.data, x.shape, new_dtype, weak_type)]


def _convert_shape(a, new_dtype, weak_type=False):
    return [ShapedArray(a.shape, new_dtype, weak_type)]


impl_rules[stop_gradient_p], shape_rules[stop_gradient_p] = _identity_impl, _identity_shape
impl_rules[convert_element_type_p], shape_rules[convert_element_type_p] = _convert_impl, _convert_shape


def bind1(prim, *args, **params):
    """Bind a primitive with one result."""
    return prim.bind(*args, **params)


# 规则里用的小函数：每个就是 bind 一个原语
def add(x, y): return bind1(add_p, x, y)                      # noqa: E704
def add_any(x, y): return bind1(add_any_p, x, y)              # noqa: E704
def sub(x, y): return bind1(sub_p, x, y)                      # noqa: E704
def mul(x, y): return bind1(mul_p, x, y)                      # noqa: E704
def div(x, y): return bind1(div_p, x, y)                      # noqa: E704
def neg(x): return bind1(neg_p, x)                            # noqa: E704
def sin(x): return bind1(sin_p, x)                            # noqa: E704
def cos(x): return bind1(cos_p, x)                            # noqa: E704
def exp(x): return bind1(exp_p, x)                            # noqa: E704
def log(x): return bind1(log_p, x)                            # noqa: E704
def tanh(x): return bind1(tanh_p, x)                          # noqa: E704
def sqrt(x): return bind1(sqrt_p, x)                          # noqa: E704
def gt(x, y): return bind1(gt_p, x, y)                        # noqa: E704
def lt(x, y): return bind1(lt_p, x, y)                        # noqa: E704
def eq(x, y): return bind1(eq_p, x, y)                        # noqa: E704
def ne(x, y): return bind1(ne_p, x, y)                        # noqa: E704
def integer_pow(x, y): return bind1(integer_pow_p, x, y=y)    # noqa: E704
def pow(x, y): return bind1(pow_p, x, y)                      # noqa: E704,A001
def select_n(which, *cases): return bind1(select_n_p, which, *cases)   # noqa: E704
def stop_gradient(x): return bind1(stop_gradient_p, x)        # noqa: E704


def convert_element_type(x, dtype, weak_type=False):
    return bind1(convert_element_type_p, x, new_dtype=dtype, weak_type=weak_type)


# ---- 形状类原语 ----
reduce_sum_p, reduce_max_p = Primitive("reduce_sum"), Primitive("reduce_max")
broadcast_in_dim_p, reshape_p, transpose_p = Primitive("broadcast_in_dim"), Primitive("reshape"), Primitive("transpose")
dot_general_p = Primitive("dot_general")
index_p, stack_p = Primitive("index"), Primitive("stack")   # 取第 i 片 / 叠起来（scan 用）


def _reduce(fn):
    def impl(x, axes):
        x = asarray(x)
        keep = [d for d in range(x.ndim) if d not in axes]
        out_shape = tuple(x.shape[d] for d in keep)
        groups = {}
        for idx, v in zip(indices(x.shape), x.data):
            groups.setdefault(tuple(idx[d] for d in keep), []).append(v)
        data = [fn(groups[idx]) for idx in indices(out_shape)]
        return [Array(data, out_shape, x.dtype, x.weak_type)]
    return impl


def _reduce_shape(a, axes):
    return [ShapedArray([n for d, n in enumerate(a.shape) if d not in axes], a.dtype, a.weak_type)]


def _fsum(vals):
    if vals and isinstance(vals[0], float):
        acc = 0.0
        for v in vals:       # 逐个累加并舍入到 float32，像一个简单的设备实现
            acc = f32(acc + v)
        return acc
    return sum(vals)


impl_rules[reduce_sum_p], impl_rules[reduce_max_p] = _reduce(_fsum), _reduce(max)
shape_rules[reduce_sum_p] = shape_rules[reduce_max_p] = _reduce_shape


def _bcast_impl(x, shape, broadcast_dimensions):
    x = asarray(x)
    data = [x.at(tuple(idx[d] if x.shape[i] != 1 else 0 for i, d in enumerate(broadcast_dimensions)))
            for idx in indices(shape)]
    return [Array(data, shape, x.dtype, x.weak_type)]


def _bcast_shape(a, shape, broadcast_dimensions):
    return [ShapedArray(shape, a.dtype, a.weak_type)]


def _reshape_impl(x, new_sizes):
    x = asarray(x)
    return [Array(x.data, new_sizes, x.dtype, x.weak_type)]


def _reshape_shape(a, new_sizes):
    return [ShapedArray(new_sizes, a.dtype, a.weak_type)]


impl_rules[broadcast_in_dim_p], shape_rules[broadcast_in_dim_p] = _bcast_impl, _bcast_shape
impl_rules[reshape_p], shape_rules[reshape_p] = _reshape_impl, _reshape_shape


def _transpose_impl(x, permutation):
    x = asarray(x)
    shape = tuple(x.shape[p] for p in permutation)
    st = strides(x.shape)
    data = [x.data[sum(i * st[p] for i, p in zip(idx, permutation))] for idx in indices(shape)]
    return [Array(data, shape, x.dtype, x.weak_type)]


def _transpose_shape(a, permutation):
    return [ShapedArray([a.shape[p] for p in permutation], a.dtype, a.weak_type)]


impl_rules[transpose_p], shape_rules[transpose_p] = _transpose_impl, _transpose_shape


def _dot_dims(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if [lhs.shape[d] for d in lc] != [rhs.shape[d] for d in rc]:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, got "
                        f"{tuple(lhs.shape[d] for d in lc)} and {tuple(rhs.shape[d] for d in rc)}.")
    lfree = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    shape = tuple([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lfree] + [rhs.shape[d] for d in rfree])
    return lfree, rfree, shape


def _dot_impl(lhs, rhs, dimension_numbers, preferred_element_type=None):
    lhs, rhs = asarray(lhs), asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lfree, rfree, shape = _dot_dims(lhs, rhs, dimension_numbers)
    dtype, weak = lax_result("dot_general", [get_aval(lhs), get_aval(rhs)])
    data = []
    for idx in indices(shape):
        b, lf, rf = idx[:len(lb)], idx[len(lb):len(lb) + len(lfree)], idx[len(lb) + len(lfree):]
        terms = []
        for k in indices([lhs.shape[d] for d in lc]):
            li, ri = [0] * lhs.ndim, [0] * rhs.ndim
            for dims, vals, target in ((lb, b, li), (rb, b, ri), (lfree, lf, li), (rfree, rf, ri),
                                       (lc, k, li), (rc, k, ri)):
                for d, v in zip(dims, vals):
                    target[d] = v
            terms.append(lhs.at(li) * rhs.at(ri))
        data.append(_fsum([cast(t, dtype) for t in terms]) if terms else cast(0, dtype))
    return [Array(data, shape, dtype, weak)]


def _dot_shape(lhs, rhs, dimension_numbers, preferred_element_type=None):
    return [ShapedArray(_dot_dims(lhs, rhs, dimension_numbers)[2], *lax_result("dot_general", [lhs, rhs]))]


impl_rules[dot_general_p], shape_rules[dot_general_p] = _dot_impl, _dot_shape


def _index_impl(x, axis, i):
    x = asarray(x)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    data = [x.at(idx[:axis] + (i,) + idx[axis:]) for idx in indices(shape)]
    return [Array(data, shape, x.dtype, x.weak_type)]


def _index_shape(a, axis, i):
    return [ShapedArray(a.shape[:axis] + a.shape[axis + 1:], a.dtype, a.weak_type)]


def _stack_shape(*avals, axis):
    if len({a.shape for a in avals}) > 1:
        raise ValueError("All input arrays must have the same shape.（stack 的数组形状要相同）")
    return [ShapedArray(avals[0].shape[:axis] + (len(avals),) + avals[0].shape[axis:], *lax_result("stack", avals))]


def _stack_impl(*xs, axis):
    xs = [asarray(x) for x in xs]
    (out,) = _stack_shape(*map(get_aval, xs), axis=axis)
    data = [xs[idx[axis]].at(idx[:axis] + idx[axis + 1:]) for idx in indices(out.shape)]
    return [Array(data, out.shape, out.dtype, out.weak_type)]


impl_rules[index_p], shape_rules[index_p] = _index_impl, _index_shape
impl_rules[stack_p], shape_rules[stack_p] = _stack_impl, _stack_shape


def reduce_sum(x, axes): return bind1(reduce_sum_p, x, axes=tuple(axes))          # noqa: E704
def reduce_max(x, axes): return bind1(reduce_max_p, x, axes=tuple(axes))          # noqa: E704
def reshape(x, shape): return bind1(reshape_p, x, new_sizes=tuple(shape))         # noqa: E704
def transpose(x, perm): return bind1(transpose_p, x, permutation=tuple(perm))     # noqa: E704
def dot_general(lhs, rhs, dims): return bind1(dot_general_p, lhs, rhs, dimension_numbers=dims)   # noqa: E704
def index(x, i, axis=0): return bind1(index_p, x, axis=axis, i=i)                 # noqa: E704
def stack(xs, axis=0): return bind1(stack_p, *xs, axis=axis)                      # noqa: E704


def broadcast_in_dim(x, shape, dims):
    return bind1(broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=tuple(dims))


def unbroadcast(ct, shape):
    """Sum a cotangent back down to `shape` (the reverse of NumPy broadcasting)."""
    shape = tuple(shape)
    cshape = get_aval(ct).shape
    if cshape == shape:
        return ct
    lead = len(cshape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and cshape[lead + i] != 1]
    return reshape(reduce_sum(ct, axes), shape) if axes else reshape(ct, shape)


# ---- 前向模式（jvp）规则：（原始值，切向量）→（输出，输出的切向量）----
def _linear(prim):
    """A linear primitive's tangent goes through the same primitive (add, reshape, reduce_sum ...)."""
    def rule(primals, tangents, **params):
        return [bind1(prim, *primals, **params)], [bind1(prim, *tangents, **params)]
    jvp_rules[prim] = rule


for _p in (add_p, add_any_p, sub_p, neg_p, reduce_sum_p, broadcast_in_dim_p, reshape_p, transpose_p, index_p, stack_p):
    _linear(_p)


def _mul_jvp(p, t):
    return [mul(*p)], [add(mul(t[0], p[1]), mul(p[0], t[1]))]


def _div_jvp(p, t):   # d(x/y) = dx/y - x/y² dy
    return [div(*p)], [sub(div(t[0], p[1]), mul(div(p[0], mul(p[1], p[1])), t[1]))]


def _unary_jvp(fn, deriv):
    """y = fn(x), dy = dx · deriv(x, y): the derivative may reuse the output (exp, tanh, sqrt)."""
    def rule(p, t):
        y = fn(p[0])
        return [y], [mul(t[0], deriv(p[0], y))]
    return rule


jvp_rules[mul_p], jvp_rules[div_p] = _mul_jvp, _div_jvp
jvp_rules[sin_p] = _unary_jvp(sin, lambda x, y: cos(x))
jvp_rules[cos_p] = _unary_jvp(cos, lambda x, y: neg(sin(x)))
jvp_rules[exp_p] = _unary_jvp(exp, lambda x, y: y)
jvp_rules[tanh_p] = _unary_jvp(tanh, lambda x, y: sub(1.0, mul(y, y)))
jvp_rules[sqrt_p] = _unary_jvp(sqrt, lambda x, y: div(0.5, y))


def _log_jvp(p, t):
    return [log(p[0])], [div(t[0], p[0])]


def _pow_deriv(x, y):
    """d/dx x**y as JAX writes it: y * x**(y-1), with x itself when y == 2."""
    if y == 0:
        return zeros(get_aval(x))
    return mul(float(y), x if y == 2 else integer_pow(x, y - 1))


def _integer_pow_jvp(p, t, y):
    return [integer_pow(p[0], y)], [mul(t[0], _pow_deriv(p[0], y))]


jvp_rules[log_p], jvp_rules[integer_pow_p] = _log_jvp, _integer_pow_jvp


def _pow_factors(x, y, ans):
    """∂(x**y)/∂x = y·x**(y-1); ∂/∂y = log(x)·x**y, with log(0) kept finite (JAX replaces x = 0 by 1 there)."""
    a = get_aval(x)
    safe_x = select_n(eq(x, 0.0), x, full(a.shape, 1.0, weak_type=a.weak_type))
    strong_x = convert_element_type(x, FLOAT) if get_aval(x).weak_type else x    # JAX 在这里把 x 转成强类型
    return mul(y, pow(strong_x, sub(y, 1.0))), mul(log(safe_x), ans)


def _pow_jvp(p, t):
    ans = pow(*p)
    fx, fy = _pow_factors(*p, ans)
    return [ans], [add_any(mul(t[0], fx), mul(t[1], fy))]


jvp_rules[pow_p] = _pow_jvp


def _balanced_cmp(x, y):
    """1.0 where x wins, 0.5 on a tie, 0.0 where it loses: JAX's factor for max/min (strong float32 constants)."""
    wins, tie = gt(x, y), eq(x, y)
    shape = get_aval(wins).shape
    return select_n(wins, select_n(tie, full(shape, 0.0), full(shape, 0.5)), full(shape, 1.0))


def _max_factors(x, y):   # max：x 赢的地方导数跟 x
    return _balanced_cmp(x, y), _balanced_cmp(y, x)


def _min_factors(x, y):   # min：x 小的地方导数跟 x
    return _balanced_cmp(y, x), _balanced_cmp(x, y)


def _choose(prim, factors):
    """max/min: the tangent follows the chosen side; a tie shares it half and half (as JAX)."""
    def rule(p, t):
        fx, fy = factors(*p)
        return [bind1(prim, *p)], [add_any(mul(t[0], fx), mul(t[1], fy))]
    return rule


jvp_rules[max_p], jvp_rules[min_p] = _choose(max_p, _max_factors), _choose(min_p, _min_factors)


def _stop_gradient_jvp(p, t):
    return [stop_gradient(p[0])], [zeros(get_aval(p[0]))]


def _select_jvp(p, t):
    return [select_n(*p)], [select_n(p[0], *t[1:])]


def _convert_jvp(p, t, new_dtype, weak_type=False):
    """A float result carries the tangent over; an integer or bool result has none (zeros)."""
    out = convert_element_type(p[0], new_dtype, weak_type)
    if new_dtype == FLOAT:
        return [out], [convert_element_type(t[0], new_dtype, weak_type)]
    return [out], [zeros(get_aval(out))]


def _comparison_jvp(prim):   # 比较的结果是 bool：没有导数
    def rule(p, t):
        out = bind1(prim, *p)
        return [out], [zeros(get_aval(out))]
    return rule


def _dot_jvp(p, t, **params):
    return [bind1(dot_general_p, *p, **params)], [add(bind1(dot_general_p, t[0], p[1], **params),
                                                      bind1(dot_general_p, p[0], t[1], **params))]


def _argmax_mask(x, y, axes):
    """Where x reaches its maximum y along axes (ties share equally), as float32."""
    shape = get_aval(x).shape
    keep = [d for d in range(len(shape)) if d not in axes]
    hit = convert_element_type(eq(x, broadcast_in_dim(y, shape, keep)), FLOAT)
    return div(hit, broadcast_in_dim(reduce_sum(hit, axes), shape, keep))


def _reduce_max_jvp(p, t, axes):
    y = reduce_max(p[0], axes)
    return [y], [reduce_sum(mul(t[0], _argmax_mask(p[0], y, axes)), axes)]


jvp_rules[stop_gradient_p], jvp_rules[select_n_p] = _stop_gradient_jvp, _select_jvp
jvp_rules[convert_element_type_p], jvp_rules[dot_general_p] = _convert_jvp, _dot_jvp
jvp_rules[reduce_max_p] = _reduce_max_jvp
for _p in (gt_p, lt_p, ge_p, le_p, eq_p, ne_p):
    jvp_rules[_p] = _comparison_jvp(_p)


# ---- 反向模式（vjp）规则：（输出的余切向量，输入值，输出值）→ 每个输入的余切向量 ----
def _shapes(invals):
    return [get_aval(v).shape for v in invals]


def _add_vjp(ct, xs, out):
    return [unbroadcast(ct[0], s) for s in _shapes(xs)]


def _sub_vjp(ct, xs, out):
    sx, sy = _shapes(xs)
    return [unbroadcast(ct[0], sx), unbroadcast(neg(ct[0]), sy)]


def _mul_vjp(ct, xs, out):
    sx, sy = _shapes(xs)
    return [unbroadcast(mul(ct[0], xs[1]), sx), unbroadcast(mul(xs[0], ct[0]), sy)]


def _div_vjp(ct, xs, out):
    sx, sy = _shapes(xs)
    return [unbroadcast(div(ct[0], xs[1]), sx), unbroadcast(neg(mul(ct[0], div(out[0], xs[1]))), sy)]


def _unary_vjp(deriv):
    """x̄ = ȳ · deriv(x, y) for a one-input elementwise primitive."""
    def rule(ct, xs, out, **params):
        return [mul(ct[0], deriv(xs[0], out[0], **params))]
    return rule


vjp_rules[add_p] = vjp_rules[add_any_p] = _add_vjp
vjp_rules[sub_p], vjp_rules[mul_p], vjp_rules[div_p] = _sub_vjp, _mul_vjp, _div_vjp
vjp_rules[sin_p] = _unary_vjp(lambda x, y: cos(x))
vjp_rules[cos_p] = _unary_vjp(lambda x, y: neg(sin(x)))
vjp_rules[exp_p] = _unary_vjp(lambda x, y: y)
vjp_rules[tanh_p] = _unary_vjp(lambda x, y: sub(1.0, mul(y, y)))
vjp_rules[integer_pow_p] = _unary_vjp(lambda x, out, y: _pow_deriv(x, y))


def _neg_vjp(ct, xs, out):
    return [neg(ct[0])]


def _log_vjp(ct, xs, out):
    return [div(ct[0], xs[0])]


def _sqrt_vjp(ct, xs, out):
    return [div(mul(ct[0], 0.5), out[0])]


def _pow_vjp(ct, xs, out):
    (sx, sy), (fx, fy) = _shapes(xs), _pow_factors(*xs, out[0])
    return [unbroadcast(mul(ct[0], fx), sx), unbroadcast(mul(ct[0], fy), sy)]


vjp_rules[neg_p], vjp_rules[log_p], vjp_rules[sqrt_p] = _neg_vjp, _log_vjp, _sqrt_vjp
vjp_rules[pow_p] = _pow_vjp


def _choose_vjp(factors):
    def rule(ct, xs, out):
        (sx, sy), (fx, fy) = _shapes(xs), factors(*xs)
        return [unbroadcast(mul(ct[0], fx), sx), unbroadcast(mul(ct[0], fy), sy)]
    return rule


def _no_vjp(ct, xs, out, **params):   # 比较、stop_gradient：输入拿不到余切向量
    return [None] * len(xs)


vjp_rules[max_p], vjp_rules[min_p] = _choose_vjp(_max_factors), _choose_vjp(_min_factors)
for _p in (gt_p, lt_p, ge_p, le_p, eq_p, ne_p, stop_gradient_p):
    vjp_rules[_p] = _no_vjp


def _select_vjp(ct, xs, out):
    which, cases = xs[0], xs[1:]
    z = zeros(get_aval(ct[0]))
    return [None] + [unbroadcast(select_n(which, *[ct[0] if j == i else z for j in range(len(cases))]),
                                 get_aval(c).shape) for i, c in enumerate(cases)]


def _convert_vjp(ct, xs, out, **params):
    """Back to the input's dtype and weak type; an integer or bool input gets no cotangent."""
    a = get_aval(xs[0])
    return [convert_element_type(ct[0], a.dtype, a.weak_type) if a.dtype == FLOAT else None]


vjp_rules[select_n_p], vjp_rules[convert_element_type_p] = _select_vjp, _convert_vjp


def _reduce_sum_vjp(ct, xs, out, axes):
    shape = get_aval(xs[0]).shape
    return [broadcast_in_dim(ct[0], shape, [d for d in range(len(shape)) if d not in axes])]


def _reduce_max_vjp(ct, xs, out, axes):
    return [mul(_reduce_sum_vjp(ct, xs, out, axes)[0], _argmax_mask(xs[0], out[0], axes))]


def _bcast_vjp(ct, xs, out, shape, broadcast_dimensions):
    in_shape = get_aval(xs[0]).shape
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions] + [
        d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    return [reshape(reduce_sum(ct[0], sorted(summed)), in_shape) if summed else reshape(ct[0], in_shape)]


def _reshape_vjp(ct, xs, out, new_sizes):
    return [reshape(ct[0], get_aval(xs[0]).shape)]


def _transpose_vjp(ct, xs, out, permutation):
    return [transpose(ct[0], [permutation.index(i) for i in range(len(permutation))])]


def _index_vjp(ct, xs, out, axis, i):
    n = get_aval(xs[0]).shape[axis]
    z = zeros(get_aval(ct[0]))
    return [stack([ct[0] if j == i else z for j in range(n)], axis)]


def _stack_vjp(ct, xs, out, axis):
    return [index(ct[0], i, axis) for i in range(len(xs))]


vjp_rules[reduce_sum_p], vjp_rules[reduce_max_p] = _reduce_sum_vjp, _reduce_max_vjp
vjp_rules[broadcast_in_dim_p], vjp_rules[reshape_p], vjp_rules[transpose_p] = _bcast_vjp, _reshape_vjp, _transpose_vjp
vjp_rules[index_p], vjp_rules[stack_p] = _index_vjp, _stack_vjp


def _dot_transpose_lhs(g, x, y, dimension_numbers, swap_ans=False):
    """JAX's own rule (lax._dot_general_transpose_lhs), shortened."""
    (xc, yc), (xb, yb) = dimension_numbers
    xnd, ynd = get_aval(x).ndim, get_aval(y).ndim
    x_kept = [d for d in range(xnd) if d not in xc and d not in xb]
    y_kept = [d for d in range(ynd) if d not in yc and d not in yb]
    nb = len(xb)
    if swap_ans:
        ans_y = list(range(nb, nb + len(y_kept)))
    else:
        ans_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(range(nb)), tuple(yb)))
    xc_by_y = [xc[i] for i in sorted(range(len(yc)), key=lambda i: yc[i])]
    order = list(xb) + x_kept + xc_by_y
    out_axes = sorted(range(len(order)), key=lambda i: order[i])
    return transpose(dot_general(g, y, dims), out_axes)


def _dot_vjp(ct, xs, out, dimension_numbers, preferred_element_type=None):
    x, y = xs
    (xc, yc), (xb, yb) = dimension_numbers
    return [_dot_transpose_lhs(ct[0], x, y, dimension_numbers),
            _dot_transpose_lhs(ct[0], y, x, ((yc, xc), (yb, xb)), swap_ans=True)]


vjp_rules[dot_general_p] = _dot_vjp


# ---- 批处理（vmap）规则：批维度在第 0 维或没有 ----
def move_to_front(x, d):
    if d in (0, None):
        return x
    nd = get_aval(x).ndim
    d %= nd
    return transpose(x, [d] + [i for i in range(nd) if i != d])


def batched(x, d, n):
    """x with a batch dimension of size n at 0 (an unbatched x is broadcast)."""
    if d is not None:
        return move_to_front(x, d)
    shape = get_aval(x).shape
    return broadcast_in_dim(x, (n,) + shape, range(1, len(shape) + 1))


def _shift(prim, key):
    def rule(axis, vals, dims, **p):
        p = dict(p)
        p[key] = tuple(a + 1 for a in p[key])
        return [bind1(prim, vals[0], **p)], [0]
    return rule


batch_rules[reduce_sum_p] = _shift(reduce_sum_p, "axes")
batch_rules[reduce_max_p] = _shift(reduce_max_p, "axes")
def _transpose_batch(axis, vals, dims, permutation):
    return [transpose(vals[0], (0,) + tuple(p + 1 for p in permutation))], [0]


def _reshape_batch(axis, vals, dims, new_sizes):
    return [reshape(vals[0], (axis[0],) + tuple(new_sizes))], [0]


def _bcast_batch(axis, vals, dims, shape, broadcast_dimensions):
    dims_out = (0,) + tuple(d + 1 for d in broadcast_dimensions)
    return [broadcast_in_dim(vals[0], (axis[0],) + tuple(shape), dims_out)], [0]


def _same_batch(prim):   # 逐元素的单输入原语：整批照做一遍，批维度不动
    def rule(axis, vals, dims, **params):
        return [bind1(prim, vals[0], **params)], [0]
    return rule


batch_rules[transpose_p], batch_rules[reshape_p] = _transpose_batch, _reshape_batch
batch_rules[broadcast_in_dim_p] = _bcast_batch
batch_rules[stop_gradient_p] = _same_batch(stop_gradient_p)
batch_rules[convert_element_type_p] = _same_batch(convert_element_type_p)


def _index_batch(size_name, vals, dims, **p):
    return [index(vals[0], p["i"], p["axis"] + 1)], [0]


def _stack_batch(size_name, vals, dims, **p):
    return [stack([batched(v, d, size_name[0]) for v, d in zip(vals, dims)], p["axis"] + 1)], [0]


batch_rules[index_p], batch_rules[stack_p] = _index_batch, _stack_batch


def _dot_batch(axis, vals, dims, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = vals
    up = lambda ds: tuple(d + 1 for d in ds)   # noqa: E731
    if dims[0] is not None and dims[1] is not None:     # 两边都有批维度：它成为 dot_general 的批维度
        out = dot_general(x, y, ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb))))
        return [out], [0]
    if dims[0] is not None:                             # 只有左边：批维度是左边的一个自由维度
        out = dot_general(x, y, ((up(lc), rc), (up(lb), rb)))
        return [move_to_front(out, len(lb))], [0]
    xnd = get_aval(x).ndim
    out = dot_general(x, y, ((lc, up(rc)), (lb, up(rb))))
    return [move_to_front(out, len(lb) + xnd - len(lc) - len(lb))], [0]


batch_rules[dot_general_p] = _dot_batch



