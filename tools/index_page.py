"""Regenerate a course folder's 00_总目录: the chapter table and the capstone figures.

One implementation; tools/build_index_入门.py and tools/build_index_进阶.py are its configurations.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from indexing import ROOT, chapters, link, read_notebook, replace_generated_cells, to_nb, write_or_check
from verify.compare import output_text  # noqa: E402  (indexing puts the repository on sys.path)

CAPSTONE_ACCURACY = re.compile(r"测试准确率[:\uff1a]\s*([0-9.]+)\s*[(\uff08](\d+)/(\d+)[)\uff09]")
CAPSTONE_COMPILES = re.compile(r"训练循环编译次数[:\uff1a]\s*(\d+)")


@dataclass
class IndexConfig:
    """Where a course's chapters and index page are, and which chapter holds the capstone."""

    folder: Path
    index_name: str = "00_总目录.ipynb"
    capstone_prefix: str | None = None  # e.g. "07_": its saved outputs give the capstone figures
    command: str = ""


def saved_text(nb) -> str:
    """All saved stream and text/plain outputs of a notebook, joined."""
    return "\n".join(output_text(cell.get("outputs", []), errors=False) for cell in nb.cells)


def capstone_figures(nb) -> str:
    """'测试准确率 X%(a/b)，训练循环只编译 N 次', read from the capstone chapter's saved outputs."""
    text = saved_text(nb)
    acc, comp = CAPSTONE_ACCURACY.search(text), CAPSTONE_COMPILES.search(text)
    if not acc or not comp:
        raise SystemExit("ERROR the capstone chapter's saved outputs lack `测试准确率: 0.xxxx (a/b)` or "
                         "`训练循环编译次数: N`; run tools/run_all.py on it with --refresh first")
    pct = float(acc.group(1)) * 100
    return f"测试准确率 {pct:.2f}%\uff08{acc.group(2)}/{acc.group(3)}\uff09，训练循环只编译 {comp.group(1)} 次"


def chapter_table(config: IndexConfig) -> str:
    """The markdown chapter table, one row per chapter, from the chapters' metadata and notes."""
    rows = ["| 章 | Notebook | 核心内容 | 本章专题 | 更新说明 |", "|---|---|---|---|---|"]
    for ch in chapters(config.folder):
        meta = ch.chapter.meta
        specials = meta.get("specials", "")
        if config.capstone_prefix and ch.path.name.startswith(config.capstone_prefix):
            specials += f"；综合项目：{capstone_figures(ch.nb)}"
        notes = f"{ch.chapter.update_notes} 条" if ch.chapter.update_notes else "—"
        rows.append(f"| {int(meta.get('chapter', ch.name[:2]))} | {link(ch.path, None, ch.name)} | "
                    f"{meta.get('topics', '')} | {specials} | {notes} |")
    return "\n".join(rows)


def main(config: IndexConfig, argv=None) -> int:
    """Regenerate (or with --check, verify) the index page's generated cells."""
    p = argparse.ArgumentParser(description="regenerate the chapter table of " + config.index_name)
    p.add_argument("--check", action="store_true", help="only report whether the page is stale")
    p.add_argument("--folder", type=Path, help=argparse.SUPPRESS)  # tests: a copy of the course folder
    args = p.parse_args(argv)
    if args.folder:
        config = IndexConfig(args.folder, config.index_name, config.capstone_prefix, config.command)
    index = config.folder / config.index_name
    if not config.folder.is_dir():
        print(f"ERROR {config.folder} does not exist yet: nothing to index", file=sys.stderr)
        return 2
    nb = to_nb(read_notebook(index))
    replace_generated_cells(nb, {"chapter-table": chapter_table(config)})
    return write_or_check(index, nb, args.check, config.command)


def config_for(part: str) -> IndexConfig:
    """Configuration of one course folder."""
    capstone = {"入门": "07_"}.get(part)
    return IndexConfig(folder=ROOT / "content" / part, capstone_prefix=capstone,
                       command=f"tools/build_index_{part}.py")
