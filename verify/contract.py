"""The chapter contract of CONTRIBUTING.md, read from a notebook: one parser for every tool.

Tools find things by structure (headings, first-line markers, metadata), never by guessing
from prose. If you change a form here, change CONTRIBUTING.md in the same commit.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .cells import course_meta, source_text

# Chapter sections (H2 headings) in their required order.
SECTION_KINDS = ["course", "supplement", "exercises", "quiz", "updates", "summary", "appendix"]
SECTION_TITLES = {
    "supplement": "🔍 补充",
    "exercises": "练习",
    "quiz": "测验",
    "updates": "本章更新说明",
    "summary": "小结与速查表",
    "appendix": "附录:练习参考答案",
}
COURSE_HEADING = re.compile(r"^(\d+\.\d+) +(.+)$")  # "## 1.2 JAX 与 NumPy"
COURSE_LINK = re.compile(r"^> 📖 课程原文:\[[^\]]+\]\((https://apxml\.com/[^)\s]+)\)", re.M)
SUPPLEMENT_HEADING = re.compile(r"^### (🟢 必读|⚪ 选读) · (.+)$", re.M)
EXERCISE_HEADING = re.compile(r"^### 练习 (\d+\.\d+) · (.+)$", re.M)
QUIZ_HEADING = re.compile(r"^### 第 (\d+) 题", re.M)
FOLDED_ANSWER = re.compile(r"<details>\s*<summary>答案</summary>", re.S)
UPDATE_ITEM = re.compile(r"^\d+\. ", re.M)
ANSWER_MARK = re.compile(r"^# ✍️ 作答区 \[练习 (\d+\.\d+)\]")
CHECK_MARK = re.compile(r"^# 🧪 自检 \[练习 (\d+\.\d+)\]")
REFERENCE_MARK = re.compile(r"^# 参考答案 \[练习 (\d+\.\d+)\]")
OLD_MARK = "# ❌ 旧写法"
NEW_MARK = "# ✅ 推荐写法"
CALLOUT = re.compile(r"^> ⚠️ 注意", re.M)
KEYWORDS = re.compile(r"^🔑 关键词:(.+)$", re.M)
CHAPTER_KEYS = ("part", "chapter", "title", "topics", "specials")
#: the two H3 headings of every course section: repeated, so never a link target
GENERIC_HEADINGS = frozenset({"课程讲解", "课程代码"})
#: every notebook's first code cell, word for word (tools/check_structure.py --fix-setup writes it):
#: the helper package is found in .venv (./dev setup), one folder up (reading site, a clone), or installed
#: from the course repository where neither exists (Colab); JAXCOURSE_SOURCE overrides the pip source.
SETUP_TEMPLATE = """\
# 准备:导入课程辅助包 jaxcourse(本地 .venv、阅读站点里都有;Colab 里第一次运行时从 GitHub 安装)
try:
    import jaxcourse
except ImportError:
    import os
    import subprocess
    import sys
    if os.path.isdir("../jaxcourse"):
        sys.path.insert(0, "..")
    else:
        source = os.environ.get("JAXCOURSE_SOURCE", "{source}")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", source], check=True)
    import jaxcourse"""


def helper_source(repository: str, branch: str = "main") -> str:
    """pip's address of the helper package in the course repository (content/pyproject.toml)."""
    ref = "" if branch == "main" else f"@{branch}"
    return f"git+https://github.com/{repository}{ref}#subdirectory=content"


def setup_source(repository: str, branch: str = "main") -> str:
    """The setup cell every notebook starts its code with."""
    return SETUP_TEMPLATE.format(source=helper_source(repository, branch))


@dataclass
class Section:
    """An H2 section: its kind, title and the cells it spans [start, end)."""

    kind: str
    title: str
    start: int
    end: int = -1
    number: str = ""  # "1.2" for course sections
    link: str = ""  # 课程原文 address for course sections


@dataclass
class Exercise:
    """The four parts of one exercise, tied by its id."""

    id: str
    title: str = ""
    statement: int | None = None
    answer: int | None = None
    check: int | None = None
    reference: int | None = None
    wrong_answers: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


@dataclass
class Chapter:
    """Everything the tools read from one chapter notebook."""

    meta: dict
    sections: list[Section] = field(default_factory=list)
    supplements: list[tuple[int, str, str]] = field(default_factory=list)  # (cell, 🟢 必读/⚪ 选读, title)
    exercises: dict[str, Exercise] = field(default_factory=dict)
    quiz: list[tuple[int, bool]] = field(default_factory=list)  # (cell, answer folded)
    update_notes: int = 0
    old_new: list[tuple[int, int | None]] = field(default_factory=list)  # (old cell, new cell or None)
    callouts: int = 0
    keywords: list[tuple[str, int]] = field(default_factory=list)  # (term, cell)
    asserts: int = 0

    def section_of(self, index: int) -> Section | None:
        """The H2 section holding cell `index`."""
        for s in self.sections:
            if s.start <= index < s.end:
                return s
        return None


def first_line(cell) -> str:
    """First non-blank line of a cell's source."""
    for line in source_text(cell).splitlines():
        if line.strip():
            return line.strip()
    return ""


def h2_titles(cell) -> list[str]:
    """Titles of the `## ` headings in a markdown cell."""
    if cell.get("cell_type") != "markdown":
        return []
    return [line[3:].strip() for line in source_text(cell).splitlines() if line.startswith("## ")]


def selfcheck_names(source: str) -> list[str]:
    """The `names=[...]` list of the selfcheck(...) call in a 🧪 自检 cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "selfcheck":
            for kw in node.keywords:
                if kw.arg == "names":
                    try:
                        return list(ast.literal_eval(kw.value))
                    except ValueError:
                        return []
            if len(node.args) >= 2:
                try:
                    return list(ast.literal_eval(node.args[1]))
                except ValueError:
                    return []
    return []


def _section_kind(title: str) -> tuple[str, str] | None:
    m = COURSE_HEADING.match(title)
    if m:
        return "course", m.group(1)
    for kind, fixed in SECTION_TITLES.items():
        if title == fixed:
            return kind, ""
    return None


def count_asserts(source: str) -> int:
    """Number of assert statements in a code cell (0 when it does not parse)."""
    try:
        return sum(isinstance(n, ast.Assert) for n in ast.walk(ast.parse(source)))
    except SyntaxError:
        return 0


def parse_chapter(nb) -> Chapter:
    """Read the contract's elements from a notebook (no judgement: see tools/check_structure.py)."""
    chapter = Chapter(meta=dict(nb.get("metadata", {}).get("course", {})))
    cells = nb["cells"]
    for i, cell in enumerate(cells):
        text = source_text(cell)
        for title in h2_titles(cell):
            kind = _section_kind(title)
            if chapter.sections:
                chapter.sections[-1].end = i
            if kind is None:
                chapter.sections.append(Section("unknown", title, i))
                continue
            sec = Section(kind[0], title, i, number=kind[1])
            if sec.kind == "course":
                m = COURSE_LINK.search(text)
                sec.link = m.group(1) if m else ""
            chapter.sections.append(sec)
        if cell.get("cell_type") == "markdown":
            for m in SUPPLEMENT_HEADING.finditer(text):
                chapter.supplements.append((i, m.group(1), m.group(2).strip()))
            for m in EXERCISE_HEADING.finditer(text):
                ex = chapter.exercises.setdefault(m.group(1), Exercise(m.group(1)))
                ex.statement, ex.title = i, m.group(2).strip()
            if QUIZ_HEADING.search(text):
                chapter.quiz.append((i, bool(FOLDED_ANSWER.search(text))))
            chapter.callouts += len(CALLOUT.findall(text))
            for m in KEYWORDS.finditer(text):
                for term in re.split(r"[、,,]", m.group(1)):
                    if term.strip():
                        chapter.keywords.append((term.strip(), i))
        elif cell.get("cell_type") == "code":
            head = first_line(cell)
            chapter.asserts += count_asserts(text)
            for mark, attr in ((ANSWER_MARK, "answer"), (CHECK_MARK, "check"), (REFERENCE_MARK, "reference")):
                m = mark.match(head)
                if m:
                    ex = chapter.exercises.setdefault(m.group(1), Exercise(m.group(1)))
                    setattr(ex, attr, i)
                    if attr == "check":
                        ex.wrong_answers = list(course_meta(cell).get("wrong_answers", []))
                        ex.names = selfcheck_names(text)
            if head.startswith(OLD_MARK):
                nxt = cells[i + 1] if i + 1 < len(cells) else None
                ok = nxt is not None and nxt.get("cell_type") == "code" and first_line(nxt).startswith(NEW_MARK)
                chapter.old_new.append((i, i + 1 if ok else None))
    if chapter.sections:
        chapter.sections[-1].end = len(cells)
    updates = [s for s in chapter.sections if s.kind == "updates"]
    for s in updates:
        chapter.update_notes += sum(len(UPDATE_ITEM.findall(source_text(c)))
                                    for c in cells[s.start:s.end] if c.get("cell_type") == "markdown")
    return chapter
