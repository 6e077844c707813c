"""Compare a cell's saved outputs with its fresh outputs after normalisation.

Order of rules: texts equal after normalisation → "outputs equal"; the same words and
punctuation in the same order and every number pair agrees (integers exactly, floats within
rtol/atol) → "numeric within tolerance"; the same, except for whitespace that touches a number,
when at least one float moved → "numeric within tolerance, NumPy column alignment ignored";
otherwise → "text differs" with a unified diff.

Why the alignment rule: another CPU may print `1.0097842` where the saved output has
`1.0097841`, or `0.4975592` for `0.49755916`; NumPy then pads the array's columns to a new width,
so the spaces (and, for long rows, the line breaks) around the numbers change with them. Only
whitespace next to a number may differ, and only when a float really moved: a changed word,
integer, shape or dtype, or a float beyond tolerance still fails.
"""

from __future__ import annotations

import difflib
import math
import re

from .normalize import NUMBER, normalize

# (marker in the output text, rtol, atol): the first marker found picks the tolerance.
DTYPE_TOLERANCE = [
    ("float64", 1e-12, 1e-14),
    ("bfloat16", 1e-2, 1e-3),
    ("float16", 1e-3, 1e-4),
]
DEFAULT_TOLERANCE = (1e-5, 1e-7)  # float32, JAX's default dtype
WARNING_LINE = re.compile(r"\b(\w+Warning): (.*)")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _display_size(out) -> str:
    """' 472x264' when an image output declares its display size (retina PNGs do), else ''."""
    for mime, meta in sorted(out.get("metadata", {}).items()):
        if mime.startswith("image/") and isinstance(meta, dict) and "width" in meta:
            return f" {mime}@{meta['width']}x{meta.get('height', '?')}"
    return ""


def canonical(outputs) -> tuple[str, list[str]]:
    """One comparable text for a list of outputs, plus the normalisation rules that fired.

    stdout and stderr are each joined (their interleaving is not deterministic); rich outputs
    keep their order and are compared by their text/plain form, their MIME types and the display
    size an image declares (pixels differ between machines; the size a reader sees does not);
    errors by exception type and message (tracebacks hold paths and line numbers).
    """
    stdout, stderr, rich = [], [], []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            (stdout if out.get("name") == "stdout" else stderr).append(_text(out.get("text")))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            mimes = ",".join(sorted(data))
            rich.append(f"[{kind} {mimes}{_display_size(out)}]\n{_text(data.get('text/plain'))}")
        elif kind == "error":
            rich.append(f"[error]\n{out.get('ename')}: {out.get('evalue')}")
    parts = []
    if stdout:
        parts.append("[stdout]\n" + "".join(stdout))
    if stderr:
        parts.append("[stderr]\n" + "".join(stderr))
    parts.extend(rich)
    return normalize("\n".join(parts))


def output_text(outputs, *, errors: bool = True) -> str:
    """What a reader sees as text: streams, text/plain results and (optionally) `Type: message` of errors."""
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(_text(out.get("text")))
        elif kind == "error" and errors:
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        elif "text/plain" in out.get("data", {}):
            parts.append(_text(out["data"]["text/plain"]))
    return "".join(parts)


def error_name(outputs) -> str | None:
    """The exception type shown in the outputs, or None when the cell did not raise."""
    for out in outputs:
        if out.get("output_type") == "error":
            return out.get("ename")
    return None


def warnings_in(outputs) -> set[str]:
    """'Category: message' of every warning printed on stderr."""
    found = set()
    for out in outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            for m in WARNING_LINE.finditer(_text(out.get("text"))):
                found.add(f"{m.group(1)}: {m.group(2).strip()}")
    return found


def tolerance_for(text: str, override: dict | None = None) -> tuple[float, float]:
    """(rtol, atol) for numbers in text: by dtype marker, then the cell's own override."""
    rtol, atol = DEFAULT_TOLERANCE
    for marker, r, a in DTYPE_TOLERANCE:
        if marker in text:
            rtol, atol = r, a
            break
    if override:
        rtol, atol = float(override.get("rtol", rtol)), float(override.get("atol", atol))
    return rtol, atol


_SPLIT = re.compile(f"({NUMBER.pattern})")  # re.split keeps the numbers: [text, number, text, …, text]
ALIGNMENT = "NumPy column alignment ignored"


def is_float(token: str) -> bool:
    """True for a number token written as a float (has a point or an exponent)."""
    return any(ch in token for ch in ".eE")


def within(rtol: float, atol: float):
    """Number-pair rule of the tolerance mode: integers exactly equal, floats within rtol/atol.

    Both must be floats: `[0 1 2]` → `[0. 1. 2.]` or `(3, 4)` → `(3., 4.)` is a dtype change, which is
    exactly what the course exists to catch.
    """
    def close(x: str, y: str) -> bool:
        return is_float(x) and is_float(y) and math.isclose(float(x), float(y), rel_tol=rtol, abs_tol=atol)
    return close


def any_numbers(x: str, y: str) -> bool:
    """Number-pair rule of volatile cells: every number may change."""
    return True


def match_numbers(a: str, b: str, close) -> str | None:
    """How a and b agree when only numbers differ: "numbers" or ALIGNMENT; None when they don't.

    The words and punctuation between numbers must be identical; a differing number pair must
    pass `close`. Whitespace that touches a number may differ only when some number moved.
    """
    pa, pb = _SPLIT.split(a), _SPLIT.split(b)
    if len(pa) != len(pb):
        return None
    moved = False
    for x, y in zip(pa[1::2], pb[1::2]):
        if x != y:
            if not close(x, y):
                return None
            moved = True
    texts_a, texts_b = pa[0::2], pb[0::2]
    if texts_a == texts_b:
        return "numbers"
    if not moved:
        return None
    last = len(texts_a) - 1

    def inner(text: str, i: int) -> str:  # drop the whitespace that touches a number
        text = text.lstrip() if i > 0 else text
        return text.rstrip() if i < last else text

    same = all(inner(x, i) == inner(y, i) for i, (x, y) in enumerate(zip(texts_a, texts_b)))
    return ALIGNMENT if same else None


def numbers_close(a: str, b: str, rtol: float, atol: float) -> bool:
    """True when a and b differ only in numbers (and the alignment around them), within tolerance."""
    return match_numbers(a, b, within(rtol, atol)) is not None


def same_outputs(saved, fresh, *, mask_numbers: bool = False, tolerance: dict | None = None) -> tuple[bool, str, list[str]]:
    """(equal, unified diff, rules that decided) for two output lists.

    mask_numbers (volatile cells): every number may change, and the alignment around it.
    """
    a, fired_a = canonical(saved)
    b, fired_b = canonical(fresh)
    fired = sorted(set(fired_a) | set(fired_b))
    if mask_numbers and NUMBER.search(a + b):
        fired.append("volatile numbers")
    if a == b:
        return True, "", fired
    if mask_numbers:
        how = match_numbers(a, b, any_numbers)
        if how is not None:
            return True, "", fired + ([ALIGNMENT] if how == ALIGNMENT else [])
    else:
        rtol, atol = tolerance_for(a, tolerance)
        how = match_numbers(a, b, within(rtol, atol))
        if how is not None:
            rule = f"numeric within tolerance (rtol={rtol:g}, atol={atol:g})"
            return True, "", fired + [rule + (f", {ALIGNMENT}" if how == ALIGNMENT else "")]
    diff = "\n".join(
        difflib.unified_diff(
            a.splitlines(), b.splitlines(), fromfile="saved", tofile="fresh", lineterm=""
        )
    )
    return False, diff, fired


def moved_numbers(saved, fresh) -> list[tuple[str, str]]:
    """(saved, fresh) of every number that differs, when the outputs differ only in numbers."""
    pa, pb = _SPLIT.split(canonical(saved)[0]), _SPLIT.split(canonical(fresh)[0])
    if len(pa) != len(pb):
        return []
    return [(x, y) for x, y in zip(pa[1::2], pb[1::2]) if x != y]
