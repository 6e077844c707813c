"""Compare a cell's saved outputs with its fresh outputs after normalisation.

Order of rules: texts equal after normalisation → "outputs equal"; texts equal once numbers
are masked and every number pair agrees (integers exactly, floats within rtol/atol) →
"numeric within tolerance"; otherwise → "text differs" with a unified diff.
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


def canonical(outputs, *, mask_numbers: bool = False) -> tuple[str, list[str]]:
    """One comparable text for a list of outputs, plus the normalisation rules that fired.

    stdout and stderr are each joined (their interleaving is not deterministic); rich outputs
    keep their order and are compared by their text/plain form and their MIME types;
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
            rich.append(f"[{kind} {mimes}]\n{_text(data.get('text/plain'))}")
        elif kind == "error":
            rich.append(f"[error]\n{out.get('ename')}: {out.get('evalue')}")
    parts = []
    if stdout:
        parts.append("[stdout]\n" + "".join(stdout))
    if stderr:
        parts.append("[stderr]\n" + "".join(stderr))
    parts.extend(rich)
    text, fired = normalize("\n".join(parts), mask_numbers=mask_numbers)
    return text, fired


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


def numbers_close(a: str, b: str, rtol: float, atol: float) -> bool:
    """True when a and b differ only in numbers, integers exactly equal, floats within tolerance."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        if x == y:
            continue
        is_float = any(ch in x + y for ch in ".eE")
        if not is_float:
            return False
        fx, fy = float(x), float(y)
        if not math.isclose(fx, fy, rel_tol=rtol, abs_tol=atol):
            return False
    return True


def same_outputs(saved, fresh, *, mask_numbers: bool = False, tolerance: dict | None = None) -> tuple[bool, str, list[str]]:
    """(equal, unified diff, rules that decided) for two output lists."""
    a, fired_a = canonical(saved, mask_numbers=mask_numbers)
    b, fired_b = canonical(fresh, mask_numbers=mask_numbers)
    fired = sorted(set(fired_a) | set(fired_b))
    if a == b:
        return True, "", fired
    rtol, atol = tolerance_for(a, tolerance)
    if numbers_close(a, b, rtol, atol):
        return True, "", fired + [f"numeric within tolerance (rtol={rtol:g}, atol={atol:g})"]
    diff = "\n".join(
        difflib.unified_diff(
            a.splitlines(), b.splitlines(), fromfile="saved", tofile="fresh", lineterm=""
        )
    )
    return False, diff, fired
