"""dtype 规则，全部在这一个文件里：JAX 的类型提升（含 bool 和弱类型），以及 lax 对 dtype 的检查。

迷你 JAX 只有四种 dtype：bool、int32、uint32、float32。Python 的 int、float 是**弱类型**（weak type）：
它们没有自己的位宽，遇到数组就随数组的 dtype。JAX 的类型提升格（jax.numpy.promote_types）在这四种上是：

    bool  <  弱 int  <  int32 / uint32        弱 int  <  弱 float  <  float32

两个 dtype 的结果是它们在格上的最小上界：bool + 弱 int → 弱 int32（`1 - mask`），int32 + 弱 float →
弱 float32（`i * 2.5`），int32 + uint32 → int32（JAX 不开 x64 时 int64 退回 int32），int32 + float32 → float32。
jax.numpy 的函数先按这条规则把操作数转换成同一个 dtype（jaxpr 里看得到 convert_element_type），
再交给 lax 的原语；原语本身（和 lax 一样）要求强类型的操作数 dtype 相同，不做提升。
"""

from __future__ import annotations

FLOAT, INT, UINT, BOOL = "float32", "int32", "uint32", "bool"
KIND = {BOOL: 0, INT: 1, UINT: 1, FLOAT: 2}        # 0 布尔，1 整数，2 浮点


_NAMES = {"float32": FLOAT, "float64": FLOAT, "float": FLOAT, "int32": INT, "int64": INT, "int": INT,
          "uint32": UINT, "uint64": UINT, "bool": BOOL, "bool_": BOOL}


def canonical(dtype) -> str:
    """A dtype the reader wrote (jnp.float32, float, 'int32', np.float64 ...) as one of the four names.

    Like JAX without x64: 64-bit types become their 32-bit ones. Others (float16, int8 ...) are not modelled.
    """
    name = getattr(dtype, "__name__", None) if isinstance(dtype, type) else str(dtype)
    if name in _NAMES:
        return _NAMES[name]
    from .errors import unsupported
    raise unsupported(f"dtype {name}", "迷你 JAX 只有 float32、int32、uint32、bool 四种 dtype")


def is_float(dtype: str) -> bool:
    return dtype == FLOAT


def of_python(x) -> tuple[str, bool]:
    """A Python scalar's (dtype, weak): int → weak int32, float → weak float32, bool → bool (never weak)."""
    if isinstance(x, bool):
        return BOOL, False
    return (INT if isinstance(x, int) else FLOAT), True


def of_list(items) -> str:
    """The dtype of a (flattened) list: bool if all are bools, int32 if all are ints, else float32 (strong)."""
    if all(isinstance(v, bool) for v in items):
        return BOOL
    return INT if all(isinstance(v, int) and not isinstance(v, bool) for v in items) else FLOAT


def result_type(*avals) -> tuple[str, bool]:
    """jnp's promotion: (dtype, weak) of combining operands with these abstract values."""
    kind = max(KIND[a.dtype] for a in avals)
    strong = {a.dtype for a in avals if not a.weak_type and KIND[a.dtype] == kind}
    if kind == 0:
        return BOOL, False
    if kind == 2:
        return FLOAT, not strong
    if not strong:
        return INT, True
    return (UINT if strong == {UINT} else INT), False


def inexact(dtype: str, weak: bool) -> tuple[str, bool]:
    """jnp's promote_args_inexact: integers and bools become float32 (sin, exp, true division, mean)."""
    return (FLOAT, weak and dtype != BOOL) if not is_float(dtype) else (dtype, weak)


def lax_result(name: str, avals) -> tuple[str, bool]:
    """A lax primitive's operand dtype: strongly typed operands must agree; weak ones take their dtype."""
    strong = [a.dtype for a in avals if not a.weak_type]
    if len(set(strong)) > 1:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got {', '.join(strong)}."
                        "（lax 的原语不做类型提升：先用 astype 转成同一个 dtype）")
    if strong and any(KIND[a.dtype] > KIND[strong[0]] for a in avals if a.weak_type):
        raise TypeError(f"{name}: a weakly typed {max(avals, key=lambda a: KIND[a.dtype]).dtype} cannot meet "
                        f"{strong[0]} here（lax 的原语不提升类型：先转换 dtype）")
    if strong:
        return strong[0], False
    return result_type(*avals)


#: 不接受 bool 的原语（和 lax 一样：布尔没有减法、取负）；只接受浮点的原语
NO_BOOL = {"sub", "neg", "div", "integer_pow"}
FLOAT_ONLY = {"sin", "cos", "exp", "log", "tanh", "sqrt", "pow"}


def check_accepts(name: str, dtype: str) -> None:
    """The dtypes a lax primitive accepts (JAX raises TypeError for the others)."""
    if name in FLOAT_ONLY and not is_float(dtype):
        raise TypeError(f"{name} does not accept dtype {dtype}. Accepted dtypes are subtypes of floating, "
                        "complexfloating.（先转成 float32）")
    if name in NO_BOOL and dtype == BOOL:
        raise TypeError(f"{name} does not accept dtype bool. Accepted dtypes are subtypes of integer, "
                        "complexfloating, floating.（布尔先用 astype 转成数）")
