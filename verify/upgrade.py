"""Run the harness on another JAX release in a side environment and print the behaviour changes.

Usage: tools/upgrade_check.py --jax VERSION|latest [PATH ...] [--markdown F] [--junit F] [--json F]

The side environment lives in .upgrade-envs/jax-VERSION/ (never .venv, which stays untouched):
the project's dependencies with jax/jaxlib replaced by VERSION and the other JAX-ecosystem pins
relaxed so pip can pick releases that fit, plus its own `jax-study` kernel. Every notebook then
runs with --keep-going, so the report lists every cell whose saved output or assert changed.
Exit: 0 nothing changed, 1 behaviour changes found, 2 the environment could not be built.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINNED_BY_VERSION = ("jax", "jaxlib")
RELAXED = ("optax", "flax", "orbax-checkpoint", "diffrax", "equinox", "optimistix", "lineax")  # they follow JAX releases: let pip choose


def requirements(version: str) -> list[str]:
    """The project's dependencies and its `test` extra (the harness runs in the side environment too) with JAX
    replaced by `version` ("latest" = newest)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + project["optional-dependencies"]["test"]
    out = []
    for dep in deps:
        name = re.split(r"[=<>!~\[ ]", dep, maxsplit=1)[0].lower()
        if name in PINNED_BY_VERSION:
            out.append(name if version == "latest" else f"{name}=={version}")
        elif name in RELAXED:
            out.append(name)
        else:
            out.append(dep)
    return out


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    """Run a command, echoing it on stderr."""
    print("* " + " ".join(map(str, cmd))[:200], file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, **kw)


def build_env(env_dir: Path, version: str) -> Path:
    """Create (or reuse) the side environment; return its Python."""
    py = env_dir / "bin" / "python"
    if not py.exists():
        if run([sys.executable, "-m", "venv", str(env_dir)]).returncode:
            raise SystemExit(2)
    reqs = requirements(version)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if run(pip + (["--upgrade"] if version == "latest" else []) + reqs).returncode:
        print(f"ERROR pip could not install jax {version} with the project's dependencies "
              f"(see pip's message above). TIP try another version, or delete {env_dir}", file=sys.stderr)
        raise SystemExit(2)
    if run(pip + ["--no-deps", "-e", "."]).returncode:
        raise SystemExit(2)
    run([str(py), "-m", "ipykernel", "install", "--sys-prefix", "--name", "jax-study",
         "--display-name", "Python (JAX 学习)"], check=True, capture_output=True)
    return py


def main(argv=None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jax", required=True, help="JAX release to test, e.g. 0.11.2, or 'latest'")
    p.add_argument("paths", nargs="*", default=[str(ROOT / "content")])
    p.add_argument("--env-dir", type=Path, help="side environment folder (default .upgrade-envs/jax-VERSION)")
    p.add_argument("--markdown", type=Path, default=ROOT / "upgrade-report.md")
    p.add_argument("--junit", type=Path, default=ROOT / "upgrade-report.xml")
    p.add_argument("--json", type=Path, default=ROOT / "upgrade-report.json")
    p.add_argument("--jobs", type=int, default=None)
    args = p.parse_args(argv)
    env_dir = args.env_dir or ROOT / ".upgrade-envs" / f"jax-{args.jax}"
    if env_dir.resolve() == (ROOT / ".venv").resolve():
        print("ERROR the side environment must not be .venv", file=sys.stderr)
        return 2
    py = build_env(env_dir, args.jax)
    version = subprocess.run([str(py), "-c", "import jax; print(jax.__version__)"], capture_output=True,
                             text=True).stdout.strip()
    print(f"* side environment {env_dir} has jax {version}", file=sys.stderr)
    cmd = [str(py), str(ROOT / "tools" / "run_all.py"), *args.paths, "--no-cache", "--keep-going",
           "--markdown", str(args.markdown), "--junit", str(args.junit), "--json", str(args.json)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    proc = run(cmd)
    if args.markdown.exists():
        print(args.markdown.read_text(encoding="utf-8"))
    return 1 if proc.returncode == 1 else (0 if proc.returncode == 0 else 2)
