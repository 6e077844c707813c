"""统计 XLA 编译次数：用 jax.monitoring 的编译事件，而不是猜。"""

from __future__ import annotations

import re
from contextlib import contextmanager

_EVENT = "/jax/core/compile/backend_compile_duration"
_active: list["CompileLog"] = []
_registered = False


class CompileLog:
    """一个统计窗口里记录到的编译：`count` 是次数，`names` 是每次编译的函数名。"""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.names: list[str] = []

    def matches(self, fun_name: str) -> bool:
        if self.name is None:
            return True
        return fun_name == self.name or re.fullmatch(rf"\w+\({re.escape(self.name)}\)", fun_name) is not None

    def record(self, fun_name: str) -> None:
        """记下一次编译（子类可以覆盖它，顺带记录别的信息）。"""
        self.names.append(fun_name)

    @property
    def count(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"CompileLog(name={self.name!r}, count={self.count})"


def _listener(event: str, duration: float, **kwargs) -> None:
    if event != _EVENT:
        return
    fun_name = str(kwargs.get("fun_name", ""))
    for log in _active:
        if log.matches(fun_name):
            log.record(fun_name)


@contextmanager
def count_compiles(name: str | None = None):
    """统计 with 块里函数 `name`（例如 "f" 会匹配 jit(f)）被编译的次数。

    name=None 时统计所有编译，包括逐条执行（eager）的小运算（它们也会编译），通常应该给出函数名。
    """
    log = start(CompileLog(name))
    try:
        yield log
    finally:
        stop(log)


def start(log: CompileLog) -> CompileLog:
    """开始把编译事件记进 log（第一次调用时才导入 JAX 并注册监听器）；返回 log。"""
    global _registered
    import jax.monitoring

    if not _registered:
        jax.monitoring.register_event_duration_secs_listener(_listener)
        _registered = True
    _active.append(log)
    return log


def stop(log: CompileLog) -> None:
    """停止记录 log（没有在记录时什么也不做）。"""
    if log in _active:
        _active.remove(log)
