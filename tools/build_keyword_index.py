#!/usr/bin/env python3
"""Generate content/入门/关键词索引.ipynb: concept or API → chapter and section links.

Entries come from the `🔑 关键词:` lines (CONTRIBUTING.md §7) and from every public `jax.*` API
used in a code cell (`jnp.` is read as `jax.numpy.`, `lax.` as `jax.lax.`).
--check: only report whether the page is stale.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from indexing import ROOT, chapters, generated_page, link, page_main, section_for_cell  # noqa: E402
from verify.cells import source_text  # noqa: E402

FOLDER = ROOT / "content" / "入门"
PAGE = FOLDER / "关键词索引.ipynb"
API = re.compile(r"(?<![\w.])(jax|jnp|lax)((?:\.[A-Za-z]\w*)+)")
ALIASES = {"jax": "jax", "jnp": "jax.numpy", "lax": "jax.lax"}
MAX_LINKS = 6


def code_apis(source: str) -> set[str]:
    """Public jax.* names used in a code cell (comments and private names ignored)."""
    found = set()
    for line in source.splitlines():
        line = line.split("#", 1)[0]
        for m in API.finditer(line):
            found.add(ALIASES[m.group(1)] + m.group(2))
    return found


def collect(folder: Path = FOLDER) -> tuple[dict, dict]:
    """({concept: [(chapter, heading)]}, {api: [(chapter, heading)]}) in reading order."""
    concepts, apis = defaultdict(list), defaultdict(list)
    for ch in chapters(folder):
        for term, cell in ch.chapter.keywords:
            where = (ch, section_for_cell(ch.nb, cell))
            (apis if term.startswith("jax.") else concepts)[term].append(where)
        for i, cell in enumerate(ch.nb.cells):
            if cell.get("cell_type") == "code":
                for api in code_apis(source_text(cell)):
                    apis[api].append((ch, section_for_cell(ch.nb, i)))
    return concepts, apis


def _entry(term: str, places) -> str:
    links, seen = [], set()
    for ch, heading in places:
        key = (ch.name, heading)
        if key in seen:
            continue
        seen.add(key)
        label = f"{ch.name[:2]} · {heading}" if heading else ch.name
        links.append(link(ch.path, heading, label))
    more = f" 等 {len(seen)} 处" if len(seen) > MAX_LINKS else ""
    return f"- **{term}**:" + "、".join(links[:MAX_LINKS]) + more


def build(folder: Path = FOLDER) -> object:
    """The keyword-index page."""
    concepts, apis = collect(folder)
    intro = ("# 入门 · 关键词索引\n\n按概念或 API 查到讲它的章节和小节。概念来自各章的「🔑 关键词」，"
             "API 是代码单元格里实际用到的每个公开 `jax.*` 名字。")
    concept_cell = "## 概念\n\n" + "\n".join(_entry(t, concepts[t]) for t in sorted(concepts))
    api_cell = "## API\n\n" + "\n".join(_entry(f"`{t}`", apis[t]) for t in sorted(apis))
    return generated_page([intro, concept_cell, api_cell], "tools/build_keyword_index.py")


def main(argv=None) -> int:
    """CLI entry point."""
    return page_main(__doc__, FOLDER, PAGE.name, build, "tools/build_keyword_index.py", argv)


if __name__ == "__main__":
    sys.exit(main())
