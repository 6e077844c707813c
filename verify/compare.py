"""Compare a cell's saved outputs with its fresh outputs after normalisation."""

from __future__ import annotations

import difflib

from .normalize import normalize


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


def error_name(outputs) -> str | None:
    """The exception type shown in the outputs, or None when the cell did not raise."""
    for out in outputs:
        if out.get("output_type") == "error":
            return out.get("ename")
    return None


def same_outputs(saved, fresh, *, mask_numbers: bool = False) -> tuple[bool, str, list[str]]:
    """(equal, unified diff, normalisation rules that fired) for two output lists."""
    a, fired_a = canonical(saved, mask_numbers=mask_numbers)
    b, fired_b = canonical(fresh, mask_numbers=mask_numbers)
    fired = sorted(set(fired_a) | set(fired_b))
    if a == b:
        return True, "", fired
    diff = "\n".join(
        difflib.unified_diff(
            a.splitlines(), b.splitlines(), fromfile="saved", tofile="fresh", lineterm=""
        )
    )
    return False, diff, fired
