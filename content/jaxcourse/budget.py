"""编译预算：一段代码最多允许编译 N 次，超出就报错，并说明是什么重新编译了、为什么。

    with compile_budget(max_compiles=1, name="train") as b:
        train(params, data)
    assert b.count == 1

    @compile_budget(max_compiles=1, name="step")     # 装饰器：每次调用各有一份预算
    def run_epoch(...): ...

编译次数来自 `compiles.py` 的编译事件（`jax.monitoring`）；“为什么”来自
`jax.explain_cache_misses()`：它把每次追踪缓存未命中的原因写到日志记录器 `jax`
（及其子记录器）里，预算在 with 块里把这些日志收下来，写进超支报告。
导入本模块只用标准库；JAX 在进入 with 块时才导入。
"""

from __future__ import annotations

import functools
import logging
import re
from contextlib import ExitStack

from .compiles import CompileLog, start, stop

__all__ = ["CompileBudget", "CompileBudgetExceeded", "compile_budget"]

_LOGGER = "jax"
_MISS_MARK = "CACHE MISS"
# jax.log_compiles() 在每次编译前写的一行：函数名和输入的形状/类型（不含静态参数）
_SIGNATURE = re.compile(r"^Compiling (\S+) with global shapes and types \((.*)\)\. Argument mapping", re.S)
_SHAPED = re.compile(r"ShapedArray\(([^()]*)\)")
_OBJECT_ID = re.compile(r" id=\d+")  # 函数对象的 id 每次运行都不同，报告里去掉


class CompileBudgetExceeded(AssertionError):
    """编译次数超出预算；消息就是 `CompileBudget.report()` 的可读报告。"""


class _Timeline(CompileLog):
    """按发生顺序记下编译事件 ("compile", 函数名) 和缓存未命中说明 ("miss", 文本)。"""

    def __init__(self, name: str | None) -> None:
        super().__init__(name)
        self.events: list[tuple[str, str]] = []

    def record(self, fun_name: str) -> None:
        super().record(fun_name)
        self.events.append(("compile", fun_name))


class _MissHandler(logging.Handler):
    """收下写到记录器 `jax` 的“CACHE MISS”说明（explain_cache_misses）和编译签名（log_compiles）。"""

    def __init__(self, timeline: _Timeline, name: str | None) -> None:
        super().__init__(logging.DEBUG)
        self.timeline = timeline
        # 说明里这样提到函数："never seen function:\n    f id=…" 或 "for f defined at …"
        self.pattern = None if name is None else re.compile(
            rf"(?:never seen function:\s+|for ){re.escape(name)} (?:id=|defined at)")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # 日志参数格式化失败不应该打断被测代码
            return
        sig = _SIGNATURE.match(text)
        if sig is not None:
            if self.timeline.matches(sig.group(1)):
                types = _SHAPED.sub(lambda m: m.group(1), sig.group(2)).rstrip(",")
                self.timeline.events.append(("signature", f"({types})"))
            return
        if _MISS_MARK not in text:
            return
        if self.pattern is not None and not self.pattern.search(text):
            return
        self.timeline.events.append(("miss", _OBJECT_ID.sub("", text).rstrip()))


class CompileBudget:
    """一份编译预算：with 块（或被装饰函数的一次调用）里最多 `max_compiles` 次编译。

    name：只数名为 name 的函数（与 `count_compiles` 相同，"f" 匹配 jit(f)）；None 数所有编译，
    包括逐条执行（eager）的小运算。explain：是否打开 `jax.explain_cache_misses()` 和 `jax.log_compiles()`
    收集原因和每次编译的输入类型（这些日志在块里被预算收下，不再打印）。
    超支时在 with 块结束处抛出 `CompileBudgetExceeded`；块里已经抛出的异常原样传出。
    """

    def __init__(self, max_compiles: int = 1, name: str | None = None, *, explain: bool = True) -> None:
        if not isinstance(max_compiles, int) or max_compiles < 0:
            raise ValueError(f"max_compiles 必须是不小于 0 的整数，收到 {max_compiles!r}")
        self.max_compiles = max_compiles
        self.name = name
        self.explain = explain
        self._timeline = _Timeline(name)
        self._stack: ExitStack | None = None

    @property
    def count(self) -> int:
        """到目前为止记到的编译次数。"""
        return self._timeline.count

    @property
    def names(self) -> list[str]:
        """每次编译的函数名（按顺序），例如 ['jit(train)']。"""
        return list(self._timeline.names)

    @property
    def explanations(self) -> list[str]:
        """收集到的缓存未命中说明（按顺序，已去掉每次运行都不同的对象 id）。"""
        return [text for kind, text in self._timeline.events if kind == "miss"]

    @property
    def signatures(self) -> list[str]:
        """每次编译的输入形状和类型（来自 jax.log_compiles，不含静态参数），例如 ['(float32[3])']。"""
        return [text for kind, text in self._timeline.events if kind == "signature"]

    @property
    def exceeded(self) -> bool:
        """编译次数是否已经超过预算。"""
        return self.count > self.max_compiles

    def _label(self) -> str:
        return f"「{self.name}」" if self.name is not None else "这段代码"

    def report(self) -> str:
        """可读的报告：预算、实际次数、每次编译的输入类型及其前面的缓存未命中说明。"""
        lines = [f"编译预算：{self._label()}最多允许编译 {self.max_compiles} 次，实际编译了 {self.count} 次。"]
        pending: list[str] = []
        signature = ""
        seen: dict[str, int] = {}  # 输入签名 → 第一次以它编译的序号
        k = 0
        for kind, text in self._timeline.events:
            if kind == "miss":
                pending.append(text)
                continue
            if kind == "signature":
                signature = text
                continue
            k += 1
            head = f"第 {k} 次编译：{text}"
            if signature:
                head += f"，输入 {signature}"
            lines.append(head + ("  ← 超出预算" if k > self.max_compiles else ""))
            key = f"{text} {signature}"
            if signature and key in seen:
                lines.append(f"    注意：输入的形状和类型与第 {seen[key]} 次编译完全相同，变化在别处"
                             "（静态参数的值、pytree 结构、jax.config 配置，或者是另一个同名函数）")
            elif signature:
                seen[key] = k
            for miss in pending:
                lines.append("    原因（jax.explain_cache_misses）：")
                lines += ["      " + ln for ln in miss.splitlines()]
            if not pending and self.explain:
                lines.append("    原因：JAX 没有给出说明（逐条执行（eager）的小运算，或不经过 jit 追踪缓存的编译）")
            pending, signature = [], ""
        if pending:
            lines.append(f"另有 {len(pending)} 条缓存未命中说明之后没有发生编译（重新追踪的结果命中了编译缓存）：")
            for miss in pending:
                lines += ["      " + ln for ln in miss.splitlines()]
        return "\n".join(lines)

    def __enter__(self) -> "CompileBudget":
        if self._stack is not None:
            raise RuntimeError("同一个 CompileBudget 不能嵌套进入；每个 with 块请新建一个")
        self._timeline = _Timeline(self.name)
        stack = ExitStack()
        if self.explain:
            import jax

            logger = logging.getLogger(_LOGGER)
            handler = _MissHandler(self._timeline, self.name)
            logger.addHandler(handler)
            stack.callback(logger.removeHandler, handler)
            stack.enter_context(jax.explain_cache_misses())
            stack.enter_context(jax.log_compiles())
        start(self._timeline)
        stack.callback(stop, self._timeline)
        self._stack = stack
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()
        if exc_type is None and self.exceeded:
            raise CompileBudgetExceeded(self.report())
        return False

    def __call__(self, fn):
        """装饰器写法：被装饰函数的每次调用都在一份新的同样预算里运行。"""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            budget = CompileBudget(self.max_compiles, self.name, explain=self.explain)
            wrapper.last_budget = budget
            with budget:
                return fn(*args, **kwargs)

        wrapper.last_budget = None
        return wrapper

    def __repr__(self) -> str:
        return f"CompileBudget(max_compiles={self.max_compiles}, name={self.name!r}, count={self.count})"


def compile_budget(max_compiles: int = 1, name: str | None = None, *, explain: bool = True) -> CompileBudget:
    """编译预算：`with compile_budget(1, name="train") as b: ...`，或当装饰器用；超支抛 CompileBudgetExceeded。"""
    return CompileBudget(max_compiles, name, explain=explain)
