"""课程里的示意图：用 matplotlib 从代码画出来（不贴图片），文字来自真实运行的 JAX。

- tracing_pipeline(f, *args)：Python 函数 → jaxpr → StableHLO → 可执行程序，标出两层缓存在哪里
- autodiff_modes()：前向模式与反向模式，导数沿哪个方向传、每遍得到雅可比矩阵的哪一部分
"""

from __future__ import annotations

from .display import figure

_BOX = dict(boxstyle="round,pad=0.5", linewidth=1.2)
_COLORS = {"py": "#e8f0fe", "jaxpr": "#e6f4ea", "hlo": "#fef7e0", "exe": "#fce8e6", "cache": "#f1f3f4"}


def _excerpt(text: str, lines: int = 4, width: int = 46) -> str:
    """前几行，每行截断，保证图里放得下。"""
    rows = [r.rstrip() for r in text.strip().splitlines() if r.strip()]
    out = [r if len(r) <= width else r[: width - 1] + "…" for r in rows[:lines]]
    if len(rows) > lines:
        out.append("…")
    return "\n".join(out)


def _box(ax, x, y, title, body, color, mono=False):
    ax.text(x, y + 0.17, title, ha="center", va="bottom", fontsize=11)
    font = {"family": "monospace", "fontsize": 7.5, "multialignment": "left"} if mono else {"fontsize": 9}
    ax.text(x, y, body, ha="center", va="top", **font, bbox={**_BOX, "facecolor": color, "edgecolor": "#5f6368"})


def _arrow(ax, x0, x1, y, label):
    ax.annotate("", xy=(x1, y), xytext=(x0, y), arrowprops=dict(arrowstyle="->", lw=1.5, color="#3c4043"))
    ax.text((x0 + x1) / 2, y + 0.03, label, ha="center", va="bottom", fontsize=9, color="#3c4043")


def tracing_pipeline(f, *args):
    """画出 jax.jit(f)(*args) 的四个阶段，每一格里是这一阶段的真实文本（前几行）。返回 (fig, stages)。

    stages 是 {"jaxpr"：…，"stablehlo"：…} 完整文本，notebook 可以对它们做断言。
    """
    import jax

    traced = jax.jit(f).trace(*args)
    lowered = traced.lower()
    stages = {"jaxpr": traced.jaxpr.pretty_print(use_color=False), "stablehlo": lowered.as_text()}
    hlo_body = [r.split(" : ")[0].strip() for r in stages["stablehlo"].splitlines() if "stablehlo." in r]

    fig, ax = figure(figsize=(11, 3.6))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    xs = [0.11, 0.37, 0.63, 0.89]
    name = getattr(f, "__name__", "f")
    _box(ax, xs[0], 0.8, "Python 函数", f"{name}(*args)\n（任意 Python 代码，\n只运行一次：追踪）", _COLORS["py"])
    _box(ax, xs[1], 0.8, "jaxpr", _excerpt(stages["jaxpr"], 5, 28), _COLORS["jaxpr"], mono=True)
    _box(ax, xs[2], 0.8, "StableHLO", _excerpt("\n".join(hlo_body), 5, 28), _COLORS["hlo"], mono=True)
    _box(ax, xs[3], 0.8, "可执行程序", "XLA 编译的机器码\n（CPU/GPU/TPU）\n之后每次调用直接运行", _COLORS["exe"])
    for a, b, label in ((0, 1, "追踪 trace"), (1, 2, "lowering"), (2, 3, "编译 compile")):
        _arrow(ax, xs[a] + 0.07, xs[b] - 0.07, 0.99, label)
    ax.text(0.24, 0.06, "追踪缓存：键是函数本身 + 抽象签名\n（形状、dtype、静态参数的值、pytree 结构）",
            ha="center", va="center", fontsize=9, bbox={**_BOX, "facecolor": _COLORS["cache"], "edgecolor": "#9aa0a6"})
    ax.text(0.76, 0.06, "编译缓存：同一个 jaxpr 只 lowering、编译一次\n（可选的持久化缓存按 StableHLO 跨进程复用）",
            ha="center", va="center", fontsize=9, bbox={**_BOX, "facecolor": _COLORS["cache"], "edgecolor": "#9aa0a6"})
    for x in (0.24, 0.76):  # 缓存挂在它省掉的那一步上
        ax.annotate("", xy=(x, 0.97), xytext=(x, 0.16), arrowprops=dict(arrowstyle="-", ls=":", color="#9aa0a6"))
    return fig, stages


def autodiff_modes():
    """前向模式与反向模式的示意图：y = f3(f2(f1(x)))，导数沿哪个方向传。返回 fig。"""
    fig, axes = figure(2, 1, figsize=(10, 5.2))
    nodes = [r"$x$", r"$a = f_1(x)$", r"$b = f_2(a)$", r"$y = f_3(b)$"]
    xs = [0.1, 0.37, 0.63, 0.9]
    rows = [
        ("前向模式（jax.jvp / jacfwd）：切向量 $\\dot x$ 跟着原值一起从左往右走，一遍得到雅可比矩阵的一列",
         [r"$\dot x$", r"$\dot a = J_1 \dot x$", r"$\dot b = J_2 \dot a$", r"$\dot y = J_3 \dot b$"], +1, "#1a73e8"),
        ("反向模式（jax.vjp / grad / jacrev）：先前向算出并存下中间值，再把余切向量 $\\bar y$ 从右往左传，一遍得到一行",
         [r"$\bar x = \bar a J_1$", r"$\bar a = \bar b J_2$", r"$\bar b = \bar y J_3$", r"$\bar y$"], -1, "#d93025"),
    ]
    for ax, (title, labels, direction, color) in zip(axes, rows):
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
        ax.set_title(title, fontsize=10, loc="left")
        for x, node, lab in zip(xs, nodes, labels):
            ax.text(x, 0.68, node, ha="center", va="center", fontsize=10,
                    bbox={**_BOX, "facecolor": "#f1f3f4", "edgecolor": "#5f6368"})
            ax.text(x, 0.22, lab, ha="center", va="center", fontsize=10, color=color,
                    bbox={**_BOX, "facecolor": "white", "edgecolor": color})
        for a, b in zip(xs, xs[1:]):
            ax.annotate("", xy=(b - 0.08, 0.68), xytext=(a + 0.08, 0.68),
                        arrowprops=dict(arrowstyle="->", lw=1.2, color="#5f6368"))
            start, end = (a + 0.08, b - 0.08) if direction > 0 else (b - 0.08, a + 0.08)
            ax.annotate("", xy=(end, 0.22), xytext=(start, 0.22), arrowprops=dict(arrowstyle="->", lw=1.8, color=color))
    axes[1].text(0.5, -0.05, r"$J_i$ 是每一步的雅可比矩阵；输入多、输出少（标量损失）时反向模式划算，反之前向模式划算",
                 ha="center", va="center", fontsize=9, color="#3c4043")
    return fig
