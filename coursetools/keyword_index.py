"""Generate content/入门/关键词索引.ipynb: concept or API → chapter and section links.

Entries come from the `🔑 关键词:` lines (CONTRIBUTING.md §7) and from every public `jax.*` API
used in a code cell (`jnp.` is read as `jax.numpy.`, `lax.` as `jax.lax.`).
--check: only report whether the page is stale.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from verify.cells import source_text
from coursemodel.contract import NAVIGATION_PART

from .indexing import ROOT, course_chapters, generated_page, link, page_main, section_for_cell

FOLDER = ROOT / "content" / NAVIGATION_PART
PAGE = FOLDER / "关键词索引.ipynb"
API = re.compile(r"(?<![\w.])(jax|jnp|lax)((?:\.[A-Za-z]\w*)+)")
ALIASES = {"jax": "jax", "jnp": "jax.numpy", "lax": "jax.lax"}


def code_apis(source: str) -> set[str]:
    """Public jax.* names used in a code cell (comments and private names ignored)."""
    found = set()
    for line in source.splitlines():
        line = line.split("#", 1)[0]
        for m in API.finditer(line):
            found.add(ALIASES[m.group(1)] + m.group(2))
    return found


def collect(folder: Path = FOLDER) -> tuple[dict, dict]:
    """({concept: [(chapter, heading)]}, {api: [(chapter, heading)]}) in reading order, both parts."""
    concepts, apis = defaultdict(list), defaultdict(list)
    for ch in course_chapters(folder):
        for term, cell in ch.chapter.keywords:
            where = (ch, section_for_cell(ch.nb, cell))
            (apis if term.startswith("jax.") else concepts)[term].append(where)
        for i, cell in enumerate(ch.nb.cells):
            if cell.get("cell_type") == "code":
                for api in code_apis(source_text(cell)):
                    apis[api].append((ch, section_for_cell(ch.nb, i)))
    return concepts, apis


def sort_key(term: str) -> str:
    """Where a term sorts: Chinese by its pinyin, Latin letters as they are, case and leading marks ignored."""
    from pypinyin import lazy_pinyin

    plain = term.strip("`").lstrip("._@#[(").lower()
    return "".join(lazy_pinyin(plain)).lower()


def initial(term: str) -> str:
    """The letter a term is filed under (A–Z; 其他 for anything else, e.g. a term that starts with √)."""
    first = sort_key(term)[:1].upper()
    return first if "A" <= first <= "Z" else "其他"


def short_label(heading: str) -> str:
    """A section's short name in a link list: its number ("1.3"), or a supplement's title up to its first colon."""
    m = re.match(r"((?:练习 )?\d+\.\d+)\b", heading)
    if m:
        return m.group(1)
    title = re.sub(r"^(🟢 必读|⚪ 选读) · ", "", heading)
    return re.split(r"[\uff1a:]", title, maxsplit=1)[0].strip()


def _entry(term: str, places, page: Path) -> str:
    """One line: the term, then every place that teaches it, grouped by chapter ("入门 03：3.2、3.5")."""
    by_chapter: dict[str, list[str]] = {}
    seen = set()
    for ch, heading in places:
        if (ch.path, heading) in seen:
            continue
        seen.add((ch.path, heading))
        by_chapter.setdefault(f"{ch.part} {ch.name[:2]}", []).append(
            link(ch.path, heading, short_label(heading) if heading else ch.name, base=page))
    groups = "\uff1b".join(f"{number}\uff1a" + "\u3001".join(links) for number, links in by_chapter.items())
    return f"- **{term}** \u2014 {groups}"


def _letters(terms: list[str]) -> dict[str, list[str]]:
    """{initial: terms in pinyin order} in letter order."""
    files: dict[str, list[str]] = {}
    for t in sorted(terms, key=sort_key):
        files.setdefault(initial(t), []).append(t)
    return files


def build(folder: Path = FOLDER) -> object:
    """The keyword-index page: concepts filed by pinyin initial, APIs by module; every place listed."""
    concepts, apis = collect(folder)
    page = folder / PAGE.name
    intro = ("# 关键词索引\n\n按概念或 API 查到讲它的章节和小节，入门和进阶两部分都在里面。概念来自各章的「🔑 关键词」，按拼音（英文按字母）"
             "排在首字母下；API 是代码单元格里实际用到的每个公开 `jax.*` 名字，按模块分组。每个条目列出讲到它的全部小节，"
             "按部分和章分组：`入门 01：1.3、1.5` 表示入门第 1 章的 1.3 节和 1.5 节。术语的意思见[术语表](术语表.ipynb)。")
    files = _letters(list(concepts))
    jump = " · ".join(f"[{k}](#{k})" for k in files)
    concept_cell = "## 概念\n\n" + jump + "\n\n" + "\n\n".join(
        f"### {k}\n\n" + "\n".join(_entry(t, concepts[t], page) for t in terms) for k, terms in files.items())
    modules: dict[str, list[str]] = defaultdict(list)
    for api in apis:
        modules[api.rsplit(".", 1)[0] if api.count(".") > 1 else "jax"].append(api)
    api_cell = "## API\n\n" + "\n\n".join(
        f"### `{mod}`\n\n" + "\n".join(_entry(f"`{t}`", apis[t], page) for t in sorted(names, key=str.lower))
        for mod, names in sorted(modules.items(), key=lambda kv: (kv[0] != "jax", kv[0])))
    return generated_page([intro, concept_cell, api_cell], "tools/build_keyword_index.py")


def main(argv=None) -> int:
    """CLI entry point."""
    return page_main(__doc__, FOLDER, PAGE.name, build, "tools/build_keyword_index.py", argv)
