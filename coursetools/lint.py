"""Lint what a published notebook shows: clean, ordered outputs that leak nothing of this machine.

Usage: tools/lint_notebooks.py [PATH ...]   (default content/)   exit 1 when any rule breaks.
Rules: execution-order, outputs-without-run, machine-path, ansi-in-text, image-budget,
harness-frame, glyph-missing, undeclared-warning, long-traceback, zh-punctuation, term, term-en.
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from pathlib import Path

from verify.cells import SKIP_TAG, is_code, source_text, tags, warning_declared
from verify.compare import WARNING_LINE
from verify.normalize import ANSI as ANSI_CODE
from verify.notebook_io import load_notebook
from coursemodel.punctuation import problems as punctuation_problems, prose_text
from verify.runner import find_notebooks

ROOT = Path(__file__).resolve().parent.parent

IMAGE_BUDGET = 250_000  # bytes per image, decoded
MACHINE_PATH = re.compile(r"(/tmp/[\w.-]+|/home/[\w.-]+|/Users/[\w.-]+|/root/[\w.-]+|[A-Z]:\\\\Users\\\\|/work/[\w.-]+|/opt/[\w.-]+|\.venv/)")
ANSI = re.compile(r"\x1b\[")
HARNESS = re.compile(r"(verify/(execute|worker|runner)\.py|nbclient/|jupyter_client/|ipykernel_launcher)")
GLYPH = re.compile(r"Glyph \d+ .*missing from (current )?font")
#: a saved traceback holds at most this many lines besides the error message (jaxcourse's short form: a
#: rule, the header, and two lines for each of at most 3 cell frames)
TRACEBACK_LINES = 8


def rejected_terms() -> list[tuple[re.Pattern, str]]:
    """(pattern, the term to use) for every `reject` of tools/glossary.toml."""
    from .glossary import terms

    return [(re.compile(r), t["zh"]) for t in terms() for r in t.get("reject", [])]


#: how far (in characters) from an English term its Chinese term may stand for the English to count as
#: "beside it" ("雅可比矩阵（Jacobian）", "Hessian（海森矩阵）")
BESIDE = 12


def translated_terms() -> list[tuple[re.Pattern, str]]:
    """(pattern, the Chinese term) for every `translate` word of tools/glossary.toml: English the prose
    must write in Chinese, keeping the English only beside the Chinese term. Code (`x.Jacobian`, `Hessian(`)
    and longer English names (`Hessian-vector product`) are not the word."""
    from .glossary import terms

    return [(re.compile(rf"(?<![A-Za-z0-9_.]){re.escape(w)}(?![A-Za-z0-9_(]|-[A-Za-z])"), t["zh"])
            for t in terms() for w in t.get("translate", [])]


def untranslated(prose: str, pattern: re.Pattern, zh: str) -> str | None:
    """The first English term in prose that stands without its Chinese term beside it."""
    for m in pattern.finditer(prose):
        if zh not in prose[max(0, m.start() - BESIDE):m.end() + BESIDE]:
            return m.group(0)
    return None


def traceback_excess(out: dict) -> int:
    """Lines a saved error shows beyond its message and the short traceback's frames (0 when short)."""
    text = ANSI_CODE.sub("", "\n".join(out.get("traceback", [])))
    message = f"{out.get('ename', '')}: {out.get('evalue', '')}"
    return max(0, text.count("\n") + 1 - (message.count("\n") + 1) - TRACEBACK_LINES)


def prose_problems(cell, terms, english=None) -> list[tuple[str, str]]:
    """(rule, message) for the Chinese prose of a cell: markdown, or a code cell's comments."""
    code = cell.get("cell_type") == "code"
    text = source_text(cell)
    out = [("zh-punctuation", f"half-width punctuation in Chinese prose near {p!r}: run tools/zh_punct.py")
           for p in punctuation_problems(text, code=code)[:3]]
    prose = prose_text(text, code=code)
    for pattern, term in terms:
        m = pattern.search(prose)
        if m:
            out.append(("term", f"{m.group(0)!r}: the course says {term!r} (tools/glossary.toml, CONTRIBUTING §11)"))
    for pattern, term in english or ():
        word = untranslated(prose, pattern, term)
        if word:
            out.append(("term-en", f"{word!r} stands alone in Chinese prose: write {term!r} (the English only in "
                        f"parentheses beside it, the first time; tools/glossary.toml `translate`)"))
    return out


def _text(v) -> str:
    return "".join(v) if isinstance(v, list) else (v or "")


def lint(path: Path) -> list[str]:
    """Problems of one notebook as 'path: cell N (id X): [rule] message'."""
    nb = load_notebook(path)
    problems = []
    terms, english = rejected_terms(), translated_terms()
    expected, order_ok = 1, True
    for i, cell in enumerate(nb.cells):

        def add(rule, msg):
            problems.append(f"{path}: cell {i + 1} (id {cell.get('id', '')}): [{rule}] {msg}")

        for rule, msg in prose_problems(cell, terms, english):
            add(rule, msg)
        if cell.get("cell_type") != "code":
            continue

        count, outputs = cell.get("execution_count"), cell.get("outputs", [])
        if is_code(cell) and SKIP_TAG not in tags(cell) and order_ok:
            if count != expected:  # report the first break only: the rest follows from it
                add("execution-order", f"execution count {count}, expected {expected}: refresh the whole notebook in order")
                order_ok = False
            expected += 1
        if count is None and outputs:
            add("outputs-without-run", "cell has outputs but never ran")
        for out in outputs:
            kind = out.get("output_type")
            texts = [_text(out.get("text"))] if kind == "stream" else \
                [_text(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
            if kind == "error":
                texts = ["\n".join(out.get("traceback", []))]
                if traceback_excess(out):
                    add("long-traceback", f"the saved traceback has {traceback_excess(out)} line(s) more than the short form: "
                        "refresh with tools/run_all.py PATH --refresh (the harness saves short tracebacks)")
            for t in texts:
                m = MACHINE_PATH.search(t)
                if m:
                    add("machine-path", f"output shows a path of the machine that produced it: {m.group(0)!r}")
                if kind != "error" and ANSI.search(t):
                    add("ansi-in-text", "ANSI escape codes in a text output (only error tracebacks may keep them)")
                if HARNESS.search(t):
                    add("harness-frame", "output exposes harness/kernel internals in a traceback")
                if GLYPH.search(t):
                    add("glyph-missing", "matplotlib could not draw a character: use jaxcourse.figure()/use_cjk_font()")
            if kind == "stream" and out.get("name") == "stderr":
                for w in WARNING_LINE.finditer(_text(out.get("text"))):
                    if not warning_declared(cell, w.group(1)):
                        add("undeclared-warning", f"{w.group(1)} printed but not listed in metadata.course.expect_warnings")
            for mime, data in out.get("data", {}).items():
                if mime.startswith("image/") and mime != "image/svg+xml":
                    size = len(base64.b64decode(_text(data)))
                    if size > IMAGE_BUDGET:
                        add("image-budget", f"{mime} is {size} bytes (budget {IMAGE_BUDGET}): lower dpi or size")
    return problems


def main(argv=None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", type=Path)
    args = p.parse_args(argv)
    problems = [q for nb in find_notebooks(args.paths or [ROOT / "content"]) for q in lint(nb)]
    for q in problems:
        print(q)
    print(f"{len(problems)} lint problem(s)", file=sys.stderr)
    return 1 if problems else 0
