"""Published-notebook lint: each rule fires on a fixture, and every course notebook is clean."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from nbfactory import code, write_notebook

from coursetools.lint import lint
from verify.runner import find_notebooks  # noqa: E402


def _nb(tmp_path, outputs, count=1, **meta):
    cell = code("x = 1", course=meta or None)
    path = write_notebook(tmp_path / "n.ipynb", [cell])
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].execution_count = count
    nb.cells[0].outputs = [nbformat.from_dict(o) for o in outputs]
    nbformat.write(nb, path)
    return path


def _stream(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


def _rules(path):
    return {p.split("[")[1].split("]")[0] for p in lint(path)}


def test_when_outputs_are_clean_then_lint_is_silent(tmp_path):
    assert _rules(_nb(tmp_path, [_stream("结果 42\n")])) == set()


@pytest.mark.parametrize("outputs, count, rule", [
    ([_stream("saved to /tmp/tmpab12/x.npy\n")], 1, "machine-path"),
    ([_stream("/root/.cache/x\n")], 1, "machine-path"),
    ([_stream("\x1b[31mred\x1b[0m\n")], 1, "ansi-in-text"),
    ([_stream("x\n")], 3, "execution-order"),
    ([_stream("x\n")], None, "outputs-without-run"),
    ([_stream("UserWarning: Glyph 23398 (\\N{CJK UNIFIED IDEOGRAPH-5B66}) missing from font(s) DejaVu Sans.\n", "stderr")], 1, "glyph-missing"),
    ([_stream("<cell>:3: DeprecationWarning: old\n", "stderr")], 1, "undeclared-warning"),
    ([{"output_type": "error", "ename": "E", "evalue": "", "traceback": ["File nbclient/client.py:1 in run"]}], 1, "harness-frame"),
    ([{"output_type": "display_data", "metadata": {}, "data": {"image/png": base64.b64encode(b"0" * 300_000).decode()}}], 1, "image-budget"),
    ([{"output_type": "error", "ename": "TypeError", "evalue": "bad",
       "traceback": ["-" * 75, "TypeError  Traceback (most recent call last)"] + [f"File jax/_src/a.py:{n}" for n in range(20)]
       + ["TypeError: bad"]}], 1, "long-traceback"),
], ids=["temp-path", "home-path", "ansi", "order", "never-ran", "glyph", "warning", "harness", "image", "long-traceback"])
def test_when_a_rule_is_broken_then_lint_names_it(tmp_path, outputs, count, rule):
    assert rule in _rules(_nb(tmp_path, outputs, count))


def test_when_a_warning_is_declared_then_lint_accepts_it(tmp_path):
    path = _nb(tmp_path, [_stream("<cell>:3: DeprecationWarning: old\n", "stderr")], expect_warnings=["DeprecationWarning"])
    assert _rules(path) == set()


def test_chinese_plot_labels_render_with_the_course_font(tmp_path):
    import warnings

    import matplotlib
    matplotlib.use("Agg")
    import jaxcourse

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig, ax = jaxcourse.figure()
        ax.set_title("编译次数与耗时")
        fig.savefig(tmp_path / "p.png")
    assert not [w for w in caught if "missing from" in str(w.message)], [str(w.message) for w in caught]


def test_the_course_font_is_found_with_no_system_font_installed(tmp_path):
    """Only matplotlib's own fonts and the pinned font package: Chinese labels still render."""
    script = f"""
import warnings
from pathlib import Path
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager
bundled = str(Path(matplotlib.get_data_path()))
font_manager.fontManager.ttflist = [f for f in font_manager.fontManager.ttflist if f.fname.startswith(bundled)]
import jaxcourse
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    name = jaxcourse.use_cjk_font()
    fig, ax = jaxcourse.figure()
    ax.set_title("编译次数与耗时")
    fig.savefig({str(tmp_path / "p.png")!r})
used = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
print(name, used == jaxcourse.display.packaged_cjk_font(), [str(w.message) for w in caught])
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Noto Sans CJK SC True []", proc.stdout + proc.stderr


@pytest.mark.parametrize("path", find_notebooks([ROOT / "content"]), ids=lambda p: p.stem)
def test_course_notebook_passes_lint(path):
    problems = lint(path)
    assert not problems, "\n".join(problems)


def _md(tmp_path, text, cell_type="markdown"):
    cell = nbformat.v4.new_markdown_cell(text) if cell_type == "markdown" else code(text)
    return write_notebook(tmp_path / "m.ipynb", [cell])


@pytest.mark.parametrize("text, cell_type, rule", [
    ("在 JAX 里, 数组不可变。", "markdown", "zh-punctuation"),
    ("x = 1  # 注释: 这里", "code", "zh-punctuation"),
    ("这段代码在本机上跑得很快。", "markdown", "term"),
    ("fori_loop 被降为 scan。", "markdown", "term"),
    ("# 用随机数密钥生成\nx = 1", "code", "term"),
    ("print('结果: ', x)", "code", "zh-punctuation"),
    ("print('在本机上运行')", "code", "term"),
    ("先求 Hessian，再看它的特征值。", "markdown", "term-en"),
    ("# 整个 Jacobian 太大\nx = 1", "code", "term-en"),
], ids=["markdown-comma", "comment-colon", "term-machine", "term-lowering", "term-in-comment", "printed-colon",
        "printed-term", "english-term", "english-term-in-comment"])
def test_when_chinese_prose_breaks_a_rule_then_lint_names_it(tmp_path, text, cell_type, rule):
    assert rule in _rules(_md(tmp_path, text, cell_type))


@pytest.mark.parametrize("text, cell_type", [
    ("在 JAX 里\uff0c数组不可变\uff1a用 `x.at[i].set(v)`\uff08函数式更新\uff09。", "markdown"),
    ("代码里的 `本机` 与 $a, b$ 不算，链接 [x](https://a.b/c(d)) 也不算。", "markdown"),
    ("x = f(a, b)  # 调用时传两个参数\nprint('结果\uff1a', x, b'a, b')", "code"),
    ("梯度下降让损失下降。", "markdown"),
    ("海森矩阵（Hessian）用 `jax.hessian` 求；`jax.jacobian` 与 x.Jacobian 是代码。", "markdown"),
], ids=["clean-prose", "code-math-links", "code-and-bytes", "descent-is-fine", "english-beside-chinese"])
def test_when_chinese_prose_follows_the_rules_then_lint_is_silent(tmp_path, text, cell_type):
    assert not {"zh-punctuation", "term", "term-en"} & _rules(_md(tmp_path, text, cell_type))
