"""Generate content/入门/核心学习路径.ipynb: course sections plus every 🟢 必读 supplement, for both parts.

Reading time is estimated from the cells each item spans: 300 Chinese characters (or 60 English
words) of prose per minute, and 8 lines of code per minute (reading and running it).
--check: only report whether the page is stale.
"""

from __future__ import annotations

import re
from pathlib import Path

from verify.cells import source_text
from coursemodel.contract import NAVIGATION_PART

from .indexing import ROOT, course_chapters, generated_page, headings, link, page_main

FOLDER = ROOT / "content" / NAVIGATION_PART
#: 进阶's recommended order (00_总目录's 学习路线): 08 and 10 right after 入门, then 01→02→04→03→06,
#: then the rest as needed; 入门 is read in chapter order
ROUTE = {"进阶": ("08", "10", "01", "02", "04", "03", "06", "05", "07", "09", "11")}
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


def _in_route(chapters: list, part: str) -> list:
    """A part's chapters in its recommended reading order (chapters the route does not name go last)."""
    route = ROUTE.get(part)
    if not route:
        return chapters
    return sorted(chapters, key=lambda ch: route.index(ch.name[:2]) if ch.name[:2] in route else len(route))


def build(folder: Path = FOLDER) -> object:
    """The core-path page: for each part, its chapters in reading order, each with its core items."""
    page = folder / PAGE.name
    found = course_chapters(folder)
    cells, totals = [], []
    for part in dict.fromkeys(ch.part for ch in found):
        core = whole = 0.0
        sections = []
        for ch in _in_route([c for c in found if c.part == part], part):
            rows = []
            whole += minutes(ch.nb.cells)  # everything: sections, supplements, exercises, quiz, appendix
            for heading, label, mins, is_core in items(ch):
                if is_core:
                    core += mins
                    rows.append(f"- {link(ch.path, heading, label, base=page)} · 约 {max(1, round(mins))} 分钟")
            sections.append(f"### {ch.name}\n\n" + "\n".join(rows))
        saved = 100 * (1 - core / whole) if whole else 0
        totals.append(f"- **{part}**\uff1a核心路径约 **{core / 60:.1f} 小时**\uff0c全部内容（含补充、练习、测验和附录）约 "
                      f"{whole / 60:.1f} 小时\uff0c能省下约 {saved:.0f}% 的时间。")
        order = "按章节顺序" if part not in ROUTE else "按[进阶 · 总目录](../进阶/00_总目录.ipynb#学习路线)推荐的顺序"
        cells.append(f"## {part}\n\n{order}排列。\n\n" + "\n\n".join(sections))
    intro = ("# 核心学习路径\n\n"
             "第一遍学习只看这里列出的内容：每章的课程正文，加上标着「🟢 必读」的补充；「⚪ 选读」可以先跳过。"
             "练习和测验建议每章学完就做。先学完入门，再学进阶。\n\n" + "\n".join(totals) + "\n\n"
             "> 时间是按单元格估算的：正文每分钟 300 个汉字（或 60 个英文单词），代码每分钟 8 行（读懂并运行）。")
    return generated_page([intro] + cells, "tools/build_core_path.py")


def main(argv=None) -> int:
    """CLI entry point."""
    return page_main(__doc__, FOLDER, PAGE.name, build, "tools/build_core_path.py", argv)
