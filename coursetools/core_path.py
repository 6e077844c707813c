"""Generate content/入门/核心学习路径.ipynb: course sections plus every 🟢 必读 supplement, in order.

Reading time is estimated from the cells each item spans: 300 Chinese characters (or 60 English
words) of prose per minute, and 8 lines of code per minute (reading and running it).
--check: only report whether the page is stale.
"""

from __future__ import annotations

import re
from pathlib import Path


from .indexing import ROOT, chapters, generated_page, headings, link, page_main
from verify.cells import source_text

FOLDER = ROOT / "content" / "入门"
PAGE = FOLDER / "核心学习路径.ipynb"
CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[A-Za-z]+")


def minutes(cells) -> float:
    """Estimated minutes to study the given cells."""
    prose = code = 0.0
    for cell in cells:
        text = source_text(cell)
        if cell.get("cell_type") == "markdown":
            prose += len(CJK.findall(text)) / 300 + len(WORD.findall(text)) / 60
        elif cell.get("cell_type") == "code":
            code += sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")) / 8
    return prose + code


def items(ch) -> list[tuple[str, str, float, bool]]:
    """(heading, label, minutes, core) for each course section and supplement of a chapter."""
    hs = headings(ch.nb)
    out = []
    for n, (i, level, text) in enumerate(hs):
        is_course = level == 2 and re.match(r"\d+\.\d+ ", text)
        is_supp = level == 3 and (text.startswith("🟢 必读") or text.startswith("⚪ 选读"))
        if not (is_course or is_supp):
            continue
        end = next((j for j, lv, _ in hs[n + 1:] if lv <= level), len(ch.nb.cells))
        core = bool(is_course) or text.startswith("🟢")
        out.append((text, text, minutes(ch.nb.cells[i:end]), core))
    return out


def build(folder: Path = FOLDER) -> object:
    """The core-path page."""
    total_core = total_all = 0.0
    parts = []
    for ch in chapters(folder):
        rows = []
        total_all += minutes(ch.nb.cells)  # everything: sections, supplements, exercises, quiz, appendix
        for heading, label, mins, core in items(ch):
            if core:
                total_core += mins
                rows.append(f"- {link(ch.path, heading, label)} · 约 {max(1, round(mins))} 分钟")
        parts.append(f"## {ch.name}\n\n" + "\n".join(rows))
    saved = 100 * (1 - total_core / total_all) if total_all else 0
    intro = ("# 入门 · 核心学习路径\n\n"
             "第一遍学习只看这里列出的内容：每章的课程正文，加上标着「🟢 必读」的补充；「⚪ 选读」可以先跳过。"
             "练习和测验建议每章学完就做。\n\n"
             f"按核心路径学完入门课约需 **{total_core / 60:.1f} 小时**，整套入门（含全部补充、练习、测验和附录）约 {total_all / 60:.1f} 小时，"
             f"能省下约 {saved:.0f}% 的时间。\n\n"
             "> 时间是按单元格估算的：正文每分钟 300 个汉字（或 60 个英文单词），代码每分钟 8 行（读懂并运行）。")
    return generated_page([intro] + parts, "tools/build_core_path.py")


def main(argv=None) -> int:
    """CLI entry point."""
    return page_main(__doc__, FOLDER, PAGE.name, build, "tools/build_core_path.py", argv)
