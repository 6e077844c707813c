"""The chapter contract of CONTRIBUTING.md, read from a notebook: one parser for every tool.

Tools find things by structure (headings, first-line markers, metadata), never by guessing
from prose. If you change a form here, change CONTRIBUTING.md in the same commit.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from verify.cells import course_meta, source_text

#: the course's parts, each a folder under content/ with its own 00_总目录 and numbered chapters
PARTS = ("入门", "进阶")
#: the apxml.com course each part follows: a course section's 课程原文 link must point into it
COURSE_SLUGS = {"入门": "getting-started-with-jax", "进阶": "advanced-jax"}
#: the folder that holds the navigation pages shared by both parts (核心学习路径, 关键词索引, 术语表)
NAVIGATION_PART = "入门"

# Chapter sections (H2 headings) in their required order.
SECTION_KINDS = ["course", "supplement", "exercises", "quiz", "updates", "summary", "appendix"]
SECTION_TITLES = {
    "supplement": "🔍 补充",
    "exercises": "练习",
    "quiz": "测验",
    "updates": "本章更新说明",
    "summary": "小结与速查表",
    "appendix": "附录\uff1a练习参考答案",
}
COURSE_HEADING = re.compile(r"^(\d+\.\d+) +(.+)$")  # "## 1.2 JAX 与 NumPy"
COURSE_LINK = re.compile(r"^> 📖 课程原文[:\uff1a]\[[^\]]+\]\((https://apxml\.com/[^)\s]+)\)", re.M)
SUPPLEMENT_HEADING = re.compile(r"^### (🟢 必读|⚪ 选读) · (.+)$", re.M)
EXERCISE_HEADING = re.compile(r"^### 练习 (\d+\.\d+) · (.+)$", re.M)
QUIZ_HEADING = re.compile(r"^### 第 (\d+) 题", re.M)
#: a rule of an exercise statement ("限制：不用 jnp.bincount"): each needs an answer in
#: metadata.course.rule_answers that breaks it (with correct values), which the self-check must reject
EXERCISE_RULE = re.compile(r"^(?:[-*] )?\*{0,2}限制[:\uff1a]\*{0,2}\s*(.+)$", re.M)
#: wording that restricts how an exercise may be solved; outside a 限制 line (and the ### heading) it is a
#: rule no check enforces, so the structure check asks for it to become a 限制 line
RESTRICTION_WORDS = re.compile(r"不要|不用|不准|不得|不许|禁止|只用|只能用|必须用|不建|不能用|不调用|不写|别用"
                               r"|用 ?`[^`]+` ?(?:写|实现|完成|来做)")
FOLDED_ANSWER = re.compile(r"<details>\s*<summary>答案</summary>", re.S)
UPDATE_ITEM = re.compile(r"^\d+\. ", re.M)
ANSWER_MARK = re.compile(r"^# ✍️ 作答区 \[练习 (\d+\.\d+)\]")
CHECK_MARK = re.compile(r"^# 🧪 自检 \[练习 (\d+\.\d+)\]")
REFERENCE_MARK = re.compile(r"^# 参考答案 \[练习 (\d+\.\d+)\]")
#: two kinds of ❌/✅ pair: an API that JAX deprecated or removed (the ❌ line names that version),
#: and a mistake that never worked (or works and gives a wrong answer)
OLD_MARK = "# ❌ 旧写法"
NEW_MARK = "# ✅ 推荐写法"
WRONG_MARK = "# ❌ 错误写法"
RIGHT_MARK = "# ✅ 正确写法"
PAIR_MARKS = {OLD_MARK: NEW_MARK, WRONG_MARK: RIGHT_MARK}
#: the JAX version an outdated API changed in, on the `# ❌ 旧写法` line: "(0.4.31 移除)", "JAX 0.5 起弃用" …
OLD_VERSION = re.compile(r"\b0\.\d+(?:\.\d+)*\b")
CALLOUT_MARK = "> ⚠️ 注意\uff1a"
CALLOUT = re.compile("^" + re.escape(CALLOUT_MARK), re.M)
KEYWORDS = re.compile(r"^🔑 关键词[:\uff1a](.+)$", re.M)
CHAPTER_KEYS = ("part", "chapter", "title", "topics", "specials")
#: lite cells (CONTRIBUTING §6): every chapter has at least LITE_MIN beyond its setup cell, each with at least
#: LITE_MIN_LINES lines of code and a TRY_MARK comment telling the reader what to change
LITE_MIN, LITE_MIN_LINES = 3, 3
TRY_MARK = "# 试一试\uff1a"
#: the model's import; a lite cell that uses the model imports it itself (a reader may run just that cell)
MINIJAX_IMPORT = "import jaxcourse.minijax as mj"
#: the two H3 headings of every course section: repeated, so never a link target
GENERIC_HEADINGS = frozenset({"课程讲解", "课程代码"})
#: every notebook's first code cell, word for word (tools/check_structure.py --fix-setup writes it):
#: the helper package is found in .venv (./dev setup), one folder up (reading site, a clone), or installed
#: from the course repository where neither exists (Colab); JAXCOURSE_SOURCE overrides the pip source.
SETUP_TEMPLATE = """\
# 准备\uff1a导入课程辅助包 jaxcourse\uff08本地 .venv、阅读站点里都有\uff1bColab 里第一次运行时从 GitHub 安装\uff09
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
    rules: list[str] = field(default_factory=list)  # 限制 lines of the statement
    unstated_rules: list[str] = field(default_factory=list)  # restriction wording outside 限制 lines
    rule_answers: list[str] = field(default_factory=list)  # answers that break a rule: must not pass
    right_answers: list[str] = field(default_factory=list)  # other correct answers (within every rule): must pass
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
    old_new: list[tuple[int, int | None]] = field(default_factory=list)  # ❌ 旧写法: (old cell, new cell or None)
    wrong_right: list[tuple[int, int | None]] = field(default_factory=list)  # ❌ 错误写法: (cell, fix or None)
    stray_marks: list[tuple[int, str]] = field(default_factory=list)  # (cell, first line) of a ❌/✅ cell out of pairs
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
                ex.rules = [r.group(1).strip() for r in EXERCISE_RULE.finditer(text)]
                ex.unstated_rules = [ln.strip() for ln in text.splitlines()
                                     if RESTRICTION_WORDS.search(ln) and not EXERCISE_RULE.match(ln)
                                     and not EXERCISE_HEADING.match(ln)]
            if QUIZ_HEADING.search(text):
                chapter.quiz.append((i, bool(FOLDED_ANSWER.search(text))))
            chapter.callouts += len(CALLOUT.findall(text))
            for m in KEYWORDS.finditer(text):
                for term in re.split(r"[、,\uff0c]", m.group(1)):
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
                        ex.rule_answers = list(course_meta(cell).get("rule_answers", []))
                        ex.right_answers = list(course_meta(cell).get("right_answers", []))
                        ex.names = selfcheck_names(text)
            _pair_mark(chapter, cells, i, head)
    if chapter.sections:
        chapter.sections[-1].end = len(cells)
    updates = [s for s in chapter.sections if s.kind == "updates"]
    for s in updates:
        chapter.update_notes += sum(len(UPDATE_ITEM.findall(source_text(c)))
                                    for c in cells[s.start:s.end] if c.get("cell_type") == "markdown")
    return chapter


def _pair_mark(chapter: Chapter, cells, i: int, head: str) -> None:
    """Record cell i if its first line is a ❌/✅ mark: a ❌ with its ✅ (the next code cell), or a stray one."""
    for bad, good in PAIR_MARKS.items():
        if head.startswith(bad):
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            ok = nxt is not None and nxt.get("cell_type") == "code" and first_line(nxt).startswith(good)
            (chapter.old_new if bad == OLD_MARK else chapter.wrong_right).append((i, i + 1 if ok else None))
            return
    if head.startswith(("# ❌", "# ✅")):
        prev = first_line(cells[i - 1]) if i > 0 and cells[i - 1].get("cell_type") == "code" else ""
        if not any(head.startswith(good) and prev.startswith(bad) for bad, good in PAIR_MARKS.items()):
            chapter.stray_marks.append((i, head))
