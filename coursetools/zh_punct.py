"""Give Chinese prose standard Chinese punctuation (GB/T 15834): full-width ，：；？！（）。 next to Chinese.

Usage: tools/zh_punct.py [PATH ...] [--check]
Default paths: every notebook under content/, the helper package content/jaxcourse (its comments and
Chinese strings: what it prints reaches the reader), README.md and CONTRIBUTING.md. In notebooks it
rewrites markdown cells and the comments and Chinese strings of code cells (code and outputs are left
alone); a heading that changes takes its links along (`#anchor` targets in every notebook and
in the two markdown files). Files are written atomically. --check only lists what would change
and exits 1 when anything would.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote

from verify.cells import source_text
from verify.notebook_io import dumps_notebook, load_notebook, write_atomic
from coursemodel.punctuation import fix_code, fix_markdown

from .indexing import MD_LINK, heading_anchor, headings, link_fragment

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_FILES = ("README.md", "CONTRIBUTING.md")
HELPER_PACKAGE = "content/jaxcourse"  # its messages reach the reader: comments and strings are fixed like a cell's


def targets(paths: list[Path]) -> list[Path]:
    """Notebooks and markdown files named by paths (folders searched for *.ipynb)."""
    found = []
    for p in paths:
        if p.is_dir():
            found += [f for f in sorted(p.rglob("*.ipynb")) if ".ipynb_checkpoints" not in f.parts]
            found += sorted(p.rglob("*.py")) if p.resolve() == (ROOT / HELPER_PACKAGE).resolve() else []
        elif p.exists():
            found.append(p)
        else:
            raise SystemExit(f"ERROR {p}: no such file or folder")
    return found


def fixed_notebook(nb):
    """(notebook with fixed punctuation, {old anchor: new anchor} of its changed headings)."""
    before = [t for _, _, t in headings(nb)]
    for cell in nb.cells:
        text = source_text(cell)
        if cell.get("cell_type") == "markdown":
            cell["source"] = fix_markdown(text)
        elif cell.get("cell_type") == "code":
            cell["source"] = fix_code(text)
    after = [t for _, _, t in headings(nb)]
    renamed = {heading_anchor(a): heading_anchor(b) for a, b in zip(before, after) if a != b}
    return nb, renamed


def relink(text: str, here: Path, renamed: dict[Path, dict[str, str]]) -> str:
    """text with every `file#anchor` link to a renamed heading pointing at its new anchor."""

    def repl(m: re.Match) -> str:
        label, target = m.group(1), m.group(2)
        file_part, sep, frag = target.partition("#")
        if not sep or target.startswith(("http://", "https://")):
            return m.group(0)
        dest = (here.parent / unquote(file_part)).resolve() if file_part else here.resolve()
        new = renamed.get(dest, {}).get(unquote(frag))
        if new is None:
            return m.group(0)
        return f"[{label}]({file_part}#{link_fragment(new)})"

    return MD_LINK.sub(repl, text)


def main(argv=None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", type=Path)
    p.add_argument("--check", action="store_true", help="only list what would change; exit 1 if anything would")
    args = p.parse_args(argv)
    paths = targets(args.paths or [ROOT / "content", ROOT / HELPER_PACKAGE, *(ROOT / f for f in DEFAULT_FILES)])

    texts: dict[Path, str] = {}
    renamed: dict[Path, dict[str, str]] = {}
    notebooks = {}
    for path in paths:
        if path.suffix == ".ipynb":
            nb, moved = fixed_notebook(load_notebook(path))
            notebooks[path] = nb
            if moved:
                renamed[path.resolve()] = moved
        elif path.suffix == ".py":
            texts[path] = fix_code(path.read_text(encoding="utf-8"))
        else:
            texts[path] = fix_markdown(path.read_text(encoding="utf-8"))
    for path, nb in notebooks.items():
        for cell in nb.cells:
            if cell.get("cell_type") == "markdown":
                cell["source"] = relink(source_text(cell), path, renamed)
        texts[path] = dumps_notebook(nb)
    for path in list(texts):
        if path.suffix == ".md":
            texts[path] = relink(texts[path], path, renamed)

    changed = [path for path, text in texts.items() if path.read_text(encoding="utf-8") != text]
    for path in changed:
        if args.check:
            print(f"{path}: Chinese punctuation to fix (run tools/zh_punct.py {path})")
        else:
            write_atomic(path, texts[path])
            print(f"wrote {path}", file=sys.stderr)
    if unlinked := [a for m in renamed.values() for a in m]:
        print(f"{len(unlinked)} heading(s) renamed; links to them were updated", file=sys.stderr)
    return 1 if (args.check and changed) else 0
