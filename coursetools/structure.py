"""Check every chapter notebook against the layout contract of CONTRIBUTING.md.

Usage: tools/check_structure.py [PATH ...] [--counts] [--fix-setup]
Each problem is printed as `notebook: cell N (id X): [rule] message`; exit 1 when any.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from verify.cells import LITE_TAG, is_code, source_text, tags
from coursemodel.contract import (CALLOUT, CALLOUT_MARK, CHAPTER_KEYS, COURSE_SLUGS, LITE_MIN, LITE_MIN_LINES,
                             MINIJAX_IMPORT, NEW_MARK, OLD_MARK, OLD_VERSION, PARTS, RIGHT_MARK, SECTION_KINDS,
                             SECTION_TITLES, TRY_MARK, WRONG_MARK, Chapter, first_line, parse_chapter, setup_source)
from verify.errors import VerifyError
from verify.notebook_io import dumps_notebook, load_notebook, write_atomic

CHAPTER_GLOB = "[0-9][0-9]_*.ipynb"
NON_CHAPTERS = ("00_",)  # index pages have their own layout (see CONTRIBUTING.md)


@dataclass
class Problem:
    """One broken rule."""

    path: str
    cell: int | None
    cell_id: str
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"cell {self.cell + 1} (id {self.cell_id})" if self.cell is not None else "notebook"
        return f"{self.path}: {where}: [{self.rule}] {self.message}"


def chapter_paths(paths: list[Path]) -> list[Path]:
    """Chapter notebooks among paths (folders are searched for NN_*.ipynb, index pages skipped)."""
    found = []
    for p in paths:
        if p.is_dir():
            found += [f for f in sorted(p.rglob(CHAPTER_GLOB)) if not f.name.startswith(NON_CHAPTERS)
                      and ".ipynb_checkpoints" not in f.parts]
        else:
            found.append(p)
    return found


def check_chapter(path: Path, nb) -> list[Problem]:
    """All contract problems of one chapter notebook."""
    cells = nb["cells"]
    ch = parse_chapter(nb)
    out: list[Problem] = []

    def add(cell, rule, msg):
        out.append(Problem(str(path), cell, cells[cell].get("id", "") if cell is not None else "", rule, msg))

    if nb.get("metadata", {}).get("kernelspec", {}).get("name") != "jax-study":
        add(None, "kernelspec", "metadata.kernelspec.name must be `jax-study` (select the kernel 「Python (JAX 学习)」 and save)")
    missing = [k for k in CHAPTER_KEYS if not ch.meta.get(k)]
    if missing:
        add(None, "chapter-metadata", f"metadata.course lacks {', '.join(missing)}")
    folder = Path(path).parent.name
    if folder in PARTS and ch.meta.get("part") != folder:
        add(None, "chapter-metadata", f"metadata.course.part is {ch.meta.get('part')!r} but the notebook is in "
            f"content/{folder}/: set it to {folder!r}")

    code_cells = [i for i, c in enumerate(cells) if is_code(c)]
    if not code_cells or LITE_TAG not in tags(cells[code_cells[0]]) or "import jaxcourse" not in source_text(cells[code_cells[0]]):
        add(code_cells[0] if code_cells else None, "setup-cell", "the first code cell must be the lite-tagged setup cell that imports jaxcourse")
    elif source_text(cells[code_cells[0]]) != expected_setup():
        add(code_cells[0], "setup-cell", "the setup cell differs from CONTRIBUTING §8 (the repository in pyproject.toml "
            "[tool.jaxcourse] goes into its pip line); run: .venv/bin/python tools/check_structure.py --fix-setup")

    _check_sections(ch, add)
    _check_exercises(ch, cells, add)
    _check_lite(cells, code_cells[1:], add)
    for cell, folded in ch.quiz:
        if not folded:
            add(cell, "quiz-folded", "quiz answer must be folded in <details><summary>答案</summary>…</details>")
    for pairs, bad, good in ((ch.old_new, OLD_MARK, NEW_MARK), (ch.wrong_right, WRONG_MARK, RIGHT_MARK)):
        for old, new in pairs:
            if new is None:
                add(old, "old-new-pair", f"a `{bad}` cell must be immediately followed by a `{good}` code cell")
    for old, _ in ch.old_new:
        if not OLD_VERSION.search(first_line(cells[old])):
            add(old, "old-version", f"`{OLD_MARK}` names an API JAX deprecated or removed: say in which version on this line, "
                "e.g. `# ❌ 旧写法（0.4.31 移除）…`; a mistake that never worked is `# ❌ 错误写法` / `# ✅ 正确写法`")
    for cell, head in ch.stray_marks:
        add(cell, "stray-mark", f"`{head[:40]}` is not one of the pairs {OLD_MARK} → {NEW_MARK}, {WRONG_MARK} → {RIGHT_MARK} "
            "(or its ❌ cell is missing right before it)")
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "markdown":
            for line in source_text(cell).splitlines():
                if "⚠️" in line and (line.lstrip().startswith("#") or (line.startswith("> ⚠️") and not CALLOUT.match(line))):
                    add(i, "callout-form", f"a warning is written `{CALLOUT_MARK}…` (a quote line), not {line[:30]!r}")
    for i in code_cells:
        if cells[i].get("execution_count") is None:
            add(i, "executed", "code cell has no saved run: run tools/run_all.py PATH --refresh")
    return out


def lite_cells(cells, code_cells) -> tuple[list[int], dict[int, str]]:
    """Indexes of the lite cells that count for the rule, and why each other lite cell does not."""
    good, weak = [], {}
    for i in code_cells:
        if LITE_TAG not in tags(cells[i]):
            continue
        src = source_text(cells[i])
        lines = [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        why = [f"{len(lines)} lines of code (< {LITE_MIN_LINES})"] if len(lines) < LITE_MIN_LINES else []
        if not any(ln.lstrip().startswith(TRY_MARK) for ln in src.splitlines()):
            why.append(f"no `{TRY_MARK}` line")
        if why:
            weak[i] = " and ".join(why)
        else:
            good.append(i)
    return good, weak


def _check_lite(cells, code_cells, add) -> None:
    good, weak = lite_cells(cells, code_cells)
    if len(good) < LITE_MIN:
        others = "; ".join(f"cell {i + 1}: {why}" for i, why in weak.items())
        add(None, "lite-cells", f"{len(good)} lite cell(s) that teach in the browser, {LITE_MIN} needed: a cell tagged "
            f"`lite` (besides the setup cell) with ≥ {LITE_MIN_LINES} lines of code and a `{TRY_MARK}` line saying what "
            f"to change (CONTRIBUTING §6)" + (f". Not counted: {others}" if others else ""))
    for i in code_cells:
        src = source_text(cells[i])
        if LITE_TAG in tags(cells[i]) and "mj." in src and MINIJAX_IMPORT not in src:
            add(i, "lite-self-contained", f"this lite cell uses the model but does not import it: start it with "
                f"`{MINIJAX_IMPORT}` (a reader may run just this cell in the browser)")


def _check_sections(ch: Chapter, add) -> None:
    slug = COURSE_SLUGS.get(ch.meta.get("part", ""))
    kinds = [s.kind for s in ch.sections]
    for s in ch.sections:
        if s.kind == "unknown":
            add(s.start, "section-order", f"unknown H2 heading `## {s.title}` (allowed: `## N.M 标题` or {', '.join(SECTION_TITLES.values())})")
    required = [k for k in SECTION_KINDS if k != "course"]
    for k in required:
        if k not in kinds:
            add(None, "section-order", f"missing section `## {SECTION_TITLES[k]}`")
    if "course" not in kinds:
        add(None, "section-order", "no course section (`## N.M 标题`)")
    order = [SECTION_KINDS.index(k) for k in kinds if k in SECTION_KINDS]
    if order != sorted(order) or any(kinds.count(k) > 1 for k in required):
        first_bad = next((s for s, a, b in zip(ch.sections[1:], order, order[1:]) if b < a), ch.sections[0])
        add(first_bad.start, "section-order",
            "sections out of order; required: 课程讲解/课程代码 (## N.M …) → " + " → ".join(SECTION_TITLES.values()))
    for s in ch.sections:
        if s.kind != "course":
            continue
        if not s.link:
            add(s.start, "course-section-link", "course section must open with `> 📖 课程原文\uff1a[标题](https://apxml.com/…)`")
        elif slug and f"/courses/{slug}" not in s.link:
            add(s.start, "course-section-link", f"a {ch.meta.get('part')} section's 课程原文 link points into "
                f"https://apxml.com/courses/{slug}/… (or its /zh/ edition), not {s.link}")
    if ch.sections:
        for s in ch.sections:
            if s.kind == "supplement" and not ch.supplements:
                add(s.start, "supplement-marks", "🔍 补充 has no `### 🟢 必读 · …` / `### ⚪ 选读 · …` supplement")


def _check_exercises(ch: Chapter, cells, add) -> None:
    appendix = next((s for s in ch.sections if s.kind == "appendix"), None)
    for ex in ch.exercises.values():
        anchor = next(i for i in (ex.statement, ex.answer, ex.check, ex.reference, 0) if i is not None)
        parts = {"statement (### 练习 ID · 标题)": ex.statement, "✍️ 作答区 cell": ex.answer,
                 "🧪 自检 cell": ex.check, "参考答案 cell in the appendix": ex.reference}
        absent = [name for name, idx in parts.items() if idx is None]
        if absent:
            add(anchor, "exercise-complete", f"练习 {ex.id} lacks: {', '.join(absent)}")
            continue
        if not ex.statement < ex.answer < ex.check:
            add(ex.answer, "exercise-complete", f"练习 {ex.id}: order must be statement → ✍️ 作答区 → 🧪 自检")
        if appendix is None or not appendix.start <= ex.reference < appendix.end:
            add(ex.reference, "exercise-complete", f"练习 {ex.id}: 参考答案 must be in `## {SECTION_TITLES['appendix']}`")
        if not ex.wrong_answers:
            add(ex.check, "exercise-wrong-answer", f"练习 {ex.id}: 🧪 自检 cell needs metadata.course.wrong_answers (≥ 1 plausible wrong answer)")
        if len(ex.rule_answers) < len(ex.rules):
            add(ex.check, "exercise-rule", f"练习 {ex.id}: the statement states {len(ex.rules)} 限制 "
                f"({'; '.join(ex.rules)}) but metadata.course.rule_answers holds {len(ex.rule_answers)}: add, for each, "
                "an answer that breaks it and gives correct values (the self-check must reject it), or drop the rule")
        for line in ex.unstated_rules:
            add(ex.statement, "exercise-unstated-rule", f"练习 {ex.id}: the statement restricts how to solve it outside "
                f"a `限制：` line ({line[:80]!r}): move the restriction onto a `限制：…` line (then it needs a check "
                "and a rule answer), or reword the line if it restricts nothing")
        if not ex.names:
            add(ex.check, "exercise-complete", f"练习 {ex.id}: 🧪 自检 must call selfcheck(ID, names=[…], checks=[…])")
        body = [ln for ln in source_text(cells[ex.answer]).splitlines()[1:] if ln.strip() and not ln.strip().startswith("#")]
        if body:
            add(ex.answer, "answer-area-empty", f"练习 {ex.id}: ✍️ 作答区 must ship empty (comments only)")


def expected_setup() -> str:
    """The setup cell for the repository configured in pyproject.toml (never the CI's own repository:
    the notebooks on GitHub, which Colab opens, carry this text)."""
    from sitebuild import project_config

    cfg = project_config(env={})
    return setup_source(cfg["repository"], cfg["branch"])


def setup_cell(nb) -> int | None:
    """Index of the notebook's setup cell (first code cell, importing jaxcourse), or None."""
    first = next((i for i, c in enumerate(nb["cells"]) if is_code(c)), None)
    return first if first is not None and "import jaxcourse" in source_text(nb["cells"][first]) else None


def fix_setup(path: Path, nb) -> bool:
    """Rewrite the setup cell to the expected text (atomically); True when the file changed."""
    i = setup_cell(nb)
    if i is None or source_text(nb["cells"][i]) == expected_setup():
        return False
    nb["cells"][i]["source"] = expected_setup()
    write_atomic(path, dumps_notebook(nb))
    return True


def counts(path: Path, nb) -> dict:
    """The chapter's figures for closing notes and the index."""
    ch = parse_chapter(nb)
    return {
        "sections": len(ch.sections), "course_sections": sum(s.kind == "course" for s in ch.sections),
        "supplements": len(ch.supplements), "exercises": len(ch.exercises), "quiz": len(ch.quiz),
        "update_notes": ch.update_notes, "asserts": ch.asserts, "cells": len(nb["cells"]),
        "old_new_pairs": len(ch.old_new), "wrong_right_pairs": len(ch.wrong_right), "callouts": ch.callouts,
        "lite_cells": len(lite_cells(nb["cells"], [i for i, c in enumerate(nb["cells"]) if is_code(c)][1:])[0]),
    }


def main(argv=None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", type=Path)
    p.add_argument("--counts", action="store_true", help="print each chapter's counts")
    p.add_argument("--fix-setup", action="store_true",
                   help="rewrite the setup cell to CONTRIBUTING §8's text: of the notebooks given (index pages "
                        "included), or of every notebook under content/")
    args = p.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    if args.fix_setup:
        targets = [f for p in (args.paths or [root / "content"])
                   for f in (sorted(p.rglob("*.ipynb")) if p.is_dir() else [p])]
        for path in targets:
            if ".ipynb_checkpoints" not in path.parts and fix_setup(path, load_notebook(path)):
                print(f"* {path}: setup cell rewritten", file=sys.stderr)
    paths = chapter_paths(args.paths or [root / "content"])
    problems: list[Problem] = []
    for path in paths:
        try:
            nb = load_notebook(path)
        except VerifyError as exc:
            print(f"ERROR {exc}", file=sys.stderr)
            return 2
        problems += check_chapter(path, nb)
        if args.counts:
            print(f"{path}: {counts(path, nb)}")
    for prob in problems:
        print(prob)
    print(f"{len(paths)} chapter(s) checked, {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0
