"""控制流原语：cond、while_loop（fori_loop）、scan。

每个分支、循环体先被记成 jaxpr，放进原语的参数里（打印 jaxpr 时能看到嵌套的 { lambda ... }）。
函数闭包里用到的外部值（常数、外层变换的追踪器）改成显式的输入，这叫闭包转换（closure conversion）。
重点看批处理规则：谓词（pred）一旦随批次变化，cond 就把两个分支都算出来再按元素选（select_n），
while_loop 一直循环到批里最慢的那个也结束。
"""

from __future__ import annotations

from .ad import jvp as _jvp, vjp as _vjp
from .batching import vmap
from .array import Array, asarray
from .core import (Jaxpr, Primitive, ShapedArray, Tracer, batch_rules, eval_jaxpr, get_aval, impl_rules, jvp_rules,
                   shape_rules, trace_to_jaxpr, vjp_rules)
from .numpy import not_equal
from .prims import (add_any, batched, convert_element_type, eq, gt, index, reduce_max, select_n, stack,
                    stop_gradient, transpose, zeros)
from .tree import tree_flatten, tree_map, tree_unflatten

cond_p, while_p, scan_p = Primitive("cond", True), Primitive("while", True), Primitive("scan", True)


def trace_closed(flat_fun, avals) -> tuple[Jaxpr, list]:
    """Trace to a jaxpr whose captured values come first among its inputs (closure conversion)."""
    j = trace_to_jaxpr(flat_fun, avals)
    return Jaxpr([], j.constvars + j.invars, j.eqns, j.outs), j.consts


def _flat(fun, in_tree, out_trees):
    def flat(*leaves):
        out, tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_trees.append(tree)
        return out
    return flat


def run(jaxpr, *args):
    return eval_jaxpr(jaxpr, args)


def _pad(jaxpr, before, after):
    """The same jaxpr taking extra unused inputs (so every branch takes the same operands)."""
    from .core import Var
    return Jaxpr([], [Var(a) for a in before] + jaxpr.invars + [Var(a) for a in after], jaxpr.eqns, jaxpr.outs)


# ---- cond ----
def cond(pred, true_fun, false_fun, *operands):
    """Run one branch; under vmap with a batched predicate, both (see _cond_batch)."""
    leaves, in_tree = tree_flatten(operands)
    avals = [get_aval(x) for x in leaves]
    trees = []
    funs = [_flat(f, in_tree, trees) for f in (true_fun, false_fun)]
    (jt, ct), (jf, cf) = (trace_closed(f, avals) for f in funs)
    if trees[0] != trees[1]:
        raise TypeError("cond branches must have equal output types but they differ.（两个分支要返回同样的结构）："
                        f"true_fun 返回 {trees[0]}，false_fun 返回 {trees[1]}")
    targets = _common_types(jt.out_avals, jf.out_avals)
    if jt.out_avals != targets:      # 弱类型的输出（比如 lambda v: 0.0）换成另一支的强类型
        jt, ct = trace_closed(_converted(funs[0], targets), avals)
    if jf.out_avals != targets:
        jf, cf = trace_closed(_converted(funs[1], targets), avals)
    ca, cb = [get_aval(c) for c in cf], [get_aval(c) for c in ct]
    branches = (_pad(jf, [], cb), _pad(jt, ca, []))   # 下标 0 是 false 分支，和 JAX 一样
    outs = cond_p.bind(_branch_index(pred), *cf, *ct, *leaves, branches=branches)
    return tree_unflatten(trees[0], outs)


def _branch_index(pred):
    """The predicate as the branch index 0 / 1: any nonzero number is true (cond(-0.5, ...) takes true_fun)."""
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.（谓词要是一个标量）")
    if aval.dtype != "bool":
        pred = not_equal(pred, 0)
    return convert_element_type(pred, "int32")


def _common_types(a_avals, b_avals):
    """The branches' outputs must have equal shapes and dtypes; only weak types may differ (then strong wins)."""
    out = []
    for a, b in zip(a_avals, b_avals):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError("cond branches must have equal output types but they differ.（两个分支输出的形状和 "
                            f"dtype 要相同）：true_fun 输出 {a.long()}，false_fun 输出 {b.long()}")
        out.append(ShapedArray(a.shape, a.dtype, a.weak_type and b.weak_type))
    return out


def _converted(flat_fun, avals):
    """flat_fun with each weakly typed output made strong (a constant directly, a traced value by conversion)."""
    def fun(*xs):
        outs = []
        for o, a in zip(flat_fun(*xs), avals):
            outs.append(_strong(o, a.dtype) if get_aval(o).weak_type and not a.weak_type else o)
        return outs
    return fun


def _strong(x, dtype):
    """x with a strong dtype: a constant is rewritten (JAX prints it as a literal), a traced value converted."""
    if isinstance(x, Tracer):
        return convert_element_type(x, dtype)
    x = asarray(x)
    return Array(x.data, x.shape, dtype)


impl_rules[cond_p] = lambda which, *args, branches: run(branches[int(which)], *args)
shape_rules[cond_p] = lambda which, *avals, branches: branches[0].out_avals


def _cond_jvp(primals, tangents, branches):
    which, args, targs = primals[0], primals[1:], tangents[1:]
    n = len(args)
    new = tuple(trace_closed(lambda *xs, b=b: _flat_jvp(b, xs[:n], xs[n:]), [get_aval(x) for x in args + targs])[0]
                for b in branches)
    outs = cond_p.bind(which, *args, *targs, branches=new)
    k = len(outs) // 2
    return outs[:k], outs[k:]


def _flat_jvp(jaxpr, primals, tangents):
    p, t = _jvp(lambda *xs: run(jaxpr, *xs), list(primals), list(tangents))
    return list(p) + list(t)


def _cond_vjp(cts, invals, outvals, branches):
    which, args = invals[0], invals[1:]
    n = len(args)

    def back(b):
        return lambda *xs: list(_vjp(lambda *a: run(b, *a), *xs[:n])[1](list(xs[n:])))
    new = tuple(trace_closed(back(b), [get_aval(x) for x in list(args) + list(cts)])[0] for b in branches)
    return [None] + cond_p.bind(which, *args, *cts, branches=new)


def _cond_batch(axis, vals, dims, branches):
    n = axis[0]
    which, wdim = vals[0], dims[0]
    args = [batched(v, d, n) for v, d in zip(vals[1:], dims[1:])]
    if wdim is None:      # 谓词对整批相同：还是只跑一个分支，分支本身被向量化
        new = tuple(trace_closed(lambda *xs, b=b: vmap(lambda *a: run(b, *a))(*xs),
                                 [get_aval(a) for a in args])[0] for b in branches)
        return cond_p.bind(which, *args, branches=new), [0] * len(branches[0].outs)
    # 谓词随样本变化：每个分支都对整批算一遍，再按每个样本的谓词挑结果。
    # 没被选中的样本进入分支前先 stop_gradient（和 JAX 一样）：那一支里的 nan、inf 不会漏进梯度
    outs = []
    for i, b in enumerate(branches):
        chosen = eq(which, i)
        ops = [select_n(chosen, stop_gradient(a), a) if get_aval(a).dtype == "float32" else a for a in args]
        outs.append(vmap(lambda *a, b=b: run(b, *a))(*ops))
    return [select_n(which, *case) for case in zip(*outs)], [0] * len(outs[0])


jvp_rules[cond_p], vjp_rules[cond_p], batch_rules[cond_p] = _cond_jvp, _cond_vjp, _cond_batch


# ---- while_loop / fori_loop ----
def while_loop(cond_fun, body_fun, init_val):
    """Repeat body_fun while cond_fun(carry) is true; the carry's shape and dtype must stay the same."""
    leaves, tree = tree_flatten((init_val,))
    leaves = _carry_types(_flat(body_fun, tree, []), leaves, "while_loop")
    avals = [get_aval(x) for x in leaves]
    trees = []
    cj, cc = trace_closed(_flat(cond_fun, tree, []), avals)
    bj, bc = trace_closed(_flat(body_fun, tree, trees), avals)
    outs = while_p.bind(*cc, *bc, *leaves, cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(cc), body_nconsts=len(bc))
    return tree_unflatten(trees[0], outs)


def _carry_types(flat_step, leaves, name, extra_avals=()):
    """The carry must come out of the loop body with the shape and dtype it went in with (JAX checks this).

    flat_step takes the carry leaves (then extra_avals' values) and returns the new carry leaves first.
    A weakly typed initial value (a Python 0 or 0.0) is first converted to the dtype the body gives back.
    """
    avals = [get_aval(x) for x in leaves]
    j, _ = trace_closed(flat_step, avals + list(extra_avals))
    new = []
    for x, a, b in zip(leaves, avals, j.out_avals):
        if a.shape != b.shape or (a.dtype != b.dtype and not a.weak_type):
            raise TypeError(f"{name} body function carry input and carry output must have equal types"
                            f"（carry 进出循环体时形状和 dtype 要相同）：进去 {a.long()}，出来 {b.long()}")
        new.append(convert_element_type(x, b.dtype) if a.dtype != b.dtype else x)   # 弱类型的差别 JAX 不管
    return new


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts], \
        list(args[cond_nconsts + body_nconsts:])
    while run(cond_jaxpr, *cc, *carry)[0]:
        carry = run(body_jaxpr, *bc, *carry)
    return carry


impl_rules[while_p] = _while_impl
shape_rules[while_p] = lambda *avals, body_jaxpr, **p: body_jaxpr.out_avals


def _while_vjp(*args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
                     "dynamic start/stop values.（循环次数要到运行时才知道，反向模式没法预先存下每一步的中间值；"
                     "改用 scan，或者起止是 Python 整数的 fori_loop）")


def _while_batch(axis, vals, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    n = axis[0]
    vals = [batched(v, d, n) for v, d in zip(vals, dims)]   # 简化：把所有输入都变成带批维度的
    cc, bc, carry = vals[:cond_nconsts], vals[cond_nconsts:cond_nconsts + body_nconsts], \
        vals[cond_nconsts + body_nconsts:]
    k = len(cc)
    vcond = vmap(lambda *xs: run(cond_jaxpr, *xs)[0])
    vbody = vmap(lambda *xs: run(body_jaxpr, *xs))

    def any_true(*xs):      # 批里还有一个样本没结束，就继续循环
        return [gt(reduce_max(convert_element_type(vcond(*xs), "int32"), [0]), 0)]

    def step(*xs):           # 已经结束的样本保持原值（select_n），没结束的往前走一步
        cc_, bc_, c = xs[:k], xs[k:len(xs) - len(carry)], xs[len(xs) - len(carry):]
        going, new = vcond(*cc_, *c), vbody(*bc_, *c)
        return [select_n(_expand_to(going, get_aval(o)), o, nv) for o, nv in zip(c, new)]
    cj, _ = trace_closed(any_true, [get_aval(v) for v in cc + carry])
    bj, _ = trace_closed(step, [get_aval(v) for v in cc + bc + carry])
    # 输入排成 [条件的常数 | 循环体的常数 | carry]。新循环体要先判断每个样本还走不走（用条件的常数），
    # 再走一步（用原循环体的常数），所以它的常数是“条件的常数 + 原循环体的常数”，条件的常数出现两次
    outs = while_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=k, body_nconsts=k + len(bc))
    return outs, [0] * len(outs)


def _expand_to(pred, aval):
    from .prims import broadcast_in_dim
    return broadcast_in_dim(pred, aval.shape, [0]) if len(aval.shape) > 1 else pred


def _while_jvp(primals, tangents, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = primals[:cond_nconsts], primals[cond_nconsts:cond_nconsts + body_nconsts], \
        primals[cond_nconsts + body_nconsts:]
    bct, ct = tangents[cond_nconsts:cond_nconsts + body_nconsts], tangents[cond_nconsts + body_nconsts:]
    nb, nc = len(bc), len(carry)

    def body(*xs):           # 输入：常数、常数的切向量、carry、carry 的切向量
        p, t = _jvp(lambda *a: run(body_jaxpr, *a), list(xs[:nb]) + list(xs[2 * nb:2 * nb + nc]),
                    list(xs[nb:2 * nb]) + list(xs[2 * nb + nc:]))
        return list(p) + list(t)

    def cond(*xs):
        return run(cond_jaxpr, *xs[:cond_nconsts], *xs[cond_nconsts:cond_nconsts + nc])
    bj, _ = trace_closed(body, [get_aval(x) for x in list(bc) + list(bct) + list(carry) + list(ct)])
    cj, _ = trace_closed(cond, [get_aval(x) for x in list(cc) + list(carry) + list(ct)])
    outs = while_p.bind(*cc, *bc, *bct, *carry, *ct, cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(cc),
                        body_nconsts=2 * nb)
    return outs[:nc], outs[nc:]


jvp_rules[while_p], vjp_rules[while_p], batch_rules[while_p] = _while_jvp, _while_vjp, _while_batch


def fori_loop(lower, upper, body_fun, init_val):
    """for i in range(lower, upper): val = body_fun(i, val). Python-int bounds become a scan (so grad works)."""
    if isinstance(lower, int) and isinstance(upper, int):
        def step(c, _):
            i, v = c
            return (i + 1, body_fun(i, v)), None
        (_, out), _ = scan(step, (Array([lower], (), "int32", weak_type=True), init_val), None, length=upper - lower)
        return out
    _, out = while_loop(lambda c: c[0] < upper, lambda c: (c[0] + 1, body_fun(c[0], c[1])), (lower, init_val))
    return out


# ---- scan ----
def scan(f, init, xs, length=None, reverse=False):
    """carry, y = f(carry, x) for each x along the leading axis of xs; returns (final carry, stacked ys).

    reverse=True walks xs from the last element to the first (ys keep the order of xs).
    """
    if reverse:
        flip = lambda t: tree_map(lambda a: stack([index(a, i) for i in reversed(range(get_aval(a).shape[0]))]), t)  # noqa: E731
        carry, ys = scan(f, init, flip(xs), length)
        return carry, flip(ys)
    c_leaves, c_tree = tree_flatten(init)
    x_leaves, x_tree = tree_flatten(xs)
    lengths = {get_aval(x).shape[0] for x in x_leaves}
    if length is not None:
        lengths.add(length)
    if len(lengths) != 1:
        raise ValueError(f"scan 的 xs 的第 0 维长度不一致，或没有给出 length：{sorted(lengths)}")
    n = lengths.pop()
    x_avals = [_slice_aval(a) for a in map(get_aval, x_leaves)]
    trees = []

    def body(*leaves):
        c = tree_unflatten(c_tree, leaves[:len(c_leaves)])
        new_c, y = f(c, tree_unflatten(x_tree, leaves[len(c_leaves):]))
        cl, ct = tree_flatten(new_c)
        yl, yt = tree_flatten(y)
        trees.append((ct, yt))
        return cl + yl
    jaxpr, consts = trace_closed(body, [get_aval(c) for c in c_leaves] + x_avals)
    if trees[0][0] != c_tree:
        raise TypeError(f"scan body function carry input and carry output must have equal types（carry 的结构变了）："
                        f"{c_tree} 对 {trees[0][0]}")
    if [(a.shape, a.dtype) for a in jaxpr.out_avals[:len(c_leaves)]] != [(get_aval(c).shape, get_aval(c).dtype)
                                                                        for c in c_leaves]:
        c_leaves = _carry_types(body, c_leaves, "scan", x_avals)
        trees.clear()
        jaxpr, consts = trace_closed(body, [get_aval(c) for c in c_leaves] + x_avals)
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=jaxpr, length=n, num_consts=len(consts),
                       num_carry=len(c_leaves))
    nc = len(c_leaves)
    return tree_unflatten(c_tree, outs[:nc]), tree_unflatten(trees[0][1], outs[nc:])


def _slice_aval(a):       # xs 的一片：去掉第 0 维
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _stacked_aval(n, a):  # 每一步的 y 叠起来：前面多一维
    return ShapedArray((n,) + a.shape, a.dtype, a.weak_type)


def _scan_split(args, num_consts, num_carry):
    return list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]), list(args[num_consts + num_carry:])


def _scan_impl(*args, jaxpr, length, num_consts, num_carry):
    consts, carry, xs = _scan_split(args, num_consts, num_carry)
    ys = []
    for t in range(length):
        out = run(jaxpr, *consts, *carry, *[index(x, t) for x in xs])
        carry, y = out[:num_carry], out[num_carry:]
        ys.append(y)
    y_avals = jaxpr.out_avals[num_carry:]
    stacked = [_as_aval(stack([y[k] for y in ys]), a) if ys else zeros(_stacked_aval(0, a))
               for k, a in enumerate(y_avals)]
    return carry + stacked


def _as_aval(x, aval):
    """The stacked ys carry the weak type the body's jaxpr gives them (as in JAX), whatever step 1 had."""
    x = asarray(x)
    return x if x.weak_type == aval.weak_type else Array(x.data, x.shape, x.dtype, aval.weak_type)


impl_rules[scan_p] = _scan_impl
shape_rules[scan_p] = lambda *avals, jaxpr, length, num_consts, num_carry: (
    jaxpr.out_avals[:num_carry] + [_stacked_aval(length, a) for a in jaxpr.out_avals[num_carry:]])


def _scan_jvp(primals, tangents, jaxpr, length, num_consts, num_carry):
    consts, carry, xs = _scan_split(primals, num_consts, num_carry)
    tc, tcar, tx = _scan_split(tangents, num_consts, num_carry)
    k, c, x = len(consts), len(carry), len(xs)

    # 新 scan 的输入排成 [常数 k | 常数的切向量 k | carry c | carry 的切向量 c | x 的切片 | x 切片的切向量]，
    # 输出排成 [carry | carry 的切向量 | y | y 的切向量]：常数、carry、逐步的 x 三段各自成对
    def body(*a):
        p = list(a[:k]) + list(a[2 * k:2 * k + c]) + list(a[2 * k + 2 * c:2 * k + 2 * c + x])
        t = list(a[k:2 * k]) + list(a[2 * k + c:2 * k + 2 * c]) + list(a[2 * k + 2 * c + x:])
        po, to = _jvp(lambda *v: run(jaxpr, *v), p, t)
        return list(po[:num_carry]) + list(to[:num_carry]) + list(po[num_carry:]) + list(to[num_carry:])
    x_avals = [_slice_aval(a) for a in map(get_aval, xs + tx)]
    bj, _ = trace_closed(body, [get_aval(v) for v in consts + tc + carry + tcar] + x_avals)
    outs = scan_p.bind(*consts, *tc, *carry, *tcar, *xs, *tx, jaxpr=bj, length=length, num_consts=2 * k,
                       num_carry=2 * c)
    ny = len(jaxpr.outs) - num_carry
    return outs[:c] + outs[2 * c:2 * c + ny], outs[c:2 * c] + outs[2 * c + ny:]


def _scan_vjp(cts, invals, outvals, jaxpr, length, num_consts, num_carry):
    """Reverse mode: redo the forward steps keeping each carry, then walk back step by step.

    (JAX's rule is itself a reversed scan; unrolled here into a Python loop, same numbers.)
    """
    consts, carry, xs = _scan_split(invals, num_consts, num_carry)
    ct_carry, ct_ys = list(cts[:num_carry]), cts[num_carry:]
    carries = [carry]
    for t in range(length):
        carries.append(run(jaxpr, *consts, *carries[-1], *[index(x, t) for x in xs])[:num_carry])
    ct_consts, ct_xs = [zeros(get_aval(c)) for c in consts], [None] * length
    for t in reversed(range(length)):
        args = consts + carries[t] + [index(x, t) for x in xs]
        _, back = _vjp(lambda *a: run(jaxpr, *a), *args)
        g = back(ct_carry + [index(y, t) for y in ct_ys])
        ct_consts = [add_any(a, b) for a, b in zip(ct_consts, g[:num_consts])]
        ct_carry = list(g[num_consts:num_consts + num_carry])
        ct_xs[t] = list(g[num_consts + num_carry:])
    return ct_consts + ct_carry + [stack([ct_xs[t][j] for t in range(length)]) for j in range(len(xs))]


def _scan_batch(axis, vals, dims, jaxpr, length, num_consts, num_carry):
    n = axis[0]
    vals = [batched(v, d, n) for v, d in zip(vals, dims)]   # 简化：全部带上批维度
    consts, carry, xs = _scan_split(vals, num_consts, num_carry)
    xs = [transpose(x, [1, 0] + list(range(2, get_aval(x).ndim))) for x in xs]   # 时间维放回第 0 维
    vb = vmap(lambda *a: run(jaxpr, *a))
    x_avals = [_slice_aval(a) for a in map(get_aval, xs)]
    bj, _ = trace_closed(vb, [get_aval(v) for v in consts + carry] + x_avals)
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=bj, length=length, num_consts=num_consts, num_carry=num_carry)
    ys = [transpose(y, [1, 0] + list(range(2, get_aval(y).ndim))) for y in outs[num_carry:]]
    return outs[:num_carry] + ys, [0] * len(outs)


jvp_rules[scan_p], vjp_rules[scan_p], batch_rules[scan_p] = _scan_jvp, _scan_vjp, _scan_batch
