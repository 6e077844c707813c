"""练习自检，以及旧写法的预期报错 / 预期警告。"""

from __future__ import annotations

import re
import sys
import warnings
from contextlib import contextmanager

# 有些报错（例如 Pallas 的 TPU lowering）把带颜色的 jaxpr 嵌进消息里；终端颜色码不该进保存的输出。
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

PASS, PENDING, FAIL = "✅", "⏳", "❌"


def selfcheck(exercise: str, names: list[str], checks: list[tuple], *, namespace: dict | None = None) -> None:
    """运行练习 `exercise` 的自检，打印 ✅ / ⏳ / ❌ 中的一种。

    names：题目要求定义的名字；任何一个还没定义就显示 ⏳，不做检查。
    checks：（无参函数，提示）的列表，按顺序检查；第一个不成立的显示 ❌ 和它的提示。
    提示只说哪里不对，不给出期望的答案；检查函数抛出的异常也只显示类型和消息。
    """
    ns = namespace if namespace is not None else sys._getframe(1).f_globals
    missing = [n for n in names if n not in ns]
    if missing:
        print(f"{PENDING} 练习 {exercise}：还没有定义 {'、'.join(missing)}。"
              "先在上面的 ✍️ 作答区写好代码并运行，再运行本格。")
        return
    for check, hint in checks:
        marks = [len(names) for names in _refused]
        try:
            ok = bool(check())
        except Exception as exc:  # 学习者的代码可能抛出任何异常：报告类型，不中断 notebook
            refused = _take_refusals(marks)
            if isinstance(exc, ForbiddenCall) or refused:   # 违反限制才是真正的原因：放在最前面
                print(f"{FAIL} 练习 {exercise}\uff1a" + (str(exc) if isinstance(exc, ForbiddenCall)
                                                         else f"练习的限制不允许用 {refused[0]}"))
            else:
                print(f"{FAIL} 练习 {exercise}\uff1a{hint}（检查时出错：{type(exc).__name__}: {exc}）{_known_cause(exc)}")
            return
        refused = _take_refusals(marks)
        if refused:   # 这条检查期间有调用被拦下：不管检查本身是否通过（答案可能接住了错误），都报限制
            print(f"{FAIL} 练习 {exercise}\uff1a练习的限制不允许用 {refused[0]}" + ("（调用被拦下后，错误被接住了）" if ok else ""))
            return
        if not ok:
            print(f"{FAIL} 练习 {exercise}\uff1a{hint}")
            return
    print(f"{PASS} 练习 {exercise}：通过！")


#: 学习者常撞上、JAX 的报错又没说出原因的错误：（异常类型，消息的正则，原因和改法）
_KNOWN_CAUSES = [
    (NotImplementedError, r"primitive 'program_id' not found",
     "解释模式下 pl.program_id 不能在 pl.when、fori_loop 的函数体里调用：在函数体外先把程序号读进变量，"
     "函数体里用这个变量（进阶 07 的 7.4 节）"),
]


def _known_cause(exc: BaseException) -> str:
    """exc 是 _KNOWN_CAUSES 里的哪一种：返回换行加上原因和改法，都不是时返回空串。"""
    for kind, pattern, cause in _KNOWN_CAUSES:
        if isinstance(exc, kind) and re.search(pattern, str(exc)):
            return f"\n   原因：{cause}"
    return ""


_SUGGESTION = re.compile(r"\. Did you mean '[^']*'\?$")


@contextmanager
def expect_error(error_type: type[BaseException], match: str | None = None):
    """断言代码块抛出 error_type（消息可选地匹配正则 match），并打印真实的报错。

    没有报错、或报了别的类型，都会让本单元格失败，这样 JAX 行为一变，校验就会发现。
    """
    try:
        yield
    except error_type as exc:
        message = _ANSI.sub("", str(exc))
        if match is not None and not re.search(match, message):
            raise AssertionError(f"报错类型对了，但消息不含 {match!r}:{message}") from exc
        first = message.strip().splitlines()[0] if message.strip() else ""
        # Python 3.13 adds "Did you mean 'x'?" to some messages, 3.12 does not: print what every Python says
        first = _SUGGESTION.sub("", first)
        print(f"预期中的报错 → {type(exc).__name__}: {first}")
    else:
        raise AssertionError(f"预期这里会抛出 {error_type.__name__}，但代码正常运行了")


@contextmanager
def expect_warning(category: type[Warning], match: str | None = None):
    """断言代码块发出 category 类警告（消息可选地匹配 match），并打印它。"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    hits = [w for w in caught if issubclass(w.category, category)
            and (match is None or re.search(match, str(w.message)))]
    if not hits:
        seen = "、".join(f"{w.category.__name__}: {w.message}" for w in caught) or "没有任何警告"
        raise AssertionError(f"预期 {category.__name__}" + (f"（含 {match!r}）" if match else "") + f"，实际：{seen}")
    for w in hits:
        first = _ANSI.sub("", str(w.message)).strip().splitlines()[0]
        print(f"预期中的警告 → {w.category.__name__}: {first}")


class ForbiddenCall(AssertionError):
    """练习限制里禁止的函数被调用了。"""


# 正在生效的 forbid 块（由外到内）各自记下的被拦下的调用。selfcheck 逐条检查时取走检查期间新记下的：
# 答案接住了 ForbiddenCall、检查照样通过，也显示 ❌；没被 selfcheck 取走的，forbid 块结束时抛出。
_refused: list[list[str]] = []


def _take_refusals(marks: list[int]) -> list[str]:
    taken = []
    for names, mark in zip(_refused, marks):
        taken += names[mark:]
        del names[mark:]
    return taken


@contextmanager
def forbid(*names: str, strict: bool = False):
    """检查练习的“限制”：with 块里调用 names 里的任何一个函数（如 "jax.numpy.bincount"，或类的方法
    "jax.stages.Compiled.cost_analysis"）就抛 ForbiddenCall。

    两道关（见 replacing.py）：换掉模块属性和 notebook 里指向同一个函数的引用（`from jax.nn import logsumexp`
    之后的 `logsumexp`、闭包变量、默认参数、jit 包着的原函数、全局 dict/list 的元素）；再盯住函数的代码，
    学习者的代码经由任何别名（partial、元组、绑定方法、内部模块路径）调用它，也会被拦下。库里别的函数经由内部路径
    调用它不算；经由公开的模块属性调用它的（optax 调用 jax.nn.log_softmax）会被拦下，要禁的是这类库函数时把它们也列上。
    块里的计算也不许交给别的进程（processes.in_this_process：起进程、事先起好的工作进程干活都算违反）。
    答案用 try/except 接住 ForbiddenCall 换条路算也不行：块里的 selfcheck 把那条检查显示为 ❌，块外的调用在块结束时抛出。
    块里 JAX 的追踪缓存从空的开始（replacing.fresh_traces），jit 过的答案在块里重新追踪一遍，禁用的函数才会被发现。
    strict=True：块里谁调用都算（库里别的函数在内部调用也拦下），用来禁掉一个计算本身，不管绕过哪个库函数
    （例如 dot_product_attention、stax 内部的 log-sum-exp）；只在参考答案确实用不到它时用。
    在自检的检查函数里用：`with jaxcourse.forbid("jax.numpy.bincount"): return 检查(my_hist(x))`，
    违反限制时 selfcheck 显示 ❌ 和“练习的限制不允许用 …”。
    """
    from .processes import in_this_process
    from .replacing import notebook_namespaces, resolve, swapping, watching

    attempted: list[str] = []   # 答案把 ForbiddenCall 接住（try/except）继续算，块结束时照样报

    def refuse(name):
        attempted.append(name)
        raise ForbiddenCall(f"练习的限制不允许用 {name}")

    def blocked_for(name):
        def blocked(*args, **kwargs):
            refuse(name)
        return blocked

    try:
        originals = [(name, getattr(*resolve(name))) for name in names]
    except ValueError as err:
        raise ValueError(f"forbid：{err}") from None
    _refused.append(attempted)
    try:
        with swapping([(name, blocked_for(name)) for name in names], notebook_namespaces(2)), \
                watching(originals, action=refuse, strict=strict), in_this_process(refuse):
            yield
    finally:
        del _refused[next(i for i, names in enumerate(_refused) if names is attempted)]
    if attempted:
        raise ForbiddenCall(f"练习的限制不允许用 {attempted[0]}（调用被拦下后，错误被接住了）")
