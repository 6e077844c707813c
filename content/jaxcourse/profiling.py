"""直接调用（不在 jit 里）时真正执行了什么：用 jax.profiler（公开 API）记下一次运行，读出执行过的程序。

自检用它看“答案在主机上逐行循环了没有”：不换掉任何函数、不用 sys.monitoring，答案认不出自己正被检查；
“map 套一个缓存好的 jit 函数、再 np.stack”把循环放在 C 里，Python 层看不见，但每一行都要执行一次程序。
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile

_JIT_CALL = "PjitFunction("     # 事件名：一次 jit 函数调用（直接调用的单个运算也是，括号里是原语名）
_EXECUTE = "ExecuteHelper"       # 事件名：PjRt 执行一个编译好的程序
#: 只是装着一个子程序的原语：直接调用时它们不作为运算执行，子程序里的运算才是
_CONTAINERS = frozenset({"jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                         "custom_vjp_call_jaxpr", "checkpoint", "remat"})


def executed_events(run) -> list[str]:
    """先运行 run() 一次（编译不算），再在 jax.profiler 的记录里运行一次，返回这一次的事件名（PjitFunction(…) 与
    PjRt 的 Execute…，按记录的顺序）。Python 层的事件不记（python_tracer_level=0）。两次运行都不许把计算
    交给别的进程（processes.in_this_process）。"""
    import jax

    from .processes import in_this_process

    log_dir = tempfile.mkdtemp()
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    with in_this_process():     # 交给别的进程的计算不在这份记录里
        jax.block_until_ready(run())
        jax.profiler.start_trace(log_dir, profiler_options=options)
        try:
            jax.block_until_ready(run())
        finally:
            jax.profiler.stop_trace()
    try:
        (path,) = glob.glob(os.path.join(log_dir, "**", "*.xplane.pb"), recursive=True)
        data = jax.profiler.ProfileData.from_file(path)
        return [event.name for plane in data.planes for line in plane.lines for event in line.events
                if event.name.startswith(_JIT_CALL) or _EXECUTE in event.name]
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)


def executions(run) -> int:
    """直接调用 run() 一次，编译好的程序被执行了几次（jit 函数的调用和 PjRt 的 Execute 事件）。
    向量化的写法执行几次与批大小无关；逐行算的写法（哪怕每行调用同一个 jit 过的函数）次数随批大小变。"""
    return len(executed_events(run))


def eager_primitives(run) -> set[str]:
    """直接调用 run() 一次时执行的 jit 调用的名字：逐个执行的运算是原语名（"cumlogsumexp"、"add"……），
    jit 过的函数是它的函数名。"""
    return {name[len(_JIT_CALL):-1] for name in executed_events(run) if name.startswith(_JIT_CALL)}


def eager_ops_within(allowed, fn, calls) -> bool:
    """直接调用 fn(*args)（calls 里的每组参数；平时一次、jax.disable_jit() 之下再一次）时，逐个执行的运算都在
    allowed 里，就是 True。调用出错、或者执行了名单以外的运算（排序、求和、exp……），就是 False。
    只看不换：答案拿回的结果与平时一模一样，认不出自己正被检查。"""
    import jax

    import numpy as np

    from .jaxprs import all_eqns

    allowed = set(allowed)
    if isinstance(fn, type(jax.jit(lambda: None))):
        # fn 本身就是 jax.jit 过的函数：直接调用执行的就是它追踪出的那个程序（自检另外检查这个程序），
        # 记录里只有它自己的名字；jax.disable_jit() 之下它才逐个执行运算，那时照样要都在名单里
        allowed.add(fn.__name__)
    for args in calls:
        # 答案里调用的 jit 过的辅助函数（def f(x): return helper_j(x)）：记录里是它的名字；它在 fn 的程序里
        # 是一个 jit 方程，里面的运算都在名单里，就算名单里的（评审 10：这样的正确答案曾被拒）
        try:
            inner = {}
            # Python 标量（scale 之类，答案可能把它当静态参数交给 jit）照原样传，只有数组作为追踪的输入
            at = [i for i, a in enumerate(args) if isinstance(a, (jax.Array, np.ndarray))]

            def with_arrays(*arrays):
                full = list(args)
                for i, a in zip(at, arrays):
                    full[i] = a
                return fn(*full)
            for eqn in all_eqns(jax.make_jaxpr(with_arrays)(*[args[i] for i in at])):
                if eqn.primitive.name == "jit":
                    # 只装着子程序的原语（custom_jvp 之类）不算运算：它们里面的方程 all_eqns 都数到了
                    body = {e.primitive.name for e in all_eqns(eqn.params["jaxpr"])} - _CONTAINERS
                    inner.setdefault(str(eqn.params.get("name")), set()).update(body)
        except Exception:
            inner = {}
        ok = allowed | {name for name, body in inner.items() if body <= allowed}
        for no_jit in (False, True):
            try:
                with jax.disable_jit(no_jit):
                    ops = eager_primitives(lambda: fn(*args))
            except Exception:
                return False
            if not ops <= ok:
                return False
    return True


def executions_grow(run, small, large, slack: int = 2) -> bool:
    """直接调用 run(small) 和 run(large)：编译好的程序被执行的次数多出 slack 次以上，就是 True（逐行执行了，
    或者按块循环，每块一次）。向量化的写法两次执行的次数相同。"""
    return executions(lambda: run(large)) - executions(lambda: run(small)) > slack
