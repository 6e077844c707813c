"""A small demo course with the structure of content/, for trying and testing the site builder."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from . import CONTENT, PACKAGE

SETUP = """import sys
try:
    import jaxcourse
except ImportError:
    sys.path.insert(0, "..")
    import jaxcourse"""


def _nb(cells):
    nb = new_notebook(cells=cells)
    for i, c in enumerate(nb.cells, 1):
        c.id = f"cell-{i}"
    nb.metadata["kernelspec"] = {"name": "jax-study", "display_name": "Python (JAX 学习)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _code(src, outputs=(), tags=None, count=None):
    c = new_code_cell(src, execution_count=count, outputs=list(outputs))
    if tags:
        c.metadata["tags"] = tags
    return c


def write_demo(dest: Path) -> Path:
    """Write 入门/00_总目录 (links), 01_JAX简介 (saved outputs, lite and JAX cells), 02_第二章, jaxcourse/."""
    dest = Path(dest)
    book = dest / "入门"
    book.mkdir(parents=True, exist_ok=True)
    shutil.copytree(CONTENT / PACKAGE, dest / PACKAGE, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    index = _nb([
        new_markdown_cell("# 入门 · 总目录\n\n欢迎来到中文 JAX 课程。"),
        _code(SETUP, tags=["lite"]),
        new_markdown_cell("| 章 | 内容 |\n|---|---|\n"
                          "| [01 · JAX 简介](01_JAX简介.ipynb) | 安装与第一个数组 |\n"
                          "| [02 · 第二章](02_第二章.ipynb#第二节) | 跳到第二节 |"),
    ])
    err = new_output("error", ename="TypeError", evalue="'jaxlib._jax.Device' object is not callable",
                     traceback=["\u001b[31mTypeError\u001b[39m: 'jaxlib._jax.Device' object is not callable"])
    intro = _nb([
        new_markdown_cell("# 01 · JAX 简介\n\n[返回总目录](00_总目录.ipynb)"),
        _code(SETUP, tags=["lite"], count=1),
        _code("import jax\nprint(jax.__version__)", [new_output("stream", name="stdout", text="0.12.0.1\n")], count=2),
        _code("squares = [i * i for i in range(5)]\nprint('平方:', squares)",
              [new_output("stream", name="stdout", text="平方: [0, 1, 4, 9, 16]\n")], tags=["lite"], count=3),
        _code("import jax.numpy as jnp\njnp.arange(3)",
              [new_output("execute_result", data={"text/plain": "Array([0, 1, 2], dtype=int32)"},
                          execution_count=4)], count=4),
        new_markdown_cell("# ❌ 旧写法"),
        _code("# ❌ 旧写法\nx.device()", [err], tags=["raises-exception"], count=5),
        new_markdown_cell("下一章:[02 · 第二章](02_第二章.ipynb)"),
    ])
    second = _nb([
        new_markdown_cell("# 02 · 第二章\n\n[返回总目录](00_总目录.ipynb)"),
        _code(SETUP, tags=["lite"]),
        *[new_markdown_cell(f"填充段落 {i}。" * 20) for i in range(8)],
        new_markdown_cell("## 第二节\n\n这里是第二节。"),
    ])
    for name, nb in [("00_总目录", index), ("01_JAX简介", intro), ("02_第二章", second)]:
        nbformat.write(nb, book / f"{name}.ipynb")
    return dest
