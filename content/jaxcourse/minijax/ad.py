"""自动微分：前向模式 jvp（对偶数）和反向模式 vjp / grad。

- jvp：一层 JVPTrace，每个追踪器带着（原始值, 切向量）；原语的 jvp 规则同时算出两者。
- vjp：前向照常运行函数，每个原语一边算、一边记到磁带（tape）上（连同输入、输出的值）；再从输出往回
  逐条方程调用 vjp 规则，把余切向量累加（add_any）回每个输入。JAX 的做法是“jvp + 部分求值 + 转置”，
  结果相同；这里换成更直接的“边算边记，再倒着走”，读起来更短。
"""

from __future__ import annotations

from .array import asarray
from .dtypes import is_float
from .core import Eqn, Trace, Tracer, Var, bind, get_aval, jvp_rules, new_main, vjp_rules
from .prims import add_any, zeros
from .tree import tree_flatten, tree_unflatten


class PrimalTracer(Tracer):
    """A tracer that carries its real value (`primal`): Python `if`, float() and int() use it, as under jax.grad.

    Under jit the primal is itself a tracer without numbers, so the same `if` raises there.
    """

    primal = None
    aval = property(lambda self: get_aval(self.primal))

    def __bool__(self):
        return bool(self.primal)

    def __float__(self):
        return float(self.primal)

    def __int__(self):
        return int(self.primal)

    __index__ = __int__


class JVPTracer(PrimalTracer):
    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent

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
        return (tree_unflatten(out_tree, [_value(o.primal) for o in leaves]),
                tree_unflatten(out_tree, [_value(o.tangent) for o in leaves]))


def _value(x):
    """A result handed back to the caller: a Python number becomes an Array (tracers of outer levels stay)."""
    return x if isinstance(x, Tracer) else asarray(x)


class TapeTracer(PrimalTracer):
    """A value being computed for real, plus the variable that names it on the tape."""

    def __init__(self, trace, val, var):
        self._trace, self.primal, self.var = trace, val, var

    val = property(lambda self: self.primal)

    def __repr__(self):
        return f"GradTracer(primal={self.primal!r})"


class Const:
    """A value that enters the tape from outside (a constant, or a tracer of an outer transformation)."""

    def __init__(self, val):
        self.val, self.aval = val, get_aval(val)


def _var(val):
    """A tape variable that also keeps its value (the reverse pass reads it)."""
    v = Var(get_aval(val))
    v.val = val
    return v


class TapeTrace(Trace):
    """Computes each primitive for real and writes it on the tape (a list of equations)."""

    tape = property(lambda self: self.main.global_data)

    def pure(self, val):
        return TapeTracer(self, val, Const(val))

    lift = pure

    def process_primitive(self, prim, tracers, params):
        outs = bind(prim, *[t.val for t in tracers], **params)     # 交给下一层：真的算出来
        outvars = [_var(o) for o in outs]
        self.tape.append(Eqn(prim, [t.var for t in tracers], params, outvars))
        return [TapeTracer(self, o, v) for o, v in zip(outs, outvars)]


def vjp(f, *primals):
    """(f(*primals), f_vjp): f_vjp(cotangent) gives one cotangent per argument.

    前向：函数照常运行（Python 的 if 能用），每个原语一边算、一边记到磁带（tape）上，
    连同它的输入、输出值；反向：从最后一条往回，逐条调用 vjp 规则。
    """
    p_leaves, in_tree = tree_flatten(primals)
    tape = []
    with new_main(TapeTrace, tape) as main:
        trace = TapeTrace(main)
        ins = [TapeTracer(trace, x, _var(x)) for x in p_leaves]
        out_leaves, out_tree = tree_flatten(f(*tree_unflatten(in_tree, ins)))
        outs = [trace.full_raise(o) for o in out_leaves]
    return tree_unflatten(out_tree, [_value(o.val) for o in outs]), _backward(tape, [t.var for t in ins],
                                                                       [o.var for o in outs], in_tree)


def _backward(tape, invars, outvars, in_tree):
    """The reverse pass over the tape: returns f_vjp."""
    def f_vjp(cotangent):
        ct_env = {}

        def accum(v, ct):
            if not isinstance(v, Var) or ct is None:     # 常数不需要余切向量
                return
            ct_env[v] = add_any(ct_env[v], ct) if v in ct_env else ct
        for v, ct in zip(outvars, tree_flatten(cotangent)[0]):
            accum(v, ct)
        for e in reversed(tape):                         # 反向：从最后一条方程往回走
            cts = [ct_env.pop(v, None) for v in e.outvars]
            if all(c is None for c in cts):
                continue
            cts = [zeros(v.aval) if c is None else c for v, c in zip(e.outvars, cts)]
            if e.prim not in vjp_rules:
                raise NotImplementedError(f"迷你 JAX 没有 {e.prim} 的 vjp 规则")
            in_cts = vjp_rules[e.prim](cts, [v.val for v in e.inputs], [v.val for v in e.outvars], **e.params)
            for v, ct in zip(e.inputs, in_cts):
                accum(v, ct)
        return tree_unflatten(in_tree, [_value(ct_env[v]) if v in ct_env else zeros(v.aval) for v in invars])
    return f_vjp


def value_and_grad(f, argnums=0, has_aux=False):
    def wrapped(*args):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

        def g(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return f(*full)
        for i in nums:
            for leaf in tree_flatten(args[i])[0]:
                if not is_float(get_aval(leaf).dtype):
                    raise TypeError("grad requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                                    f"of np.inexact), but got {get_aval(leaf).dtype}.（整数没有导数：传 2.0 而不是 2）")
        out, f_vjp = vjp(g, *[args[i] for i in nums])
        value, aux = out if has_aux else (out, None)
        _check_output(get_aval(value))
        cts = f_vjp((1.0, tree_map_zero(aux)) if has_aux else 1.0)
        grads = cts[0] if isinstance(argnums, int) else tuple(cts)
        return ((value, aux), grads) if has_aux else (value, grads)
    return wrapped


def _check_output(aval):
    """grad differentiates a float32 scalar (JAX raises TypeError for the rest)."""
    if not is_float(aval.dtype):
        raise TypeError("grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
                        f"got {aval.dtype}.（整数、布尔的输出没有导数：函数最后别转成整数，或者改用 jvp）")
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}."
                        "（grad 要求函数返回标量：先 sum，或者用 vjp）")


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
