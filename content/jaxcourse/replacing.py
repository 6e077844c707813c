"""在 with 块里换掉一个库函数（自检用）：replaced 换成包装过的版本，forbid（checks.py）换成报错的版本。

换两处：
1. 引用：模块属性，以及 notebook 里指向同一个函数的名字、闭包变量、默认参数、jit 包着的原函数、全局 dict/list 的元素；
   C 实现的函数（numpy 的 ufunc）和类没有 Python 代码可盯，同一个库里指向它的其他模块属性也换掉；
2. 代码（forbid 和 counting）：用 sys.monitoring 盯住函数的代码对象。不管学习者从哪个别名、partial、元组、绑定方法、
   内部模块路径拿到它，只要是学习者的代码（经过 jit、vmap、tree.map 这类变换）调用了它，就报错；
   库里别的函数经由内部路径调用它不算（jnp.linalg.inv 内部调用 solve，禁用 solve 时 inv 照常能用）；
   经由公开的模块属性调用它的库函数（optax 调用 jax.nn.log_softmax）会被拦下，因为第 1 步换掉了那个属性。
"""

from __future__ import annotations

import itertools
import os
import sys
import sysconfig
import types
from contextlib import contextmanager


def resolve(name: str):
    """"jax.numpy.bincount" → (jax.numpy 模块, "bincount")；"jax.stages.Compiled.cost_analysis" → (Compiled 类, "cost_analysis")。"""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:-1]:  # 模块之后的类名
            owner = getattr(owner, part)
        return owner, parts[-1]
    raise ValueError(f"找不到 {name!r}（应写成“模块.名字”或“模块.类.方法”）")


def notebook_namespaces(depth: int) -> list[dict]:
    """要换引用的全局命名空间：__main__（notebook），以及调用者所在的模块（depth 层之外的栈帧）。"""
    spaces = [vars(sys.modules["__main__"])]
    caller = sys._getframe(depth + 1).f_globals
    if all(caller is not ns for ns in spaces):
        spaces.append(caller)
    return spaces


_scope: list = []                 # 一个 jax.make_user_context，第一次用时才建（建它不是线程安全的）
_scope_values = itertools.count(1)


@contextmanager
def fresh_traces():
    """with 块里 JAX 的追踪、编译缓存看不到块外已有的条目，块里新建的条目也不会在块外命中：给缓存键加一个每块都不同的值
    （公开的 jax.make_user_context，它本来就是“值一变，jit 就重新追踪、重新编译”的开关）。自检要用它：jit 过的答案
    得在块里重新追踪一遍，才会调用到替身、被盯住或被改参数的函数。以前用 jax.clear_caches()，效果一样，但块外（整个
    notebook）已经编译好的程序也全丢了，之后每个调用都要重编，一章自检里几百个探测就是几百次全部重编。
    设的是全局值，不是线程局部值：答案交给线程池跑的调用也在块里。例外：直接调用时逐个执行的单个运算，编译好的
    程序有的仍会命中（进阶 04 的 _eager_shapes04 量到 5 次编译里只剩 3 次），要数这类编译的检查自己清缓存。
    这个开关在第一次用时才加进 JAX 的缓存键：在那之前编译的程序，之后会重新追踪一次（一个 notebook 只在第一个检查时付一次）。"""
    import jax

    if not _scope:
        _scope.append(jax.make_user_context(None))
    previous = _scope[0].get_global()
    _scope[0].set_global(next(_scope_values))
    try:
        yield
    finally:
        _scope[0].set_global(previous)


@contextmanager
def swapping(pairs: list[tuple[str, object]], namespaces: list[dict]):
    """pairs 是（"模块.名字"，替身）：with 块里换掉模块属性和 namespaces 里的各种引用，退出时原样还原。"""
    saved = []
    try:
        for name, replacement in pairs:
            owner, attr = resolve(name)
            original = getattr(owner, attr)
            saved.append((owner, attr, original))
            setattr(owner, attr, replacement)
            for ns in namespaces:
                saved.extend(_swap_references(ns, original, replacement))
            if not _functions_behind(original):  # C 实现的函数、类：盯不住代码，同一个库里指向它的别的模块属性也换掉
                saved.extend(_swap_in_library(name.split(".")[0], original, replacement))
        with fresh_traces():  # 已经编译过的答案要重新追踪，才会走到替身
            yield
    finally:
        for target, attr, original in reversed(saved):
            if isinstance(target, (dict, list)):
                target[attr] = original
            else:
                setattr(target, attr, original)


@contextmanager
def replaced(name: str, make):
    """with 块里把 name（"模块.名字"或"模块.类.方法"）换成 make(原函数) 的结果，notebook 里的别名一起换；
    块里 JAX 的追踪缓存从空的开始（fresh_traces）。with 的值是替身。自检用它数调用次数、放大求解器的结果之类：

        with jaxcourse.replaced("jax.lax.while_loop", lambda orig: counting(orig)):
            answer(x)
    """
    owner, attr = resolve(name)
    replacement = make(getattr(owner, attr))
    with swapping([(name, replacement)], notebook_namespaces(2)):
        yield replacement


def _swap_in_library(root: str, original, replacement) -> list[tuple]:
    """已导入的 root 包（"numpy"、"jax"）的各个模块里，指向 original 的属性（定义它的内部模块等）换成 replacement。"""
    swapped = []
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name.split(".")[0] != root:
            continue
        space = getattr(module, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for key, value in list(space.items()):
            if value is original:
                swapped.append((space, key, original))
                space[key] = replacement
    return swapped


def _swap_references(ns: dict, original, replacement) -> list[tuple]:
    """把 notebook 里指向 original 的引用换成 replacement，返回（容器，键，原值）以便还原。

    不只看全局名字：notebook 里定义的函数的闭包变量、默认参数（`def f(x, bc=jnp.bincount)`）、
    jit 包着的原函数（`__wrapped__`），以及全局 dict / list 里的元素，也都换掉。
    """
    swapped, seen = [], set()
    home = ns.get("__name__")

    def visit(obj, depth=0):
        if id(obj) in seen or depth > 6:
            return
        seen.add(id(obj))
        if isinstance(obj, (dict, list)) and (obj is ns or depth <= 1):
            keys = list(obj.keys()) if isinstance(obj, dict) else range(len(obj))
            for key in keys:
                value = obj[key]
                if value is original:
                    swapped.append((obj, key, original))
                    obj[key] = replacement
                else:
                    visit(value, depth + 1)
            return
        try:
            func = getattr(obj, "__wrapped__", None)
        except Exception:  # 有的对象的 __getattr__ 会抛别的异常：它不是函数包装，跳过
            func = None
        if func is not None:
            visit(func, depth + 1)
        if not isinstance(obj, types.FunctionType) or obj.__module__ != home:
            return  # 库里的函数不动：只换学习者自己写的
        for cell in obj.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # 还没赋值的闭包变量
                continue
            if value is original:
                swapped.append((cell, "cell_contents", original))
                cell.cell_contents = replacement
            else:
                visit(value, depth + 1)
        if obj.__defaults__ and any(d is original for d in obj.__defaults__):
            swapped.append((obj, "__defaults__", obj.__defaults__))
            obj.__defaults__ = tuple(replacement if d is original else d for d in obj.__defaults__)
        kw = obj.__kwdefaults__ or {}
        for key, value in kw.items():
            if value is original:
                swapped.append((kw, key, original))
                kw[key] = replacement

    visit(ns)
    return swapped


# ---- 盯住代码对象（forbid 用）-------------------------------------------------------------

# 只负责“把函数交给别人调用”的库文件：jit / vmap / grad / tree.map / 控制流 / partial 这些变换和包装。
# 从被禁函数往调用方向上走时跳过它们，看是谁把函数交进来的。JAX 升级挪动了文件，最坏是少拦一些（引用仍然换掉）。
_PASS_THROUGH = tuple(os.path.join("jax", "_src", p) for p in (
    "api.py", "pjit.py", "api_util.py", "linear_util.py", "traceback_util.py", "core.py", "profiler.py",
    "util.py", "custom_derivatives.py", "ad_checkpoint.py", "tree_util.py", "interpreters", "lax/control_flow",
    "numpy/ufunc_api.py", "numpy/vectorize.py", "checkify.py")) + tuple(
    os.path.join(sysconfig.get_paths()["stdlib"], f) for f in ("functools.py", "contextlib.py"))
# 只是“在别处调用交给它的函数”的标准库：线程、线程池、asyncio、sched。经它们调用的被禁函数，来源是把函数交进去的
# 那段代码；工作线程的调用栈到它们就到顶了，看不到是谁交的，一律算学习者（自检本身不用线程池）。
_DISPATCH = tuple(os.path.join(sysconfig.get_paths()["stdlib"], f) for f in (
    "threading.py", "concurrent", "asyncio", "sched.py", "queue.py", "multiprocessing"))
_LIBRARY = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
                 | {os.path.dirname(os.path.abspath(__file__))})

_watched: dict[types.CodeType, list[tuple]] = {}  # 代码对象 → 列表，每项是（它的闭包变量，名字，学习者调用时做什么）
_tool: list[int] = []                                        # 占用的 sys.monitoring 工具编号


def _functions_behind(obj, depth=0) -> list[types.FunctionType]:
    """obj 背后真正执行的 Python 函数：jit、api_boundary 之类的包装、custom_jvp、方法、jnp.ufunc 都拆开。"""
    if depth > 6 or obj is None:
        return []
    found = [obj] if isinstance(obj, types.FunctionType) else []
    for attr in ("__wrapped__", "fun", "__func__"):
        try:
            inner = getattr(obj, attr, None)
        except Exception:
            inner = None
        if inner is not None and inner is not obj:
            found += _functions_behind(inner, depth + 1)
    # jnp.ufunc（jnp.logaddexp 等）：真正的计算函数存在私有的 __static_props 里；JAX 改了它，只是少拦一些
    props = getattr(obj, "_ufunc__static_props", None)
    if isinstance(props, dict):
        for value in props.values():
            found += _functions_behind(value, depth + 1)
    return found


def _from_learner(frame, code: types.CodeType) -> bool:
    """跳过变换和包装，看调用这个函数（代码 code）的是不是学习者：库以外的代码（notebook、学习者的模块），
    或者一个库函数、而它调用的函数是别人交给它的（jnp.piecewise 的分支、Mock 的 side_effect、equinox.filter_jit
    包着的函数：学习者把被禁函数藏在元组里再交给库）。库函数按名字调用（inv 里的 solve、optax 里的
    jax.nn.log_softmax、按属性名调用的方法）才算库的内部用法；特殊方法（__call__ 之类：config.State.__call__
    每个 jax.config 选项都走它）没有名字可查，被库调用也算内部用法。经线程、线程池转交的调用算学习者的
    （_DISPATCH）：否则把绑定方法交给 ThreadPoolExecutor 就能绕过。"""
    dispatched = False
    while frame is not None and (frame.f_code.co_filename.startswith(("<frozen",) + _DISPATCH)
                                 or any(p in frame.f_code.co_filename for p in _PASS_THROUGH)):
        dispatched = dispatched or frame.f_code.co_filename.startswith(_DISPATCH)
        frame = frame.f_back
    if frame is None or dispatched:
        return dispatched
    if not frame.f_code.co_filename.startswith(_LIBRARY):
        return True
    return not (_dunder(code) or _names_it(frame, code))


def _names_it(frame, code: types.CodeType) -> bool:
    """库函数的帧 frame 是不是按名字调用 code 的函数：名字出现在它的代码里（模块属性 jax.nn.log_softmax、
    全局函数 solve），或者它的某个全局名字背后就是这个函数（换了名字导入的）。"""
    names = frame.f_code.co_names
    if code.co_name in names:
        return True
    found = frame.f_globals
    return any(fn.__code__ is code for n in names if n in found for fn in _functions_behind(found[n]))


def _on_start(code, offset):
    entries = _watched.get(code)
    if not entries:
        return None
    frame = sys._getframe(1)  # 刚开始执行的被盯函数
    local = frame.f_locals
    for cells, name, action, strict in entries:
        if all(local.get(k) is v for k, v in cells.items()) and (strict or _from_learner(frame.f_back, code)):
            action(name, frame) if getattr(action, "wants_frame", False) else action(name)


def _dunder(code: types.CodeType) -> bool:
    """A special method's code (Class.__call__ …): library code calls it through syntax (obj(), obj[k]), so no name
    shows which function it meant; config.State.__call__ runs for every jax.config option."""
    parts = code.co_qualname.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>" and code.co_name.startswith("__") and code.co_name.endswith("__")


def _forbidden(name: str):
    from .checks import ForbiddenCall

    raise ForbiddenCall(f"练习的限制不允许用 {name}")


@contextmanager
def watching(targets: list[tuple[str, object]], action=_forbidden, strict: bool = False):
    """with 块里，学习者的代码一调用 targets（(名字, 函数对象)）背后的任何 Python 函数，就执行 action(名字)：
    默认抛 ForbiddenCall（forbid 用），counting 用它计数。strict：不管是谁调用的（库里别的函数在内部调用也算）。
    Python < 3.12 没有 sys.monitoring：什么也不做。"""
    monitoring = getattr(sys, "monitoring", None)
    added = []
    if monitoring is not None:
        if not _tool:
            free = [i for i in range(6) if monitoring.get_tool(i) is None]
            if free:
                monitoring.use_tool_id(free[-1], "jaxcourse.forbid")
                monitoring.register_callback(free[-1], monitoring.events.PY_START, _on_start)
                _tool.append(free[-1])
        if _tool:
            for name, obj in targets:
                for fn in _functions_behind(obj):
                    cells = {}
                    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
                        try:
                            cells[var] = cell.cell_contents
                        except ValueError:
                            pass
                    entry = (cells, name, action, strict)
                    _watched.setdefault(fn.__code__, []).append(entry)
                    added.append((fn.__code__, entry))
                    monitoring.set_local_events(_tool[0], fn.__code__, monitoring.events.PY_START)
    try:
        yield
    finally:
        for code, entry in added:
            _watched[code].remove(entry)
            if not _watched[code]:
                del _watched[code]
                monitoring.set_local_events(_tool[0], code, 0)
        if _tool and not _watched:
            monitoring.register_callback(_tool[0], monitoring.events.PY_START, None)
            monitoring.free_tool_id(_tool.pop())


_told_skipped: list = []


@contextmanager
def rewriting(name: str, **edits):
    """with 块里，name（"模块.名字"）每被调用一次（谁调用都算），就在它开始执行时把参数 key 换成 edits[key](原值)，
    例如 rewriting("jax.pure_callback", callback=放大 1.5 倍的包装)。“扰动后结果要跟着变”的检查用它：函数对象本身
    不换，答案用 `is` 认不出（replaced 换上的替身认得出，答案就能只在被检查时老实）。块里的计算也不许交给别的进程
    （processes.in_this_process）。

    with 的值有 .calls（改了几次）和 .effective：改参数要写回正在执行的帧的局部变量，Python 3.13 起才行；
    3.12 上什么也不改（.effective 为 False），检查应跳过这一项。块里 JAX 的追踪缓存从空的开始（fresh_traces）：
    之前编译好的程序不会带着旧参数绕过去，改过的程序也不会留到块外。"""
    owner, attr = resolve(name)
    original = getattr(owner, attr)
    state = types.SimpleNamespace(calls=0, effective=sys.version_info >= (3, 13) and hasattr(sys, "monitoring"))
    made: list = []   # 改出来的值：参数一层层往里传时，里层见到的已是改过的，不再改一遍

    def action(_name, frame):
        local = frame.f_locals
        for key, edit in edits.items():
            if key in local and not any(local[key] is m for m in made):
                made.append(edit(local[key]))
                local[key] = made[-1]
                state.calls += 1

    action.wants_frame = True
    if not state.effective:
        if not _told_skipped:   # 学习者该知道自检少查了什么（Colab 默认的 Python 3.12 就是这样）
            _told_skipped.append(True)
            print("ℹ️ 这台机器的 Python 低于 3.13：改参数的检查（“扰动后结果要跟着变”）跳过了，其余检查照常。")
        yield state
        return
    targets = [(name, fn) for fn in _functions_behind(original)
               if set(edits) & set(fn.__code__.co_varnames[:fn.__code__.co_argcount + fn.__code__.co_kwonlyargcount])]
    if not targets:
        raise ValueError(f"{name} 没有叫 {'、'.join(edits)} 的参数")
    from .processes import in_this_process

    with fresh_traces(), watching(targets, action=action, strict=True), in_this_process():   # 交给别的进程的调用改不到
        yield state


@contextmanager
def counting(*names: str):
    """with 块里数学习者的代码直接调用 names（"模块.名字"）的次数；with 的值是 {名字: 次数} 的字典。

    和 forbid 一样盯住函数的代码对象：经由别名、闭包、partial、元组、绑定方法、内部模块路径调用都算，
    经过 jit、vmap 这类变换调用也算（追踪时的那一次）；库里别的函数在内部调用它不算。
    C 实现的函数（numpy 的 ufunc）没有代码可盯：换成数次数的包装（notebook 里的别名一起换）。
    块里的计算也不许交给别的进程（processes.in_this_process）：那里的调用数不到。"""
    import functools

    counts = {name: 0 for name in names}

    def count(name):
        counts[name] += 1

    def wrapper(name, original):
        @functools.wraps(original)
        def counted(*args, **kwargs):
            count(name)
            return original(*args, **kwargs)
        return counted

    targets, wrapped = [], []
    for name in names:
        owner, attr = resolve(name)
        original = getattr(owner, attr)
        if _functions_behind(original):
            targets.append((name, original))
        else:
            wrapped.append((name, wrapper(name, original)))
    from .processes import in_this_process

    with swapping(wrapped, notebook_namespaces(2)), watching(targets, action=count), in_this_process():   # 别的进程里的调用数不到
        yield counts


def grows_on_host(run, small, large, names, slack: int = 1000) -> bool:
    """直接调用（不在 jit 里）run(small) 和 run(large)：学习者的代码调用 names 的次数不同，或者 Python 层的函数调用
    多出 slack 次以上，就是 True（在主机上按批大小循环了）。向量化的写法调用次数与批大小无关；
    逐个算的写法（哪怕每一步调用 jit 过的函数）两个数里总有一个跟着变。直接调用时一律不许用主机回调，也不许
    把循环交给别的进程（子进程、进程池、事先起好的工作进程里的循环这里数不到）。调用次数用 counting 数（元组、partial 里的别名也算），Python 调用用
    sys.setprofile 数，所有线程都算（答案另起线程去循环也数得到；有几十次的起伏）。
    每个批大小先在同一个检查块里运行一次、不计数：块里 JAX 的追踪缓存是空的，两个批大小都要先追踪、编译一遍，
    编译时 Python 层的调用有几千次，哪个批大小碰巧用上了 XLA 已经编译好的程序，两边的数就差出几千。
    测不到的：整个循环都在 C 里（map 套 jit 过的函数再 np.stack，用 executions_grow 数），缓存命中的 jit 调用
    不产生 Python 调用。"""
    import threading

    import jax

    from .checks import forbid

    def measure(n):
        calls = [0]

        def profile(frame, event, arg):
            calls[0] += 1
        # forbid 块里也不许把循环交给别的进程（processes.in_this_process）
        with forbid("jax.pure_callback", "jax.experimental.io_callback"), counting(*names) as counted:
            jax.block_until_ready(run(n))          # 追踪、编译不算
            counted.update(dict.fromkeys(counted, 0))
            threading.setprofile_all_threads(profile)
            try:
                jax.block_until_ready(run(n))
            finally:
                threading.setprofile_all_threads(None)
        return sum(counted.values()), calls[0]

    (r1, p1), (r2, p2) = measure(small), measure(large)
    return r1 != r2 or p2 - p1 >= slack
