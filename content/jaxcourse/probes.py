"""平台探测：结论随平台而变时，由运行时的探测来决定，而不是写死。"""

from __future__ import annotations

import os
import platform
import subprocess
import sys


def in_browser() -> bool:
    """是否运行在浏览器的 Pyodide 内核里（JupyterLite 阅读站点）。"""
    return sys.platform == "emscripten" or "pyodide" in sys.modules


def platform_info() -> dict:
    """操作系统、CPU 架构、Python 版本；装了 JAX 时再加上后端和设备。"""
    info = {
        "system": platform.system(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "browser": in_browser(),
    }
    if not in_browser():
        import jax

        info["jax"] = jax.__version__
        info["backend"] = jax.default_backend()
        info["devices"] = [str(d) for d in jax.devices()]
    return info


def child_env(env: dict | None = None) -> dict:
    """子进程的环境变量：当前环境，加上 PYTHON_COLORS=0（traceback 不带颜色控制符），再加上 env。"""
    return {**os.environ, "PYTHON_COLORS": "0", **(env or {})}


def run_python(code: str, *args: str, env: dict | None = None, timeout: float = 300,
               stdin: str | None = None) -> subprocess.CompletedProcess:
    """在一个新的 Python 子进程里运行 code（XLA 标志之类必须在 JAX 初始化之前设置时用）。

    env 里的变量加在当前环境之上（默认 PYTHON_COLORS=0：Python 3.13 在内核里也给 traceback 加颜色控制符，
    notebook 要原样匹配报错文字）；stdin 是喂给子进程标准输入的文本（None 时标准输入为空，
    读取立即得到文件结尾，子进程不会卡住等输入）；返回 CompletedProcess（text 模式，stdout/stderr 已捕获）。
    """
    if in_browser():
        raise RuntimeError("浏览器里不能启动子进程：这个探测只能在本地或 Colab 的真实内核里运行。")
    full_env = child_env(env)
    return subprocess.run([sys.executable, "-c", code, *args], env=full_env, capture_output=True,
                          text=True, timeout=timeout, input=stdin if stdin is not None else "")
