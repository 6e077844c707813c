"""自动微分：前向模式 jvp（对偶数）和反向模式 vjp / grad。

- jvp：一层 JVPTrace，每个追踪器带着（原始值, 切线）；原语的 jvp 规则同时算出两者。
- vjp：先用 make_jaxpr 的办法把函数记成 jaxpr，正向执行一遍并记住每个中间值，再从输出往回
  逐条方程调用 vjp 规则，把余切累加（add_any）回每个输入。JAX 的做法是“jvp + 部分求值 + 转置”，
  结果相同；这里换成更直接的“记录再倒着走”，读起来更短。
"""

from __future__ import annotations

from .core import Lit, Trace, Tracer, eval_jaxpr, get_aval, jvp_rules, new_main, trace_to_jaxpr, vjp_rules
from .prims import add_any, zeros
from .tree import tree_flatten, tree_unflatten


class JVPTracer(Tracer):
    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent

    aval = property(lambda self: get_aval(self.primal))

    def __repr__(self):
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r})"


class JVPTrace(Trace):
    def pure(self, val):
        return JVPTracer(self, val, zeros(get_aval(val)))

    lift = pure

    def process_primitive(self, prim, tracers, params):
        if prim not in jvp_rules:
            raise NotImplementedError(f"迷你 JAX 没有 {prim} 的 jvp 规则")
        primals_out, tangents_out = jvp_rules[prim]([t.primal for t in tracers], [t.tangent for t in tracers],
                                                    **params)
        return [JVPTracer(self, p, t) for p, t in zip(primals_out, tangents_out)]


def jvp(f, primals, tangents):
    """(f(primals), the directional derivative along tangents) — one forward pass."""
    p_leaves, tree = tree_flatten(primals)
    t_leaves, _ = tree_flatten(tangents)
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        ins = [JVPTracer(trace, p, t) for p, t in zip(p_leaves, t_leaves)]
        out = f(*tree_unflatten(tree, ins))
        leaves, out_tree = tree_flatten(out)
        leaves = [trace.full_raise(o) for o in leaves]
        return (tree_unflatten(out_tree, [o.primal for o in leaves]),
                tree_unflatten(out_tree, [o.tangent for o in leaves]))


def vjp(f, *primals):
    """(f(*primals), f_vjp): f_vjp(cotangent) gives one cotangent per argument."""
    p_leaves, in_tree = tree_flatten(primals)
    out_tree = []

    def flat_f(*leaves):
        out_leaves, tree = tree_flatten(f(*tree_unflatten(in_tree, leaves)))
        out_tree.append(tree)
        return out_leaves
    jaxpr = trace_to_jaxpr(flat_f, [get_aval(x) for x in p_leaves])
    env = {}                                       # 正向：执行一遍，记住每个中间值
    outs = eval_jaxpr(jaxpr, p_leaves, env=env)
    read = lambda v: v.val if isinstance(v, Lit) else env[v]   # noqa: E731

    def f_vjp(cotangent):
        ct_env = {}

        def accum(v, ct):
            if isinstance(v, Lit) or ct is None:
                return
            ct_env[v] = add_any(ct_env[v], ct) if v in ct_env else ct
        for v, ct in zip(jaxpr.outs, tree_flatten(cotangent)[0]):
            accum(v, ct)
        for e in reversed(jaxpr.eqns):             # 反向：从最后一条方程往回走
            cts = [ct_env.pop(v, None) for v in e.outvars]
            if all(c is None for c in cts):
                continue
            cts = [zeros(v.aval) if c is None else c for v, c in zip(e.outvars, cts)]
            if e.prim not in vjp_rules:
                raise NotImplementedError(f"迷你 JAX 没有 {e.prim} 的 vjp 规则")
            in_cts = vjp_rules[e.prim](cts, [read(v) for v in e.inputs], [read(v) for v in e.outvars], **e.params)
            for v, ct in zip(e.inputs, in_cts):
                accum(v, ct)
        grads = [ct_env.get(v) if v in ct_env else zeros(v.aval) for v in jaxpr.invars]
        return tree_unflatten(in_tree, grads)
    return tree_unflatten(out_tree[0], outs), f_vjp


def value_and_grad(f, argnums=0, has_aux=False):
    def wrapped(*args):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

        def g(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return f(*full)
        out, f_vjp = vjp(g, *[args[i] for i in nums])
        value, aux = out if has_aux else (out, None)
        if get_aval(value).shape != ():
            raise TypeError(f"grad 要求函数返回标量，这个函数返回的形状是 {get_aval(value).shape}")
        cts = f_vjp((1.0, tree_map_zero(aux)) if has_aux else 1.0)
        grads = cts[0] if isinstance(argnums, int) else tuple(cts)
        return ((value, aux), grads) if has_aux else (value, grads)
    return wrapped


def tree_map_zero(aux):
    from .tree import tree_map
    return tree_map(lambda x: zeros(get_aval(x)), aux)


def grad(f, argnums=0, has_aux=False):
    """The gradient of a scalar function: vjp with cotangent 1.0."""
    vg = value_and_grad(f, argnums, has_aux)

    def wrapped(*args):
        (value_aux, g) = vg(*args)
        return (g, value_aux[1]) if has_aux else g
    return wrapped
