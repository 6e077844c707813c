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


def same_size(program, sizes=(2, 7)) -> bool:
    """program(n) 是问题规模为 n 时的 jaxpr：规模变了程序长度（含子 jaxpr 的方程数）不变，说明循环没有在追踪时展开
    （scan / while 算一条方程，可以有）。"""
    return len({sum(1 for _ in all_eqns(program(n))) for n in sizes}) == 1


def loop_free(program, sizes=(2, 7)) -> bool:
    """program(n) 是问题规模为 n 时的 jaxpr：规模变了程序长度不变、也没有 scan / while，说明没有逐个元素地循环。"""
    names = {eqn.primitive.name for eqn in all_eqns(program(sizes[-1]))}
    return same_size(program, sizes) and not names & {"scan", "while"}
