"""迷你 JAX 的报错：名字和 JAX 的一样，读者在真 JAX 里会遇到同样的类型。"""


class ConcretizationTypeError(TypeError):
    """A traced value was needed as a concrete Python value (bool, float, int)."""

    def __init__(self, tracer, what):
        super().__init__(f"Abstract tracer value encountered where concrete value is expected: {what} of "
                         f"traced array with shape {tracer.aval}.（追踪时只知道形状和 dtype，不知道具体的数：Python 的 "
                         f"if/while 要用 cond/while_loop，或把它标成静态参数）")


class TracerBoolConversionError(ConcretizationTypeError):
    """bool() of a tracer: a Python `if` on a traced value."""

    def __init__(self, tracer):
        TypeError.__init__(self, f"Attempted boolean conversion of traced array with shape {tracer.aval}.（Python 的 "
                           "if 要在追踪时就知道真假；改用 cond / where，或把它标成静态参数）")
