"""Generate the course's term list from tools/glossary.toml: the reader's page content/入门/术语表.ipynb
and the table between the glossary markers in CONTRIBUTING.md.

--check: only report whether either is stale.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from coursemodel.contract import NAVIGATION_PART
from verify.notebook_io import write_atomic
from coursemodel.punctuation import fix_markdown

from .indexing import ROOT, generated_page, page_main

DATA = ROOT / "tools" / "glossary.toml"
FOLDER = ROOT / "content" / NAVIGATION_PART
PAGE = FOLDER / "术语表.ipynb"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
START, END = "<!-- glossary:start (tools/build_glossary.py) -->", "<!-- glossary:end -->"


def terms(path: Path = DATA) -> list[dict]:
    """The [[term]] tables of glossary.toml, each checked for its required keys."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"ERROR {path}: {exc}")
    out = data.get("term", [])
    for n, t in enumerate(out, 1):
        missing = [k for k in ("zh", "en", "means") if not t.get(k)]
        if missing:
            raise SystemExit(f"ERROR {path}: term {n} ({t.get('zh', '?')}) lacks {', '.join(missing)}")
    return out


def table(items: list[dict], *, rejects: bool) -> str:
    """The markdown table of the terms (with the rejected wordings for contributors)."""
    head = "| 术语 | English / API | 含义 |" + (" 不要写成 |" if rejects else "")
    rule = "|---|---|---|" + ("---|" if rejects else "")
    rows = []
    for t in items:
        row = f"| **{t['zh']}** | {t['en']} | {t['means']} |"
        if rejects:
            row += " " + "、".join(f"`{r}`" for r in t.get("reject", [])) + " |"
        rows.append(row)
    return fix_markdown("\n".join([head, rule, *rows]))


def build(folder: Path = FOLDER) -> object:
    """The reader's glossary page."""
    items = terms()
    intro = ("# 术语表\n\n本课程每个概念只用一个中文说法；第一次出现时旁边写着英文或 API 名。"
             "读到不熟的词，先在这里查它的意思，再用[关键词索引](关键词索引.ipynb)找到讲它的小节。")
    return generated_page([intro, table(items, rejects=False)], "tools/build_glossary.py")


def contributing_text(current: str) -> str:
    """CONTRIBUTING.md with the generated table between the markers."""
    if START not in current or END not in current:
        raise SystemExit(f"ERROR {CONTRIBUTING}: the markers {START} … {END} are missing")
    head, rest = current.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table(terms(), rejects=True)}\n{END}{tail}"


def main(argv=None) -> int:
    """Write (or --check) the page and the CONTRIBUTING table."""
    argv = list(sys.argv[1:] if argv is None else argv)
    code = page_main(__doc__, FOLDER, PAGE.name, build, "tools/build_glossary.py", argv)
    current = CONTRIBUTING.read_text(encoding="utf-8")
    wanted = contributing_text(current)
    if current != wanted:
        if "--check" in argv:
            print(f"STALE {CONTRIBUTING} (glossary table): regenerate it with `.venv/bin/python tools/build_glossary.py`",
                  file=sys.stderr)
            return 1
        write_atomic(CONTRIBUTING, wanted)
        print(f"wrote {CONTRIBUTING}", file=sys.stderr)
    return code
