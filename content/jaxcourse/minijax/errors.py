"""迷你 JAX 的报错：名字和 JAX 的一样，读者在真 JAX 里会遇到同样的类型。

迷你 JAX 没有的功能报 Unsupported（NotImplementedError 的子类），说明缺的是什么：宁可报错，不给错的答案。
"""


class ConcretizationTypeError(TypeError):
    """A traced value was needed as a concrete Python value (bool, float, int)."""

    def __init__(self, tracer, what):
        super().__init__(f"Abstract tracer value encountered where concrete value is expected: {what} of "
                         f"traced array with shape {tracer.aval.long()}.（追踪时只知道形状和 dtype，不知道具体的数：Python 的 "
                         f"if/while 要用 cond/while_loop，或把它标成静态参数）")


class TracerBoolConversionError(ConcretizationTypeError):
    """bool() of a tracer: a Python `if` on a traced value."""

    def __init__(self, tracer):
        TypeError.__init__(self, f"Attempted boolean conversion of traced array with shape {tracer.aval.long()}."
                           "（Python 的 if 要在追踪时就知道真假；改用 cond / where，或把它标成静态参数）")


class TracerIntegerConversionError(TypeError):
    """__index__ of a tracer: range(n), a list index or a shape from a traced value."""

    def __init__(self, tracer):
        super().__init__(f"The __index__() method was called on traced array with shape {tracer.aval.long()}."
                         "（range、列表下标、形状要的是 Python 整数：把它标成静态参数）")


class Unsupported(NotImplementedError, AttributeError):
    """Something JAX has and the mini-JAX does not (also an AttributeError, so hasattr() stays False)."""


def unsupported(what: str, hint: str = "") -> Unsupported:
    return Unsupported(f"迷你 JAX 不支持 {what}" + (f"：{hint}" if hint else "") + "。请在本地或 Colab 用真 JAX 运行。")


def no_options(name: str, options: dict) -> None:
    """Refuse keyword arguments of JAX's function that the mini-JAX's version does not have."""
    if options:
        raise unsupported(f"{name} 的参数 {', '.join(sorted(options))}", "迷你 JAX 的这个函数只有最常用的参数")
