"""Build small fixture notebooks in code, so each test shows the cells it is about."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def code(source: str, *, tags: list[str] | None = None, course: dict | None = None):
    """A code cell with optional tags and metadata.course."""
    cell = new_code_cell(source)
    if tags:
        cell.metadata["tags"] = tags
    if course:
        cell.metadata["course"] = course
    return cell


def md(source: str):
    """A markdown cell."""
    return new_markdown_cell(source)


def write_notebook(path: Path, cells: list) -> Path:
    """Write a jax-study notebook with deterministic cell ids (cell-1, cell-2, …)."""
    nb = new_notebook(cells=cells)
    for i, cell in enumerate(nb.cells, 1):
        cell.id = f"cell-{i}"
    nb.metadata["kernelspec"] = {"name": "jax-study", "display_name": "Python (JAX 学习)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
