"""看 jax.export 的导出件（进阶 09 的自检）：符号维度有没有被加上上限。"""

from __future__ import annotations

import re


def has_upper_bound(exported) -> bool:
    """导出件有没有给符号维度加上限（或把它和别的维度绑在一起）。看两处，都是公开的：

    1. 导出时的符号维度：有上限时 `d <= 2**40` 有确定的答案，没有上限时报 InconclusiveDimensionOperation；
    2. 模块里的形状检查（序列化再读回的导出件里也在）：每条约束写成
       "Expected '表达式' to be greater or equal to 0"，表达式里有“- 变量”就是上限。
    JAX 改了第 2 条的措辞时，这里只会变弱（少认出上限），不会把没有上限的导出件说成有。
    """
    import jax
    from jax import export

    for aval in exported.in_avals:
        for d in aval.shape:
            if export.is_symbolic_dim(d):
                try:
                    d <= 2 ** 40
                    return True
                except jax.errors.InconclusiveDimensionOperation:
                    pass
    exprs = re.findall(r"Expected '(.*?)' to be greater or equal to 0", exported.mlir_module())
    return any(re.search(r"-\s*\d*\*?[A-Za-z_]", e) for e in exprs)
