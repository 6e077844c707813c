"""Notebook 里的显示细节：警告不暴露机器路径，图里的中文不变成方框。"""

from __future__ import annotations

import hashlib
import os
import re
import warnings

_PATH = re.compile(r".*/(?:site|dist)-packages/")
_CELL = re.compile(r".*/ipykernel_\d+/\d+\.py$")
_original_format = warnings.formatwarning

# Noto Sans CJK JP：不认识 .ttc 里各个字体的旧 matplotlib 只看得到集合里的第一个，它同样能显示中文
CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei",
             "WenQuanYi Zen Hei", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "SimHei"]


def short_location(filename: str) -> str:
    """把警告的文件路径缩短：库文件只留包内路径，单元格文件写成“本单元格”。"""
    if _CELL.match(filename):
        return "本单元格"
    return _PATH.sub("", filename)


def _format(message, category, filename, lineno, line=None):
    return _original_format(message, category, short_location(str(filename)), lineno, line)


def install_warning_format() -> None:
    """让警告显示成 `jax/_src/…py:123: UserWarning: …`，不带机器上的绝对路径。"""
    warnings.formatwarning = _format


def install_traceback_paths() -> None:
    """IPython 的 traceback 里，库文件只显示包内路径（`jax/_src/….py:57`），不显示机器上的安装目录。"""
    try:
        from IPython.utils import path as ipython_path
    except ImportError:  # 没有 IPython（普通脚本、lite 检查）：什么都不用做
        return
    original = getattr(ipython_path.compress_user, "__wrapped__", ipython_path.compress_user)

    def compress_user(path: str) -> str:
        return _PATH.sub("", original(path))

    compress_user.__wrapped__ = original
    ipython_path.compress_user = compress_user


PUBLISH_ENV = "JAXCOURSE_PUBLISH"  # 校验工具运行内核时设为 1


def _publishing_shell():
    """The IPython shell when the harness runs the kernel (publish mode), else None."""
    if os.environ.get(PUBLISH_ENV) != "1":
        return None
    try:
        return get_ipython()  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        return None


SHORT_FRAMES = 3  # 简短 traceback 最多显示几层单元格里的调用


def short_traceback(etype, value, tb, cell_label=lambda name: name) -> list[str]:
    """发布用的简短 traceback：只留单元格里的调用（最多 SHORT_FRAMES 层）和报错本身，不列 JAX 内部的几十行。"""
    import traceback

    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith("<cell ")][-SHORT_FRAMES:]
    lines = ["-" * 75, f"{etype.__name__:<42}Traceback (most recent call last)"]
    for f in frames:
        where = f"{cell_label(f.filename)}, line {f.lineno}" + ("" if f.name == "<module>" else f", in {f.name}")
        lines += [where, f"----> {f.lineno} {f.line}" if f.line else ""]
    message = str(value)
    lines.append(f"{etype.__name__}: {message}" if message else etype.__name__)
    return ["\n".join(line for line in lines if line)]


def install_short_tracebacks() -> None:
    """发布模式下，报错只显示简短 traceback（平时学习照常显示完整的 traceback）。"""
    shell = _publishing_shell()
    if shell is None:
        return
    numbers = getattr(shell.compile, "_filename_map", {})

    def label(name: str) -> str:
        number = numbers.get(name)
        return f"Cell In[{number}]" if number is not None else name.strip("<>")

    def handler(shell, etype, value, tb, tb_offset=None):
        shell._showtraceback(etype, value, short_traceback(etype, value, tb, label))

    shell.set_custom_exc((Exception,), handler)


def install_cell_names() -> None:
    """发布模式（校验工具生成输出时）下，单元格的“文件名”写成 `<cell 1a2b3c4d>`，不用机器上的临时目录。

    JAX 的报错会引用函数定义所在的文件（例如 `while tracing … at /tmp/ipykernel_…/….py:2`）；
    保存的输出要能原样发布，就不能带机器上的临时路径。平时学习不开启，Jupyter 调试器照常可用。
    """
    shell = _publishing_shell()
    if shell is None:
        return
    compiler = shell.compile
    if getattr(compiler, "_jaxcourse_names", False):
        return

    def get_code_name(raw_code, transformed_code, number):
        return f"<cell {hashlib.sha1(raw_code.encode()).hexdigest()[:8]}>"

    compiler.get_code_name = get_code_name
    compiler._jaxcourse_names = True


def packaged_cjk_font() -> str | None:
    """课程依赖里钉死的字体文件（PyPI 包 noto-cjk-sans-otc 里的 Noto Sans CJK）；没装时返回 None。"""
    try:
        import noto_cjk_sans_otc
    except ImportError:  # Colab 等没装课程依赖的环境：退回系统字体
        return None
    path = noto_cjk_sans_otc.FONT_PATH
    return str(path) if path.is_file() else None


def use_cjk_font() -> str | None:
    """给 matplotlib 选一个能显示中文的字体，返回字体名；一个都没有时返回 None 并给出安装提示。

    先把课程依赖自带的 Noto Sans CJK 登记给 matplotlib：不依赖系统字体，任何机器画出的图都一样。
    """
    import matplotlib
    from matplotlib import font_manager

    packaged = packaged_cjk_font()
    if packaged and not any(f.fname == packaged for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(packaged)
    available = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONTS:
        if name in available:
            rest = [f for f in matplotlib.rcParams["font.sans-serif"] if f != name]
            matplotlib.rcParams["font.sans-serif"] = [name, *rest]
            matplotlib.rcParams["font.family"] = "sans-serif"
            matplotlib.rcParams["axes.unicode_minus"] = False
            return name
    warnings.warn("没有找到中文字体，图里的中文会显示成方框。本地学习：运行 ./dev setup（会装上课程自带的字体）；"
                  "Colab 等环境：pip install noto-cjk-sans-otc。", RuntimeWarning, stacklevel=2)
    return None


def figure(*args, **kwargs):
    """plt.subplots 的薄包装：先选好中文字体，再建图；在 notebook 里按两倍像素密度保存（retina），
    高分辨率屏幕（手机、笔记本）上也清晰，显示尺寸不变。"""
    import matplotlib.pyplot as plt

    use_cjk_font()
    _retina()
    return plt.subplots(*args, **kwargs)


def _retina() -> None:
    """Inline figures as 2× PNG with their display size in the output metadata (IPython only)."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return
    if get_ipython() is not None:
        set_matplotlib_formats("retina")
