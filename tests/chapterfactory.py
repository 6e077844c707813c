"""A minimal chapter that follows CONTRIBUTING.md, for testing the checkers rule by rule."""

from __future__ import annotations

from nbfactory import code, md, write_notebook

from coursetools.structure import expected_setup

SETUP = expected_setup()   # CONTRIBUTING §8, word for word
LINK = "> 📖 课程原文：[课程](https://apxml.com/courses/getting-started-with-jax)"
CHECK = ('# 🧪 自检 [练习 9.1]\njaxcourse.selfcheck("9.1", names=["halve"], checks=[\n'
         '    (lambda: callable(halve), "halve 应该是函数"),\n'
         '    (lambda: halve(4) == 2, "halve(4) 的结果不对"),\n])')
REFERENCE = "# 参考答案 [练习 9.1]\ndef halve(value):\n    return value / 2"


def lite_cells():
    """Three lite cells that count for CONTRIBUTING §6 (code lines and a 试一试 line); fresh objects each call."""
    return [code(f"# 试一试\uff1a把 {n} 改成别的数\nimport jaxcourse.minijax as mj\nx = mj.numpy.array({n}.0)\n"
                 f"print(mj.grad(lambda v: v * v)(x))", tags=["lite"]) for n in (1, 2, 3)]


def chapter_cells():
    """Cells of a valid mini chapter (fresh list each call, so tests can mutate it)."""
    return [
        md("# 99 · 测试章"),
        code(SETUP, tags=["lite"]),
        md(f"## 9.1 第一节\n\n{LINK}\n\n### 课程讲解\n\n讲解。\n\n🔑 关键词：测试"),
        md("### 课程代码"),
        code("x = [1, 2, 3]\nassert sum(x) == 6\nprint(sum(x))"),
        *lite_cells(),
        code("# ❌ 旧写法\uff080.4.31 移除\uff09\nx.device()", tags=["raises-exception"]),
        code("# ✅ 推荐写法\nprint(len(x))"),
        code("# ❌ 错误写法\nx + None", tags=["raises-exception"]),
        code("# ✅ 正确写法\nprint(x + [4])"),
        md("## 🔍 补充\n\n### 🟢 必读 · 一个专题\n\n> ⚠️ 注意：小心。"),
        md("## 练习\n\n### 练习 9.1 · 减半\n\n定义函数 `halve`，返回输入的一半。"),
        code("# ✍️ 作答区 [练习 9.1]\n# 在这里定义 halve"),
        code(CHECK, course={"wrong_answers": ["def halve(value):\n    return value * 2"]}),
        md("## 测验\n\n### 第 1 题\n\n1 + 1 = ?\n\n<details><summary>答案</summary>\n\n2\n\n</details>"),
        md("## 本章更新说明\n\n1. 第一条。\n2. 第二条。"),
        md("## 小结与速查表\n\n| 旧 | 新 |\n|---|---|\n| a | b |"),
        md("## 附录：练习参考答案"),
        code(REFERENCE),
    ]


def write_chapter(path, cells=None):
    """Write the mini chapter (or the given cells) with chapter metadata."""
    p = write_notebook(path, cells if cells is not None else chapter_cells())
    import nbformat

    nb = nbformat.read(p, as_version=4)
    nb.metadata["course"] = {"part": "测试", "chapter": "99", "title": "测试章", "topics": "测试", "specials": "无"}
    nbformat.write(nb, p)
    return p
