"""迷你 JAX：只用 Python 标准库写成的 JAX 核心思想模型，浏览器里（Pyodide）也能运行。

读的顺序（每个文件开头都有一段说明；思路照 JAX 文档《Autodidax: JAX core from scratch》）：

 1. array.py     具体的数组：扁平列表 + 形状 + dtype，每步舍入到 float32
 2. dtypes.py    dtype 规则只在这里：类型提升（bool、弱类型）、lax 原语接受哪些 dtype
 3. core.py      原语、bind、追踪栈、jaxpr（记下来的程序）和它的打印
 4. prims.py     每个原语的五条规则：impl、shape、jvp、vjp、batch
 5. numpy.py     jax.numpy 的函数：先做类型提升和秩提升，再落到原语上
 6. ad.py        jvp（前向模式）、vjp / grad（反向模式）
 7. batching.py  vmap，以及模拟设备上的集合通信（psum、all_gather、ppermute、axis_index）
 8. control.py   cond、while_loop / fori_loop、scan：分支和循环体先记成 jaxpr
 9. api.py       make_jaxpr 和 jit（按抽象签名缓存 jaxpr，缓存跟着函数走）
10. tree.py      pytree；random.py：threefry 伪随机数和 key 数组；errors.py：报错的类型

和真 JAX 的对照：tests/test_minijax.py 和 tests/test_minijax_conformance.py（同一段程序在两边各运行一次，
比较值、dtype、弱类型、报错类型、追踪次数、随机位和 jaxpr 文本）。迷你 JAX 没有的功能报 NotImplementedError，
说明缺的是什么，不给错的答案。

用法与 JAX 相同：

    import jaxcourse.minijax as mj
    mnp = mj.numpy
    print(mj.make_jaxpr(lambda x: mnp.sin(x) * 2.0)(1.0))
    mj.grad(lambda x: x ** 3)(2.0)      # 12.0
"""

from . import numpy, random            # noqa: F401  （numpy 给 Array、Tracer 装上运算符）
from . import tree                     # noqa: F401  （像 jax.tree：jax.tree.map ……）
from . import tree as tree_util        # noqa: F401  （像 jax.tree_util）
from .ad import grad, jvp, value_and_grad, vjp
from .api import describe_key, jit, make_jaxpr
from .array import Array, asarray
from .batching import all_gather, axis_index, pmap, ppermute, psum, vmap
from .control import cond, fori_loop, scan, while_loop
from .errors import (ConcretizationTypeError, TracerBoolConversionError, TracerIntegerConversionError, Unsupported,
                     unsupported)
from .prims import stop_gradient
from .tree import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten


class _Namespace:
    """A namespace like jax.lax; a name the mini-JAX lacks raises a clear Unsupported error."""

    def __init__(self, name, **members):
        self._name = name
        self.__dict__.update(members)

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        raise unsupported(f"{self._name}.{attr}", "迷你 JAX 的 lax 只有 cond、while_loop、fori_loop、scan、"
                          "stop_gradient 和集合通信")


lax = _Namespace("jax.lax", cond=cond, while_loop=while_loop, fori_loop=fori_loop, scan=scan,
                 stop_gradient=stop_gradient, psum=psum, all_gather=all_gather, ppermute=ppermute,
                 axis_index=axis_index)


def __getattr__(name):   # jax 里有、迷你 JAX 里没有的（hessian、jacfwd、pmap 的其他参数……）
    if name.startswith("_"):
        raise AttributeError(name)
    raise unsupported(f"jax.{name}", "迷你 JAX 只有 grad、value_and_grad、jvp、vjp、vmap、pmap、jit、make_jaxpr、"
                      "lax、numpy、random 和 tree 函数")


__all__ = ["Array", "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
           "Unsupported", "all_gather", "asarray", "axis_index", "cond", "describe_key", "fori_loop", "grad", "jit",
           "jvp", "lax", "make_jaxpr", "numpy", "pmap", "ppermute", "psum", "random", "register_pytree_node", "scan",
           "stop_gradient", "tree_flatten", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten",
           "tree", "tree_util", "value_and_grad", "vjp", "vmap", "while_loop"]
