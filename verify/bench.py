"""Benchmark the harness against sequential `jupyter nbconvert --execute`.

By default the benchmark set is the whole course (every notebook under content/, both parts: real
notebooks that spend their time in JAX); `--fixtures` builds N synthetic notebooks instead
(a compile-heavy cell, a 200-step training loop, a batched Hessian). Then it times, on the same machine:
  1. sequential `jupyter nbconvert --to notebook --execute` of each (the baseline),
  2. `tools/run_all.py --no-cache` (the harness's full check, parallel),
  3. `tools/run_all.py` again (every notebook cached).
Prints both ratios, and the lower bound max(longest notebook, total ÷ cores) the harness's
longest-first order aims at. Targets: harness ≤ 0.55 × baseline, cached ≤ 0.1 × full.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from .runner import find_notebooks

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

CELLS = [
    "import jax, jax.numpy as jnp",
    # many distinct small programs: compile time dominates, as in the chapters
    "fs = [jax.jit(lambda x, k=k: jnp.tanh(x @ x.T * k).sum()) for k in range({compiles})]\n"
    "vals = [float(f(jnp.ones((64 + k, 64)))) for k, f in enumerate(fs)]\nprint(len(vals))",
    "g = jax.jit(jax.grad(lambda w, x: jnp.mean((jnp.tanh(x @ w)) ** 2)))\n"
    "w = jnp.ones((256, 256)) / 256\nx = jnp.ones((512, 256))\n"
    "for _ in range({steps}):\n    w = w - 0.1 * g(w, x)\nprint(w.shape)",
    "h = jax.jit(jax.vmap(jax.hessian(lambda v: jnp.sum(jnp.sin(v) ** 3))))\n"
    "print(h(jnp.ones((8, 16))).shape)",
]


def make_notebooks(folder: Path, count: int, compiles: int, steps: int) -> list[Path]:
    """Write `count` benchmark notebooks for the jax-study kernel."""
    paths = []
    for i in range(count):
        nb = new_notebook(cells=[new_code_cell(c.format(compiles=compiles + i, steps=steps)) for c in CELLS])
        nb.metadata["kernelspec"] = {"name": "jax-study", "display_name": "Python (JAX 学习)", "language": "python"}
        path = folder / f"bench_{i}.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths


def timed(cmd: list[str]) -> float:
    """Wall seconds of a command that must succeed."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"ERROR benchmark command failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def main(argv=None) -> int:
    """Run the benchmark and print the ratios."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fixtures", action="store_true", help="use synthetic notebooks instead of the chapters")
    p.add_argument("--notebooks", type=int, default=4, help="with --fixtures: how many")
    p.add_argument("--compiles", type=int, default=40, help="distinct jitted functions per notebook")
    p.add_argument("--steps", type=int, default=200, help="training steps per notebook")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        folder = Path(tmp)
        if args.fixtures:
            paths = make_notebooks(folder, args.notebooks, args.compiles, args.steps)
            print(f"* {len(paths)} notebooks in {folder}; saving outputs once (not timed)", file=sys.stderr)
            timed([PY, str(ROOT / "tools" / "run_all.py"), str(folder), "--refresh", "--no-cache"])
        else:
            paths = find_notebooks([ROOT / "content"])
            print(f"* {len(paths)} course notebooks", file=sys.stderr)
        run_all = [PY, str(ROOT / "tools" / "run_all.py"), *map(str, paths)]
        print("* baseline: sequential jupyter nbconvert --execute", file=sys.stderr)
        out = folder / "nbconvert-out"
        each = [timed([PY, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                       "--ExecutePreprocessor.kernel_name=jax-study", "--output-dir", str(out), str(p)])
                for p in paths]
        baseline = sum(each)
        print("* harness: tools/run_all.py --no-cache", file=sys.stderr)
        full = timed(run_all + ["--no-cache"])
        print("* harness, cached: tools/run_all.py", file=sys.stderr)
        cached = timed(run_all)
    cores = os.cpu_count() or 1
    bound = max(max(each), baseline / cores)
    print(f"baseline (sequential nbconvert): {baseline:.1f} s  ({len(paths)} notebooks, longest {max(each):.1f} s)")
    print(f"harness full run:                {full:.1f} s   ratio {full / baseline:.2f} (target ≤ 0.55); "
          f"bound max(longest, total ÷ {cores} cores) = {bound:.1f} s, ratio to it {full / bound:.2f}")
    print(f"harness cached re-run:           {cached:.2f} s  ratio {cached / full:.3f} (target ≤ 0.10)")
    return 0 if full / baseline <= 0.55 and cached / full <= 0.10 else 1
