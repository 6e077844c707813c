"""Prove that `lite` cells run without JAX (and without NumPy), as in the offline reading site.

The lite cells of a notebook run in order, sharing one namespace, in a fresh interpreter whose
import system refuses jax, jaxlib and numpy. What each cell prints (and the value of its last
expression, as a notebook shows it) is captured, so the harness can compare it with the saved outputs:
a change in the pure-Python model that alters a lite cell's output fails without a browser.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .cells import LITE_TAG, is_code, source_text, tags

BLOCKED = ("jax", "jaxlib", "numpy")

_RUNNER = r'''
import ast, contextlib, importlib.abc, io, json, sys, traceback
BLOCKED = %r
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: lite cells must run without it)")
        return None
sys.meta_path.insert(0, Blocker())
ns = {"__name__": "__main__"}
results = []
def run(source, name):
    """exec the cell; like a notebook, the value of a last bare expression is shown (its repr)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), ns)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), name, "eval"), ns)
        return None if value is None or source.rstrip().endswith(";") else repr(value)
for index, source in json.load(sys.stdin):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            shown = run(source, f"<lite cell {index + 1}>")
        results.append([index, None, out.getvalue(), shown])
    except BaseException as exc:
        results.append([index, f"{type(exc).__name__}: {exc}", out.getvalue(), None])
sys.__stdout__.write("\n@@LITE@@" + json.dumps(results))
''' % (BLOCKED,)


def lite_cells(nb) -> list[tuple[int, str]]:
    """(index, source) of the notebook's lite cells, in order."""
    return [(i, source_text(c)) for i, c in enumerate(nb.cells) if is_code(c) and LITE_TAG in tags(c)]


def run_lite_cells(nb, path: Path, timeout: float = 120) -> dict[int, str]:
    """Errors by cell index for lite cells that fail without JAX (empty dict: all ran)."""
    return {index: err for index, (err, _) in lite_outputs(nb, path, timeout).items() if err}


def lite_outputs(nb, path: Path, timeout: float = 120) -> dict[int, tuple[str | None, list]]:
    """For each lite cell: (error or None, the outputs it produced, as nbformat output dicts)."""
    cells = lite_cells(nb)
    if not cells:
        return {}
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(cells), capture_output=True,
                          text=True, timeout=timeout, cwd=Path(path).parent)
    _, sep, payload = proc.stdout.rpartition("@@LITE@@")
    if not sep:
        return {cells[0][0]: (f"lite interpreter crashed: {proc.stderr.strip()[-500:]}", [])}
    found = {}
    for index, err, printed, shown in json.loads(payload):
        outputs = [{"output_type": "stream", "name": "stdout", "text": printed}] if printed else []
        if shown is not None:
            outputs.append({"output_type": "execute_result", "data": {"text/plain": shown}})
        found[index] = (err, outputs)
    return found


def comparable(saved_outputs) -> list:
    """The part of a cell's saved outputs a plain interpreter can reproduce: stdout and text/plain results."""
    kept = []
    for out in saved_outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            kept.append(out)
        elif out.get("output_type") == "execute_result" and "text/plain" in out.get("data", {}):
            kept.append({"output_type": "execute_result", "data": {"text/plain": out["data"]["text/plain"]}})
    return kept
