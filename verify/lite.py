"""Prove that `lite` cells run without JAX (and without NumPy), as in the offline reading site.

The lite cells of a notebook run in order, sharing one namespace, in a fresh interpreter whose
import system refuses jax, jaxlib and numpy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .cells import LITE_TAG, is_code, source_text, tags

BLOCKED = ("jax", "jaxlib", "numpy")

_RUNNER = r'''
import importlib.abc, json, sys, traceback
BLOCKED = %r
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: lite cells must run without it)")
        return None
sys.meta_path.insert(0, Blocker())
ns = {"__name__": "__main__"}
results = []
for index, source in json.load(sys.stdin):
    try:
        exec(compile(source, f"<lite cell {index + 1}>", "exec"), ns)
        results.append([index, None])
    except BaseException as exc:
        results.append([index, f"{type(exc).__name__}: {exc}"])
sys.__stdout__.write("\n@@LITE@@" + json.dumps(results))
''' % (BLOCKED,)


def lite_cells(nb) -> list[tuple[int, str]]:
    """(index, source) of the notebook's lite cells, in order."""
    return [(i, source_text(c)) for i, c in enumerate(nb.cells) if is_code(c) and LITE_TAG in tags(c)]


def run_lite_cells(nb, path: Path, timeout: float = 120) -> dict[int, str]:
    """Errors by cell index for lite cells that fail without JAX (empty dict: all ran)."""
    cells = lite_cells(nb)
    if not cells:
        return {}
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(cells), capture_output=True,
                          text=True, timeout=timeout, cwd=Path(path).parent)
    _, sep, payload = proc.stdout.rpartition("@@LITE@@")
    if not sep:
        return {cells[0][0]: f"lite interpreter crashed: {proc.stderr.strip()[-500:]}"}
    return {index: err for index, err in json.loads(payload) if err}
