"""迷你 JAX 的核心：原语（primitive）、追踪器（tracer）、追踪栈和 jaxpr。

思路和 JAX 一样（参考 JAX 文档《Autodidax: JAX core from scratch》）：
- 每个运算都是一个**原语**：`bind(原语, *参数)` 是唯一的入口。
- 变换（jvp、vmap、把函数记成 jaxpr）各是一种**追踪**（Trace），按层级（level）叠成一个栈。
  `bind` 在参数里找层级最高的追踪器，交给它的 Trace 处理；Trace 用自己的规则算出结果，
  规则里再调用 `bind`，于是交给下一层，直到最底层的 EvalTrace 真的算出数。
- `make_jaxpr` 压入一层记录用的 JaxprTrace：原语不计算，只记成一条方程（eqn）。
"""

from __future__ import annotations

import contextlib
import itertools

from .array import DTYPES, asarray, short_float
from .errors import ConcretizationTypeError, TracerBoolConversionError, TracerIntegerConversionError


class ShapedArray:
    """An abstract value: shape, dtype and weak type, no numbers (JAX's ShapedArray)."""

    def __init__(self, shape, dtype, weak_type=False):
        self.shape, self.dtype, self.weak_type = tuple(shape), dtype, weak_type

    ndim = property(lambda self: len(self.shape))

    def _key(self):
        return (self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return f"{DTYPES[self.dtype]}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__

    def long(self) -> str:
        """JAX's spelling in tracer reprs: float32[3], ~float32[] when weakly typed."""
        return ("~" if self.weak_type else "") + f"{self.dtype}[{','.join(map(str, self.shape))}]"


def get_aval(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    x = asarray(x)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


class Primitive:
    """A named operation. Its rules live in dicts keyed by the primitive (see prims.py)."""

    def __init__(self, name: str, multiple_results: bool = False):
        self.name, self.multiple_results = name, multiple_results

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        outs = bind(self, *args, **params)
        return outs if self.multiple_results else outs[0]


#: 每个原语的规则（prims.py 里登记）：具体计算、形状推断、前向模式、反向模式、批处理
impl_rules, shape_rules, jvp_rules, vjp_rules, batch_rules = {}, {}, {}, {}, {}


# ---- 追踪栈 ----
class MainTrace:
    def __init__(self, level, trace_type, global_data=None):
        self.level, self.trace_type, self.global_data = level, trace_type, global_data


trace_stack: list[MainTrace] = []
dynamic_trace: MainTrace | None = None   # make_jaxpr 期间：连常数参与的运算也要记下来


@contextlib.contextmanager
def new_main(trace_type, global_data=None):
    main = MainTrace(len(trace_stack), trace_type, global_data)
    trace_stack.append(main)
    try:
        yield main
    finally:
        trace_stack.pop()


@contextlib.contextmanager
def new_dynamic(main):
    global dynamic_trace
    prev, dynamic_trace = dynamic_trace, main
    try:
        yield
    finally:
        dynamic_trace = prev


class Trace:
    def __init__(self, main):
        self.main = main

    def pure(self, val):          # 一个普通的数进入这一层
        raise NotImplementedError

    lift = pure                   # 低层的追踪器进入这一层

    def full_raise(self, val):
        if not isinstance(val, Tracer):
            return self.pure(asarray(val))
        level = val._trace.main.level
        if val._trace.main is self.main:
            return val
        if level < self.main.level:
            return self.lift(val)
        raise RuntimeError(f"层级 {level} 的追踪器出现在层级 {self.main.level} 的变换里：追踪器从变换里漏出来了")

    def process_primitive(self, prim, tracers, params):
        raise NotImplementedError


class EvalTrace(Trace):
    """The bottom of the stack: really compute, on Arrays."""

    pure = lift = lambda self, x: asarray(x)

    def process_primitive(self, prim, vals, params):
        return impl_rules[prim](*vals, **params)


trace_stack.append(MainTrace(0, EvalTrace))


class Tracer:
    """Stands for a value inside a transformation; arithmetic on it calls bind (see numpy.py)."""

    __array_priority__ = 1000
    _trace: Trace

    aval = property(lambda self: get_aval(self.val))
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    weak_type = property(lambda self: self.aval.weak_type)
    ndim = property(lambda self: self.aval.ndim)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self):
        raise TracerBoolConversionError(self)

    def __float__(self):
        raise ConcretizationTypeError(self, "float()")

    def __int__(self):
        raise ConcretizationTypeError(self, "int()")

    def __index__(self):
        raise TracerIntegerConversionError(self)


def find_top_trace(xs) -> Trace:
    mains = [x._trace.main for x in xs if isinstance(x, Tracer)]
    top = max(mains, key=lambda m: m.level, default=trace_stack[0])
    if dynamic_trace is not None and dynamic_trace.level > top.level:
        top = dynamic_trace
    return top.trace_type(top)


def bind(prim, *args, **params) -> list:
    """The one entry point: hand the operation to the highest-level trace among its arguments."""
    trace = find_top_trace(args)
    tracers = [trace.full_raise(a) for a in args]
    return trace.process_primitive(prim, tracers, params)


# ---- jaxpr：记下来的程序 ----
class Var:
    def __init__(self, aval):
        self.aval = aval


class Lit:
    def __init__(self, val):
        self.val = asarray(val)
        self.aval = get_aval(self.val)


class Eqn:
    def __init__(self, prim, inputs, params, outvars):
        self.prim, self.inputs, self.params, self.outvars = prim, inputs, params, outvars


class Jaxpr:
    """constvars (values captured from outside) ; invars . let eqns in outs — printed like jax.make_jaxpr."""

    def __init__(self, constvars, invars, eqns, outs, consts=()):
        self.constvars, self.invars, self.eqns, self.outs = constvars, invars, eqns, outs
        self.consts = list(consts)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outs])

    def primitive_names(self) -> list[str]:
        """Primitive names: this jaxpr's equations in order, then those of nested jaxprs.

        The same order as `[e.primitive.name for e in jaxcourse.all_eqns(jax.make_jaxpr(f)(x))]`.
        """
        names = [e.prim.name for e in self.eqns]
        for e in self.eqns:
            for sub in _sub_jaxprs(e.params):
                names += sub.primitive_names()
        return names

    def __str__(self):
        return pp_jaxpr(self, _Names(), 0)

    __repr__ = __str__


def _sub_jaxprs(params):
    for v in params.values():
        for item in (v if isinstance(v, tuple) else (v,)):
            if isinstance(item, Jaxpr):
                yield item


class _Names:
    def __init__(self):
        self.names, self.counter = {}, itertools.count()

    def __call__(self, v):
        if isinstance(v, Lit):
            val = v.val.tolist()
            text = (str(val) if isinstance(val, bool) else
                    short_float(val, scalar=True) if v.aval.dtype == "float32" else str(val))
            return f"{text}:{v.aval}"
        if v not in self.names:
            n, s = next(self.counter), ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n = n // 26 - 1
                if n < 0:
                    break
            self.names[v] = s
        return self.names[v]


def _pp_param(value, names, indent):
    if isinstance(value, Jaxpr):
        return pp_jaxpr(value, names, indent + 4)
    if isinstance(value, tuple) and value and all(isinstance(v, Jaxpr) for v in value):
        pad = " " * (indent + 8)
        inner = "".join(f"\n{pad}{pp_jaxpr(j, names, indent + 6)}" for j in value)
        return f"({inner}\n{' ' * (indent + 6)})"
    if isinstance(value, str) and value in DTYPES:
        return value
    return repr(value) if not isinstance(value, tuple) else str(value)


def pp_jaxpr(jaxpr, names, indent) -> str:
    """`{ lambda 常量 ; 输入. let 方程 … in (输出,) }`，排版照 JAX：不超过一条方程且放得下 80 列时写成一行。"""
    decl = lambda v: f"{names(v)}:{v.aval}"   # noqa: E731
    head = "{ lambda " + " ".join(map(decl, jaxpr.constvars)) + "; " + " ".join(map(decl, jaxpr.invars)) + ". let"
    lines = [_pp_eqn(e, names, indent, decl) for e in jaxpr.eqns]
    outs = [names(v) for v in jaxpr.outs]
    tail = "in (" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"
    one_line = f"{head} {''.join(lines)} {tail} }}"
    if len(lines) <= 1 and "\n" not in one_line and indent + len(one_line) <= 80:
        return one_line
    pad = " " * (indent + 4)
    return head + "".join(f"\n{pad}{ln}" for ln in lines) + f"\n{' ' * (indent + 2)}{tail} }}"


def _pp_eqn(e, names, indent, decl) -> str:
    """`输出:类型 = 原语[参数] 输入`；参数里有嵌套 jaxpr 时，每个参数占一行。"""
    outs = " ".join(map(decl, e.outvars))      # 先给输出起名，再轮到嵌套 jaxpr 里的变量（和 JAX 一样）
    params = {k: _pp_param(e.params[k], names, indent) for k in sorted(e.params)   # 和 JAX 一样按名字排序
              if not (k == "shape" and e.prim.name == "broadcast_in_dim")}     # 形状已写在输出的类型里
    if any(isinstance(v, Jaxpr) or (isinstance(v, tuple) and v and isinstance(v[0], Jaxpr))
           for v in e.params.values()):
        pad = " " * (indent + 6)
        ptext = "[\n" + "".join(f"{pad}{k}={v}\n" for k, v in params.items()) + " " * (indent + 4) + "]"
    else:
        ptext = "[" + " ".join(f"{k}={v}" for k, v in params.items()) + "]" if params else ""
    return f"{outs} = {e.prim.name}{ptext} " + " ".join(map(names, e.inputs))


class JaxprTracer(Tracer):
    def __init__(self, trace, aval):
        self._trace, self._aval = trace, aval

    aval = property(lambda self: self._aval)

    def __repr__(self):   # 只有形状和 dtype，没有数：和 JAX 在 jit 里打印的一样
        return f"JitTracer({self._aval.long()})"


class JaxprBuilder:
    def __init__(self):
        self.eqns, self.vars, self.consts, self.lits = [], {}, {}, {}

    def var(self, tracer):
        if id(tracer) in self.lits:
            return self.lits[id(tracer)]
        return self.vars.setdefault(id(tracer), Var(tracer.aval))


class JaxprTrace(Trace):
    """Records every primitive as an equation instead of computing it."""

    builder = property(lambda self: self.main.global_data)

    def new_tracer(self, aval):
        t = JaxprTracer(self, aval)
        self.builder.vars[id(t)] = Var(aval)
        self.builder.tracers = getattr(self.builder, "tracers", []) + [t]   # 保持存活：id 不被复用
        return t

    def pure(self, val):
        t = JaxprTracer(self, get_aval(val))
        self.builder.tracers = getattr(self.builder, "tracers", []) + [t]
        if not isinstance(val, Tracer) and asarray(val).shape == ():
            self.builder.lits[id(t)] = Lit(val)          # 标量常数直接写进方程：2.0:f32[]
        else:
            self.builder.consts[id(t)] = (Var(t.aval), val)   # 数组常数、外层的追踪器：constvar
            self.builder.vars[id(t)] = self.builder.consts[id(t)][0]
        return t

    lift = pure

    def process_primitive(self, prim, tracers, params):
        avals_out = shape_rules[prim](*[t.aval for t in tracers], **params)
        outs = [self.new_tracer(a) for a in avals_out]
        self.builder.eqns.append(Eqn(prim, [self.builder.var(t) for t in tracers], params,
                                     [self.builder.var(t) for t in outs]))
        return outs


def trace_to_jaxpr(flat_fun, avals) -> Jaxpr:
    """Run `flat_fun` (list of values → list of values) on tracers and record what it does."""
    builder = JaxprBuilder()
    with new_main(JaxprTrace, builder) as main, new_dynamic(main):
        trace = JaxprTrace(main)
        ins = [trace.new_tracer(a) for a in avals]
        outs = [trace.full_raise(o) for o in flat_fun(*ins)]
    outvars = [builder.var(t) for t in outs]
    eqns = dce(builder.eqns, outvars)
    used = {id(v) for e in eqns for v in e.inputs} | {id(v) for v in outvars}
    kept = [(v, c) for v, c in builder.consts.values() if id(v) in used]
    return Jaxpr([v for v, _ in kept], [builder.var(t) for t in ins], eqns, outvars, [c for _, c in kept])


def dce(eqns, outvars):
    """Drop equations whose results nobody uses (none of these primitives has side effects)."""
    live, kept = {id(v) for v in outvars}, []
    for e in reversed(eqns):
        if any(id(v) in live for v in e.outvars):
            kept.append(e)
            live |= {id(v) for v in e.inputs}
    return kept[::-1]


def eval_jaxpr(jaxpr: Jaxpr, args, consts=None, env=None) -> list:
    """Run a jaxpr by binding each equation's primitive (so an outer transformation sees every step)."""
    env = {} if env is None else env
    read = lambda v: v.val if isinstance(v, Lit) else env[v]   # noqa: E731
    env.update(zip(jaxpr.constvars, jaxpr.consts if consts is None else consts))
    env.update(zip(jaxpr.invars, args))
    for e in jaxpr.eqns:
        env.update(zip(e.outvars, bind(e.prim, *map(read, e.inputs), **e.params)))
    return [read(v) for v in jaxpr.outs]


def jaxpr_as_fun(jaxpr: Jaxpr):
    return lambda *args: eval_jaxpr(jaxpr, args)
