"""浏览器（JupyterLite 的 Pyodide 内核）里的友好提示：导入 JAX、NumPy 等失败时说明原因和真正运行的办法。

只用标准库。`install()` 在 `sys.meta_path` 里 PathFinder 之后挂一个查找器：真正装了的包照常导入，
找不到时抛 `NeedsRealPythonError`（ModuleNotFoundError 的子类，`except ImportError` 照样接得住），
IPython 用它的 `_render_traceback_` 只显示几行中文，而不是一长串 traceback。
"""

from __future__ import annotations

import importlib.machinery
import json
import sys
from pathlib import Path

JAX_VERSION = "0.12.0.1"
KERNEL_NAME = "Python (JAX 学习)"  # zh-punct: keep (the kernel's display name, registered by ./dev)

#:浏览器里没有（或离线站点里没有）的顶层包：JAX 全家和课程用到的科学计算包。
NEEDS_REAL_PYTHON = frozenset({
    "jax", "jaxlib", "numpy", "optax", "flax", "orbax", "chex", "scipy", "sklearn", "matplotlib",
})

#:课程里需要 JAX 的单元格定义的名字（import jax.numpy as jnp ……）：浏览器里用到它们却没有定义，
#:说明定义它们的那一格在这里跑不了，而不是读者写错了名字
COURSE_NAMES = frozenset({"jax", "jnp", "np", "lax", "optax", "nnx", "flax", "ocp", "plt"})

#:站点构建时写在本包旁边的配置（仓库地址、分支）；本地运行时不存在。
SITE_CONFIG = Path(__file__).with_name("_site.json")


def site_config() -> dict:
    """Return the repository settings the site build wrote next to this file ({} when absent)."""
    try:
        return json.loads(SITE_CONFIG.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def message_lines(module: str) -> list[str]:
    """The Chinese lines shown instead of a traceback when `module` cannot be imported here."""
    cfg = site_config()
    repo = cfg.get("repository", "")
    clone = f"git clone https://github.com/{repo}.git" if repo else "克隆本课程的仓库"
    why = "" if module == "jax" else "（本课程的代码要用它和 JAX）"
    return [
        f"🌐 浏览器里的 Python（Pyodide）没有 {module}{why}，所以这一格在这里跑不了。",
        f"   课程里保存的输出都来自真实的 JAX {JAX_VERSION}（CPU），照着读就行。",
        "   想亲手运行：",
        "   · 点本章顶部的「在 Colab 中打开」；",
        f"   · 或在自己的电脑上运行 {clone}\uff0c按 README 执行 ./dev setup\uff0c"
        f"再用内核「{KERNEL_NAME}」打开这个 notebook。",
    ]


def name_error_lines(name: str, error: str) -> list[str]:
    """The Chinese lines shown instead of a NameError for a name that a JAX cell would have defined."""
    return [
        f"🌐 `{name}` 没有定义：它由前面某个需要 JAX 的单元格定义，而那样的单元格在浏览器里跑不了。",
        *message_lines("jax")[1:],
        f"   （原始报错：NameError: {error}）",
    ]


_import_failed = False  # 本内核里已经有过一次“浏览器里没有这个包”


def _name_error(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: shows the Chinese note for course names, the usual traceback otherwise.

    Shown the way IPython shows an exception's `_render_traceback_` (the friendly ImportError's path).
    """
    name = getattr(value, "name", None) or ""
    if name in COURSE_NAMES or _import_failed:
        shell._showtraceback(etype, value, name_error_lines(name, str(value)))
    else:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    return []


class NeedsRealPythonError(ModuleNotFoundError):
    """A module the course needs is missing in the browser; IPython shows only a short Chinese note."""

    def _render_traceback_(self) -> list[str]:
        """IPython hook: the lines to show instead of a traceback."""
        return message_lines(self.name or "这个模块")


class _FriendlyFinder:
    """Meta path finder placed after PathFinder: it is asked only when no real module was found."""

    def find_spec(self, fullname, path=None, target=None):
        """Raise the friendly error for a missing top-level course dependency, else defer."""
        global _import_failed
        top = fullname.partition(".")[0]
        if path is None and top in NEEDS_REAL_PYTHON:
            _import_failed = True
            raise NeedsRealPythonError(f"No module named {top!r}（浏览器里没有 {top}）", name=top)
        return None

    def invalidate_caches(self):
        """Nothing cached."""


def install() -> bool:
    """Put the friendly finder on sys.meta_path right after PathFinder; returns False if already there.

    In an IPython shell, a NameError for a name a JAX cell defines also gets the Chinese note
    (only the first JAX cell fails on its import; the next ones fail on `jnp` and the like).
    """
    try:
        from IPython import get_ipython
    except ImportError:  # not under IPython
        get_ipython = lambda: None  # noqa: E731
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((NameError,), _name_error)
    if any(isinstance(f, _FriendlyFinder) for f in sys.meta_path):
        return False
    where = len(sys.meta_path)
    for i, finder in enumerate(sys.meta_path):
        if finder is importlib.machinery.PathFinder:
            where = i + 1
            break
    sys.meta_path.insert(where, _FriendlyFinder())
    return True
