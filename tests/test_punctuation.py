"""Chinese punctuation: the fixer changes Chinese prose only, is idempotent, and the tool keeps links working."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from nbfactory import code, write_notebook

from coursemodel.punctuation import fix_code, fix_markdown

FW = {",": "\uff0c", ":": "\uff1a", ";": "\uff1b", "?": "\uff1f", "(": "\uff08", ")": "\uff09"}


def zh(text: str) -> str:
    """text with {,} {:} … written as their full-width marks (this file stays ASCII-punctuated)."""
    for half, full in FW.items():
        text = text.replace("{" + half + "}", full)
    return text


@pytest.mark.parametrize("before, after", [
    ("在 JAX 里, 数组是不可变的: 用 `x.at[i].set(v)`.", zh("在 JAX 里{,}数组是不可变的{:}用 `x.at[i].set(v)`。")),
    ("即时编译 (`jax.jit`) 很快?", zh("即时编译{(}`jax.jit`{)}很快{?}")),
    ("都配了 `assert`,\n并由工具", zh("都配了 `assert`{,}\n并由工具")),
    ("找 pyenv;JAX 0.12 不支持", zh("找 pyenv{;}JAX 0.12 不支持")),
    ("| 列 (说明) | a, b |", zh("| 列{(}说明{)} | a, b |")),
    ("动量 SGD(SGD with momentum)", zh("动量 SGD{(}SGD with momentum{)}")),
])
def test_fixer_makes_chinese_prose_full_width(before, after):
    assert fix_markdown(before) == after


@pytest.mark.parametrize("text", [
    "plain English, with: marks (and parens)?",
    "形状 (3,) 和 (a, b) 是代码",
    "函数 f(x) 的导数 $f'(x), g(x)$",
    "调用 jnp.sum(x) 与 f(X) 时",
    "把 pmean(grad(本地损失)) 搬过来，最多 len(BUCKETS) 份",
    "SPMD（single program, multiple data，单程序多数据）",
    "报 ``TypeError: missing `wrt` argument``。",
    "见 [第 2 章](02.ipynb#2.3-静态参数(static)) 与 https://docs.jax.dev/a,b",
    "```python\nx = f(a, b)  # 注释: 不动\n```",
    "<details><summary>答案</summary>",
    "时间 12:30 与版本 0.4.31",
    "![图](img.png)",
])
def test_fixer_leaves_code_math_links_and_english_alone(text):
    assert fix_markdown(text) == text


@pytest.mark.parametrize("text", ["用 (函数式更新).", "a,(说明)好", "在 JAX 里, 数组: 不可变 (见 1.3)?"])
def test_fixer_is_idempotent(text):
    once = fix_markdown(text)
    assert fix_markdown(once) == once


def test_comments_and_chinese_strings_are_fixed_but_code_is_not():
    src = ("s = 'a, b: c'  # 注释: 中文, 说明 (why)\n"
           "print(f'第一次调用(含编译):{t * 1e3:.1f} ms, 是 {r:.0f} 倍', f(x, y), b'a, b')\n")
    assert fix_code(src) == zh("s = 'a, b: c'  # 注释{:}中文{,}说明{(}why{)}\n"
                               "print(f'第一次调用{(}含编译{)}{:}{t * 1e3:.1f} ms{,} 是 {r:.0f} 倍', f(x, y), b'a, b')\n")


def test_a_fix_that_would_not_compile_is_not_used():
    src = "print('中文, 这里'"   # unbalanced: tokenize fails, the source comes back as it was
    assert fix_code(src) == src


def test_tool_fixes_a_notebook_atomically_and_relinks_renamed_headings(tmp_path):
    target = write_notebook(tmp_path / "a.ipynb", [nbformat.v4.new_markdown_cell("## 1.1 标题: 说明\n\n正文, 这里。")])
    source = write_notebook(tmp_path / "b.ipynb", [
        nbformat.v4.new_markdown_cell("见 [那一节](a.ipynb#1.1-标题:-说明)。"), code("x = 1  # 注释: 中文")])
    tool = [sys.executable, str(ROOT / "tools" / "zh_punct.py")]
    check = subprocess.run([*tool, "--check", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 1 and "a.ipynb" in check.stdout and "b.ipynb" in check.stdout
    subprocess.run([*tool, str(tmp_path)], check=True, capture_output=True)
    a, b = (nbformat.read(p, as_version=4) for p in (target, source))
    assert a.cells[0].source.startswith(zh("## 1.1 标题{:}说明"))
    assert zh("(a.ipynb#1.1-标题{:}说明)") in b.cells[0].source
    assert b.cells[1].source == zh("x = 1  # 注释{:}中文")
    assert subprocess.run([*tool, "--check", str(tmp_path)], capture_output=True).returncode == 0
    assert not list(tmp_path.glob("*.tmp*"))


def test_readme_contributing_and_course_use_chinese_punctuation():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "zh_punct.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_an_english_error_line_inside_chinese_text_keeps_its_colon():
    src = "print(f'（原始报错：NameError: {error}）')\n"
    assert fix_code(src) == src


def test_a_pragma_keeps_a_ui_name_as_it_is():
    src = 'KERNEL = "Python (JAX 学习)"  # zh-punct: keep\nprint("内核 (JAX 学习)")\n'
    assert fix_code(src) == zh('KERNEL = "Python (JAX 学习)"  # zh-punct: keep\nprint("内核 {(}JAX 学习{)}")\n')   # strings keep their blanks
