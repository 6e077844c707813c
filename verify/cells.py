"""How the harness reads the per-cell contract (see CONTRIBUTING.md, “单元格元数据”).

Standard Jupyter tags are reused where they exist; everything else lives under
``metadata["course"]``.
"""

from __future__ import annotations

from . import METADATA_KEY

RAISES_TAG = "raises-exception"
SKIP_TAG = "skip-execution"
LITE_TAG = "lite"
MAINTAINER_TAG = "maintainer"   # cells only maintainers need: folded away on the reading site


def tags(cell) -> list[str]:
    """The cell's tags (an empty list when it has none)."""
    return list(cell.get("metadata", {}).get("tags", []))


def course_meta(cell) -> dict:
    """The cell's ``metadata.course`` dict (empty when absent)."""
    value = cell.get("metadata", {}).get(METADATA_KEY, {})
    return value if isinstance(value, dict) else {}


def expects_error(cell) -> bool:
    """True when the cell is declared to raise (an old-way cell showing its real error)."""
    return RAISES_TAG in tags(cell)


def volatile_mode(cell) -> str | None:
    """None (compare normally), "numbers" (numbers masked) or "all" (outputs not compared)."""
    value = course_meta(cell).get("volatile")
    if value in (None, False):
        return None
    if value is True or value == "numbers":
        return "numbers"
    if value == "all":
        return "all"
    raise ValueError(
        f"metadata.course.volatile must be true, \"numbers\" or \"all\", not {value!r}"
    )


def source_text(cell) -> str:
    """Cell source as one string, whether stored as a string or a list of lines."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def is_code(cell) -> bool:
    """True for code cells with non-blank source."""
    return cell.get("cell_type") == "code" and source_text(cell).strip() != ""


def warning_declared(cell, category: str) -> bool:
    """True when `category` (e.g. "DeprecationWarning") is listed in metadata.course.expect_warnings."""
    return any(category.startswith(d) or d.startswith(category)
               for d in course_meta(cell).get("expect_warnings", []))
