"""看 jaxpr 里有什么：练习的自检用它检查“限制”（不用 Python 循环、不先算出整个矩阵……）。

子 jaxpr（jit、cond、scan、custom_jvp 等原语的函数体）也算在内：只看顶层会漏掉它们。
"""

from __future__ import annotations


def all_eqns(jaxpr):
    """jaxpr（或 ClosedJaxpr）里的所有方程，连同各层子 jaxpr 里的。"""
    from jax.extend.core import subjaxprs

    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    yield from jaxpr.eqns
    for sub in subjaxprs(jaxpr):  # 只往下看一层，所以递归
        yield from all_eqns(sub)


def _every_eqn(jaxpr):
    """all_eqns，再加上高层原语存在参数对象里的子程序（_kept_jaxprs）的方程。找回调、导出件时用；
    其他检查仍用 all_eqns，数到的方程不变。"""
    for eqn in all_eqns(jaxpr):
        yield eqn
        for sub in _kept_jaxprs(eqn):
            yield from _every_eqn(sub)


def _kept_jaxprs(eqn):
    """高层原语把子程序存在参数对象的属性里，subjaxprs 列不出来：JAX 0.12 的 lax.custom_root 是
    call_hi_primitive，求解器的 jaxpr 在参数 _prim 的 solve_jaxpr 里。"""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    for value in eqn.params.values():
        if isinstance(value, (Jaxpr, ClosedJaxpr)):
            continue   # subjaxprs 已经列过
        for attr in getattr(value, "__dict__", {}).values():
            if isinstance(attr, (Jaxpr, ClosedJaxpr)):
                yield attr


def jaxpr_size(fn, *args) -> int:
    """fn(*args) 追踪出的程序有多少条方程（含子 jaxpr）。"""
    import jax

    return sum(1 for _ in all_eqns(jax.make_jaxpr(fn)(*args)))


def primitive_names(fn, *args, top: bool = False) -> set[str]:
    """fn(*args) 的程序里用到的原语名字（含子 jaxpr），例如 {"dot_general", "transpose"}。

    top=True 只看最外层：`pallas_call`、`scan` 这类带着自己 jaxpr 的原语，里面的原语不算。
    """
    import jax

    closed = jax.make_jaxpr(fn)(*args)
    eqns = closed.jaxpr.eqns if top else all_eqns(closed)
    return {eqn.primitive.name for eqn in eqns}


def host_callbacks(fn, *args) -> set[str]:
    """fn(*args) 的程序里回到主机 Python 算值的原语（pure_callback、io_callback 之类，含子 jaxpr 里的）。
    练习要求“在 JAX 程序里算”时，自检用它拦住把计算交给 NumPy 的答案。jax.debug.print / jax.debug.callback
    不算：它们不能把值送回程序。"""
    return {name for name in _every_primitive(fn, *args) if name.endswith("callback") and name != "debug_callback"}


def _every_primitive(fn, *args) -> set[str]:
    """primitive_names，再加上高层原语（lax.custom_root 的求解器）藏在参数对象里的子程序的原语。"""
    import jax

    return {eqn.primitive.name for eqn in _every_eqn(jax.make_jaxpr(fn)(*args))}


#: 看不进去的原语：它们的计算不在 jaxpr 里（导出件的 StableHLO、FFI 的 C++），查原语、循环、回调的检查对它们都是瞎的
OPAQUE = frozenset({"call_exported", "ffi_call"})


def opaque_calls(fn, *args) -> set[str]:
    """fn(*args) 的程序里，jaxpr 层面的检查看不见里面的原语：主机回调（host_callbacks），以及 jax.export 的
    导出件（call_exported）、FFI 算子（ffi_call）。练习的限制靠查 jaxpr 执行时，先要求程序里没有它们。"""
    return host_callbacks(fn, *args) | (_every_primitive(fn, *args) & OPAQUE)


def same_size(program, sizes=(2, 7)) -> bool:
    """program(n) 是问题规模为 n 时的 jaxpr：规模变了程序长度（含子 jaxpr 的方程数）不变，说明循环没有在追踪时展开
    （scan / while 算一条方程，可以有）。"""
    return len({sum(1 for _ in all_eqns(program(n))) for n in sizes}) == 1


def loop_free(program, sizes=(2, 7)) -> bool:
    """program(n) 是问题规模为 n 时的 jaxpr：规模变了程序长度不变、也没有 scan / while，说明没有逐个元素地循环。"""
    names = {eqn.primitive.name for eqn in all_eqns(program(sizes[-1]))}
    return same_size(program, sizes) and not names & {"scan", "while"}


def _subjaxprs(eqn):
    from jax.extend.core import jaxprs_in_params

    return [getattr(s, "jaxpr", s) for s in jaxprs_in_params(eqn.params)]


def _contains(jaxpr, match) -> bool:
    return any(match(eqn) for eqn in all_eqns(jaxpr))


def _matcher(prims):
    """原语名的集合 → “这条方程是不是它们之一”；本来就是判断函数（eqn → bool）的，原样返回。"""
    if callable(prims):
        return prims
    names = frozenset(prims)
    return lambda eqn: eqn.primitive.name in names


def call_body(eqn):
    """jit、custom_jvp_call 这类“调用一个子程序”的原语（子程序的输入、输出与方程的一一对应）：返回（子 jaxpr，
    它的常量），沿着它可以把变量的来历追进子程序；控制流（while、cond、scan）、shard_map、pallas_call 和别的原语
    返回 None。"""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    bodies = [v for v in eqn.params.values() if isinstance(v, (ClosedJaxpr, Jaxpr))]
    if len(bodies) != 1 or eqn.primitive.name in {"while", "cond", "scan", "shard_map", "pallas_call"}:
        return None
    body = bodies[0]
    jaxpr = getattr(body, "jaxpr", body)
    if len(jaxpr.invars) != len(eqn.invars) or len(jaxpr.outvars) != len(eqn.outvars):
        return None
    return jaxpr, list(getattr(body, "consts", []))


def _nudge(value):
    """把浮点数组放大 1.5 倍（整数、布尔、随机数 key 不动：它们多半是计数和标志）。"""
    import jax.numpy as jnp

    if hasattr(value, "dtype") and jnp.issubdtype(value.dtype, jnp.inexact):
        return value * 1.5  # 乘而不加：求导程序里恒为 0 的余切向量经过原语也还是 0，不算“用到”
    return value


def _eval(jaxpr, consts, args, match):
    """像 eval_jaxpr 一样求值，但 match 选中的方程（或函数体里含有它们的 while/scan/cond/shard_map 等）的浮点输出被改掉。"""
    from jax.extend.core import Literal

    env = {}
    read = lambda v: v.val if isinstance(v, Literal) else env[v]  # noqa: E731
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        hit = match(eqn)
        call = None if hit else call_body(eqn)
        if call is not None and _contains(call[0], match):
            outs = _eval(call[0], call[1], invals, match)  # 包装：进去，只改里面那个原语
        else:
            with eqn.ctx.manager:
                outs = eqn.primitive.bind(*invals, **eqn.primitive.get_bind_params(eqn.params))
            outs = list(outs) if eqn.primitive.multiple_results else [outs]
            if hit or any(_contains(s, match) for s in _subjaxprs(eqn)):
                outs = [_nudge(o) for o in outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def depends_on(fn, args, prims) -> bool:
    """fn(*args) 的结果是否真的由 prims 里的原语算出来（例如 {"while"}、{"fft"}、{"shard_map"}）。

    做法：把这些原语的浮点输出改成别的值再算一遍，看结果变不变。只调用一下、结果却丢掉（`dummy * 0 + 公式`、
    `where(False, dummy, 公式)`、算了不用）的答案，结果不变，返回 False。jit、custom_jvp 这类包装会进去看；
    原语藏在 while/scan/cond/shard_map 的函数体里时，改的是整条 while/scan/... 的输出。
    prims 也可以是判断函数（eqn → bool），只改选中的那几条方程，例如只改输出形状为 (M, N) 的 dot_general：
    `depends_on(f, args, lambda e: e.primitive.name == "dot_general" and e.outvars[0].aval.shape == (M, N))`。
    """
    import jax
    import numpy as np

    closed = jax.make_jaxpr(fn)(*args)
    flat = jax.tree_util.tree_leaves(args)
    plain = _eval(closed.jaxpr, closed.consts, flat, _matcher(()))
    nudged = _eval(closed.jaxpr, closed.consts, flat, _matcher(prims))
    for a, b in zip(plain, nudged):
        if hasattr(a, "dtype") and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
            a, b = jax.random.key_data(a), jax.random.key_data(b)
        if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-9, equal_nan=True):
            return True
    return False


def split_at(fn, args, prim: str):
    """fn(*args) 的程序以原语 prim（如 "shard_map"）为界拆开：返回（prim 外面的原语名，prim 里面的原语名，prim 出现几次）。

    jit 之类的子程序照样往里看；prim 的函数体里的（含更深的子 jaxpr）都算“里面”。
    """
    import jax

    outside, inside, count = set(), set(), 0

    def walk(jaxpr, within):
        nonlocal count
        for eqn in jaxpr.eqns:
            (inside if within else outside).add(eqn.primitive.name)
            count += eqn.primitive.name == prim
            for sub in _subjaxprs(eqn):
                walk(sub, within or eqn.primitive.name == prim)

    walk(jax.make_jaxpr(fn)(*args).jaxpr, False)
    return outside, inside, count


def around(fn, args, prim: str = "shard_map"):
    """顺着数据流看 prim（如 "shard_map"）外面做了什么：返回（作用在输入或由输入变来的值上的原语名，
    作用在 prim 的结果上的原语名）。jit 之类的包装会进去看，prim 的函数体不看。

    练习要求“计算在 shard_map 里做”时用它：外面只许改形状，不许先把结果算好（第一个集合），
    或者拿到结果后再补算（第二个集合）。
    """
    import jax
    from jax.extend.core import Literal

    before, after = set(), set()

    def walk(jaxpr, tags):  # tags：变量 → {"in"}（来自输入）/ {"out"}（来自 prim 的结果）
        get = lambda v: set() if isinstance(v, Literal) else tags.get(v, set())  # noqa: E731
        for eqn in jaxpr.eqns:
            got = set().union(*(get(v) for v in eqn.invars))
            call = call_body(eqn)
            if eqn.primitive.name == prim:
                outs = [{"out"}] * len(eqn.outvars)
            elif call is not None:
                outs = walk(call[0], {b: get(v) for b, v in zip(call[0].invars, eqn.invars)})  # 包装：进去看
            else:
                if "in" in got:
                    before.add(eqn.primitive.name)
                if "out" in got:
                    after.add(eqn.primitive.name)
                outs = [got] * len(eqn.outvars)
            tags.update(zip(eqn.outvars, outs))
        return [get(v) for v in jaxpr.outvars]

    top = jax.make_jaxpr(fn)(*args).jaxpr
    walk(top, {v: {"in"} for v in top.invars})
    return before, after


def value_part(fn, *args):
    """只留下 fn(*args) 的结果用得到的那些方程（去掉死代码，jit 这类子程序里的也去掉），返回按它求值的函数
    （fn 只有一个输出）。

    练习的自检用它看“求导时算出的函数值”由谁算：jax.vjp / jax.jvp 的程序里还有顺带算的切向量系数
    （例如导数规则里的 2 * x），它们不影响函数值，去掉之后再看剩下的原语。对 jit 过的函数求导时，函数值和切向量
    在同一个 jit 方程里，只去掉顶层的死代码就留下了切向量的运算（评审 10：一个 jit 过的正确答案因此被拒），
    所以用 JAX 自己的死代码消除（私有的 pe.dce_jaxpr，它认得各个子程序；JAX 改了它，就退回只去顶层）。
    """
    import jax
    from jax.extend.core import ClosedJaxpr, Var, jaxpr_as_fun

    closed = jax.make_jaxpr(fn)(*args)
    try:
        from jax._src.interpreters import partial_eval as pe

        whole = pe.convert_constvars_jaxpr(closed.jaxpr)            # 常量变成前几个输入
        pruned, used = pe.dce_jaxpr(whole, [True] * len(whole.outvars))
        run = jaxpr_as_fun(ClosedJaxpr(pruned, []))
        inputs = lambda a: [v for v, u in zip([*closed.consts, *a], used) if u]
        return lambda *a: run(*inputs(a))[0]
    except (ImportError, AttributeError, TypeError):
        pass
    live = {v for v in closed.jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(closed.jaxpr.eqns):
        if any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(v for v in eqn.invars if isinstance(v, Var))
    run = jaxpr_as_fun(ClosedJaxpr(closed.jaxpr.replace(eqns=kept[::-1]), closed.consts))
    return lambda *a: run(*a)[0]


def same_traced(fn, *args, static_argnums=(), rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """直接调用 fn(*args) 和 jax.jit(fn)(*args) 的结果是否相同：pytree 结构、形状、dtype 和数值（NaN 的位置也要相同）。

    自检的数值来自直接调用、限制读自 jaxpr 时，一个按参数是不是 Tracer 走两条路的答案能让两种检查各看到
    一个程序；把这条放进检查列表，两条路算出的结果就必须一致。容差默认按 float32：jit 会融合运算，末位可能不同。
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    def leaves(tree):
        out = []
        for x in jax.tree.leaves(tree):
            x = jnp.asarray(x)
            if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
                x = jax.random.key_data(x)
            out.append(x)
        return out, jax.tree.structure(tree)

    eager, e_tree = leaves(fn(*args))
    traced, t_tree = leaves(jax.jit(fn, static_argnums=static_argnums)(*args))
    if e_tree != t_tree:
        return False
    for a, b in zip(eager, traced):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        a, b = np.asarray(a), np.asarray(b)
        if np.issubdtype(a.dtype, np.inexact):
            if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif not np.array_equal(a, b):
            return False
    return True
