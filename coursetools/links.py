"""Check that every link in every notebook under content/ resolves; list the external ones.

Internal links (another notebook, `#heading` anchors, `notebook.ipynb#heading`) must point at an
existing notebook and at a heading that exists in it (JupyterLab's anchor: heading text with
spaces as '-'). External http(s) links cannot be checked here (no network): they are listed.
Usage: tools/check_links.py [--external]   exit 1 when an internal link is broken.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import unquote

from verify.cells import source_text

from .indexing import MD_LINK, ROOT, heading_anchor, headings, read_notebook


def notebook_links(path: Path):
    """(cell index, target) of every markdown link in a notebook."""
    nb = read_notebook(path)
    for i, cell in enumerate(nb.cells):
        if cell.get("cell_type") == "markdown":
            for m in MD_LINK.finditer(source_text(cell)):
                yield i, m.group(2)


def check(folder: Path) -> tuple[list[str], list[str]]:
    """(broken internal links, external links) of every notebook below folder."""
    anchors: dict[Path, set[str]] = {}

    def anchors_of(p: Path) -> set[str]:
        if p not in anchors:
            anchors[p] = {heading_anchor(t) for _, _, t in headings(read_notebook(p))}
        return anchors[p]

    broken, external = [], []
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        for cell, target in notebook_links(path):
            where = f"{path.relative_to(ROOT)}: cell {cell + 1}"
            if target.startswith(("http://", "https://")):
                external.append(f"{where}: {target}")
                continue
            if target.startswith("mailto:"):
                continue
            file_part, _, frag = target.partition("#")
            dest = (path.parent / unquote(file_part)).resolve() if file_part else path
            if not dest.exists():
                broken.append(f"{where}: link to missing file {target}")
                continue
            if frag and dest.suffix == ".ipynb" and unquote(frag) not in anchors_of(dest):
                broken.append(f"{where}: no heading with anchor #{unquote(frag)} in {dest.name}")
    return broken, external


def main(argv=None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--external", action="store_true", help="also list every external link")
    args = p.parse_args(argv)
    broken, external = check(ROOT / "content")
    for line in broken:
        print(f"BROKEN {line}")
    if args.external:
        for line in external:
            print(f"EXTERNAL {line}")
    print(f"{len(broken)} broken internal link(s), {len(external)} external link(s) not checked (no network)",
          file=sys.stderr)
    return 1 if broken else 0
