"""迷你 JAX：只用 Python 标准库写成的 JAX 核心思想模型，浏览器里（Pyodide）也能运行。

读的顺序：array（数组）→ core（原语、追踪、jaxpr）→ prims（每个原语的五条规则）→ ad（jvp、grad）
→ batching（vmap、模拟设备上的集合通信）→ control（cond、while_loop、scan）→ api（make_jaxpr、jit）
→ tree（pytree）→ random（threefry）。和真 JAX 的对照由 tests/test_minijax.py 在固定版本的 JAX 上检查。

用法与 JAX 相同：

    import jaxcourse.minijax as mj
    mnp = mj.numpy
    print(mj.make_jaxpr(lambda x: mnp.sin(x) * 2.0)(1.0))
    mj.grad(lambda x: x ** 3)(2.0)      # 12.0
"""

from . import numpy, random            # noqa: F401  （numpy 给 Array、Tracer 装上运算符）
from .ad import grad, jvp, value_and_grad, vjp
from .api import describe_key, jit, make_jaxpr
from .array import Array, asarray
from .batching import all_gather, axis_index, pmap, ppermute, psum, vmap
from .control import cond, fori_loop, scan, while_loop
from .errors import ConcretizationTypeError, TracerBoolConversionError
from .tree import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten


class lax:   # noqa: N801 - 像 jax.lax 一样的命名空间
    cond, while_loop, fori_loop, scan = staticmethod(cond), staticmethod(while_loop), staticmethod(fori_loop), \
        staticmethod(scan)
    psum, all_gather, ppermute, axis_index = staticmethod(psum), staticmethod(all_gather), \
        staticmethod(ppermute), staticmethod(axis_index)


__all__ = ["Array", "ConcretizationTypeError", "TracerBoolConversionError", "all_gather", "asarray",
           "axis_index", "cond", "describe_key", "fori_loop", "grad", "jit", "jvp", "lax", "make_jaxpr",
           "numpy", "pmap", "ppermute", "psum", "random", "register_pytree_node", "scan", "tree_flatten",
           "tree_leaves", "tree_map", "tree_structure", "tree_unflatten", "value_and_grad", "vjp", "vmap",
           "while_loop"]
