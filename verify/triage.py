"""Class every difference by how serious it is, and write the report as Markdown and JUnit XML."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from .compare import any_numbers, match_numbers
from .results import FAILED, NotebookResult


def note_tally(results: list[NotebookResult]) -> dict[str, int]:
    """Each distinct note (an environment difference) and how many notebooks carry it."""
    tally: dict[str, int] = {}
    for nb in results:
        for note in nb.notes:
            tally[note] = tally.get(note, 0) + 1
    return tally

# Most serious first.
CLASSES = [
    "cell error",
    "assert failed",
    "old-way error changed or vanished",
    "numeric beyond tolerance",
    "new warning",
    "repr/text change",
    "environment mismatch",
]


def classify(cell) -> str:
    """The triage class of one failed cell."""
    rule = cell.rule
    if rule == "cell error":
        return "assert failed" if cell.message.startswith("AssertionError") else "cell error"
    if rule in ("kernel died", "cell timeout", "lite cell needs JAX"):
        return "cell error"
    if rule in ("expected error missing", "error type changed"):
        return "old-way error changed or vanished"
    if rule == "new warning":
        return "new warning"
    if rule == "environment mismatch":
        return "environment mismatch"
    if rule == "text differs":
        minus = [ln[1:] for ln in cell.detail.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:] for ln in cell.detail.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        if minus and plus and match_numbers("\n".join(minus), "\n".join(plus), any_numbers) is not None:
            return "numeric beyond tolerance"
        return "repr/text change"
    return "cell error"


def grouped(results: list[NotebookResult]) -> dict[str, list[tuple[NotebookResult, object]]]:
    """Failed cells (and notebooks that could not run) by class, in severity order."""
    groups: dict[str, list] = {c: [] for c in CLASSES}
    for nb in results:
        if nb.status == "error":
            groups["cell error"].append((nb, None))
        for cell in nb.cells:
            if cell.status == FAILED:
                groups[classify(cell)].append((nb, cell))
    return {k: v for k, v in groups.items() if v}


def fence(text: str, limit: int = 3000, lang: str = "") -> str:
    """text as an indented Markdown code block under a list item, cut at `limit` characters."""
    text = text.strip()
    if not text:
        return "\n"
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters)"
    text = text.replace("```", "`​``")
    return f"\n\n  ```{lang}\n" + "".join(f"  {ln}\n" for ln in text.splitlines()) + "  ```\n"


def item_markdown(path: str, cell, extra: str = "") -> str:
    """One list item: notebook → cell: message, the cell's first source line, extra lines, the detail."""
    return (f"- **{path}** → {cell.label}: {cell.message or cell.rule}"
            + (f"  \n  `{cell.source_head}`" if cell.source_head else "")
            + (f"  \n  {extra}" if extra else "")
            + fence(cell.detail, lang="diff" if cell.rule == "text differs" else ""))


def markdown_report(results: list[NotebookResult], title: str, env: dict) -> str:
    """A Markdown report for CI job summaries: summary table, then each difference by class."""
    groups = grouped(results)
    lines = [f"# {title}", "", "| | |", "|---|---|"]
    lines += [f"| {k} | `{v}` |" for k, v in env.items()]
    passed = sum(r.ok for r in results)
    lines += ["", f"**{passed} of {len(results)} notebooks verified.**", ""]
    notes = note_tally(results)
    if notes:
        lines += ["## Notes (reported, not failures)", ""]
        lines += [f"- {count} notebook(s): {note}" for note, count in notes.items()] + [""]
    if not groups:
        lines.append("No behaviour change found: every saved output and assert still holds.")
        return "\n".join(lines) + "\n"
    lines += ["| class | cells |", "|---|---|"] + [f"| {k} | {len(v)} |" for k, v in groups.items()] + [""]
    for klass, items in groups.items():
        lines += [f"## {klass}", ""]
        for nb, cell in items:
            if cell is None:
                lines.append(f"- **{nb.path}**: {nb.message}")
                continue
            lines.append(item_markdown(nb.path, cell))
        lines.append("")
    lines.append("Next step: run `tools/run_all.py --refresh` on the new version, review `git diff`, "
                 "and write each change up in the chapter's 本章更新说明.")
    return "\n".join(lines) + "\n"


def junit_xml(results: list[NotebookResult]) -> str:
    """JUnit XML: one testsuite per notebook, one testcase per code cell."""
    suites = ET.Element("testsuites")
    for nb in results:
        failures = [c for c in nb.cells if c.status == FAILED]
        suite = ET.SubElement(suites, "testsuite", name=nb.path, tests=str(max(1, len(nb.cells))),
                              failures=str(len(failures)), errors=str(int(nb.status == "error")),
                              time=f"{nb.seconds:.3f}")
        if nb.notes:
            props = ET.SubElement(suite, "properties")
            for note in nb.notes:
                ET.SubElement(props, "property", name="note", value=note)
        if nb.status == "error":
            case = ET.SubElement(suite, "testcase", classname=nb.path, name="notebook")
            ET.SubElement(case, "error", message=nb.message[:500]).text = nb.message
        for cell in nb.cells:
            case = ET.SubElement(suite, "testcase", classname=nb.path, name=cell.label, time=f"{cell.seconds:.3f}")
            if cell.status == FAILED:
                node = ET.SubElement(case, "failure", message=f"[{classify(cell)}] {cell.message}"[:500], type=cell.rule)
                node.text = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "", cell.detail)
            elif cell.status != "passed":
                ET.SubElement(case, "skipped", message=cell.rule)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)
