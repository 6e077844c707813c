"""读编译后的 HLO 文本（`jax.jit(f).lower(x).compile().as_text()`）：指令名、YNNPACK 融合，以及某个矩阵落在哪里。

只用正则表达式读文本，不依赖 XLA 的 Python 接口；HLO 的写法随 XLA 版本变化时，用到它的断言会失败并提示更新这里。
"""

import re

# 结果类型是一个形状（f32[4]{0}）或一个元组（(f32[4]{0}, f32[2]{0})，里面有空格，可能嵌套）。
_OP = r"^\s+(?:ROOT )?%?[\w.\-]+ = (?:\(.*?\)|\S+) ([\w\-]+)\("


def entry_ops(hlo_text: str) -> list[str]:
    """ENTRY 计算里每条指令的操作名（fusion、dot、parameter……），按出现顺序。"""
    entry = hlo_text[hlo_text.index("\nENTRY"):]
    return re.findall(_OP, entry, re.M)


def all_ops(hlo_text: str) -> set[str]:
    """HLO 文本里（连同融合计算内部）出现过的全部操作名。"""
    return set(re.findall(_OP, hlo_text, re.M))


_COLLECTIVES = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "ragged-all-to-all",
                "collective-permute", "collective-broadcast", "send", "recv"}


def collectives(hlo_text: str) -> set[str]:
    """编译后的程序里真正有的集合通信（all-reduce、all-gather……；异步版本去掉 -start / -done）。
    jaxpr 里看着只是逐元素运算的写法（带 out_sharding= 的 broadcast_in_dim 之类）也可能编译出 all-gather：
    “不在设备之间挪动数据”要按编译后的程序查。"""
    return {op.removesuffix("-start").removesuffix("-done") for op in all_ops(hlo_text)} & _COLLECTIVES


def ynn_fusion_bodies(hlo_text: str) -> list[str]:
    """被 `"kind":"__ynn_fusion"` 的融合调用的那些融合计算的正文（XLA CPU 后端的 YNNPACK 融合）。"""
    bodies = {m.group(1): m.group(0) for m in re.finditer(r"(?ms)^%([\w.\-]+) \(.*?^}", hlo_text)}
    return [bodies[name] for name in re.findall(r'calls=%([\w.\-]+)[^\n]*"kind":"__ynn_fusion"', hlo_text)
            if name in bodies]


def where_is_w(hlo_text: str, n: int, dtype: str = "f32") -> str | None:
    """n×n 的矩阵 W 在编译结果里的位置（已知问题 1 的结构证据）；没有 YNNPACK 融合时返回 None。

    返回 "融合内部的常量"、"融合外部的常量"、"融合计算的参数" 或 "不在融合里"。
    """
    bodies = ynn_fusion_bodies(hlo_text)
    if not bodies:
        return None
    shape = f"{dtype}[{n},{n}]{{1,0}}"
    if any(f"{shape} constant(" in b for b in bodies):
        return "融合内部的常量"
    if f"{shape} constant(" in hlo_text:
        return "融合外部的常量"
    if any(f"{shape} parameter(" in b for b in bodies):
        return "融合计算的参数"
    return "不在融合里"
