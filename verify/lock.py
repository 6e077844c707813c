"""The course environment's lock: every installed package pinned, for `./dev setup` to install.

pyproject.toml pins what the course names (JAX, optax, flax …); NumPy, SciPy, matplotlib, ipykernel
and the rest come in as dependencies, and any of them can change a saved output. constraints.txt pins
every one of them at the version the outputs were made with. It is a pip constraints file, not a
requirements file: it fixes versions without installing anything, so a Linux-only entry costs nothing
on a Mac. Its header records the Python minor the outputs were made with; `./dev` prefers that one.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"
PYTHON_LINE = re.compile(r"^# python: (\d+\.\d+)\s*$", re.M)
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", re.M)
HEADER = """\
# The course environment, every package pinned (pip constraints; ./dev setup installs with -c).
# Made by `tools/lock.py` from the environment that refreshed the saved outputs; regenerate it
# with that command after changing pyproject.toml (`tools/lock.py --check` says whether it is due).
# python: {python}
"""


def canonical(name: str) -> str:
    """PEP 503 name: `Jinja2` and `jinja2`, `ml_dtypes` and `ml-dtypes` are the same package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def freeze(python: str | Path) -> tuple[str, dict[str, str]]:
    """(Python minor, {package: version}) of the environment whose interpreter is `python`,
    without the project itself (installed editable). pip is in it: its messages are saved outputs too
    (入门 01 shows pip's warning for a removed extra, spelled differently by pip 23 and 24)."""
    code = ("import json, sys, importlib.metadata as m; print(json.dumps(["
            "f'{sys.version_info[0]}.{sys.version_info[1]}', "
            "{d.metadata['Name']: d.version for d in m.distributions()}]))")
    minor, versions = json.loads(subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                                                check=True).stdout)
    own = canonical(project()["name"])
    return minor, {n: v for n, v in versions.items() if canonical(n) != own}


def render(minor: str, versions: dict[str, str]) -> str:
    """The lock file's text."""
    return HEADER.format(python=minor) + "".join(f"{n}=={versions[n]}\n" for n in sorted(versions, key=canonical))


def read(path: Path = LOCK) -> tuple[str | None, dict[str, str]]:
    """(recorded Python minor, {canonical name: version}) of a lock file."""
    text = path.read_text(encoding="utf-8")
    m = PYTHON_LINE.search(text)
    return (m.group(1) if m else None), {canonical(n): v for n, v in PIN.findall(text)}


def project() -> dict:
    """[project] of pyproject.toml."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def requirements() -> list[str]:
    """Every requirement of the course environment: the learner's dependencies and the maintainer extras."""
    meta = project()
    return list(meta["dependencies"]) + [r for reqs in meta.get("optional-dependencies", {}).values() for r in reqs]


def requirement_name(req: str) -> str:
    return canonical(re.split(r"[=<>!~\[ ;]", req, maxsplit=1)[0])


def problems(path: Path = LOCK, python: str | Path | None = None) -> list[str]:
    """Why the lock is out of date: a pyproject pin it contradicts, a dependency it lacks, and (given
    an interpreter) a package whose installed version differs. [] when it is current."""
    if not path.exists():
        return [f"{path.name} is missing: run tools/lock.py"]
    minor, pins = read(path)
    found = [] if minor else [f"{path.name} has no '# python: X.Y' line"]
    for dep in requirements():
        name = requirement_name(dep)
        exact = re.search(r"==\s*([^\s,;]+)", dep)
        if name not in pins:
            found.append(f"{name} (a dependency in pyproject.toml) is not in {path.name}")
        elif exact and pins[name] != exact.group(1):
            found.append(f"pyproject.toml pins {name}=={exact.group(1)}, {path.name} has {pins[name]}")
    if python is not None:
        _, installed = freeze(python)
        have = {canonical(n): v for n, v in installed.items()}
        for name, version in sorted(pins.items()):
            if have.get(name, version) != version:
                found.append(f"{name}: {path.name} pins {version}, the environment has {have[name]}")
        for name in sorted(set(have) - set(pins)):
            found.append(f"{name}=={have[name]} is installed but not in {path.name}")
    return found


def main(argv: list[str] | None = None) -> int:
    """tools/lock.py [--check] [--python PY]: write (or check) constraints.txt from an environment."""
    import argparse
    import sys

    from .notebook_io import write_atomic

    p = argparse.ArgumentParser(prog="tools/lock.py", description=__doc__.splitlines()[0])
    p.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"),
                   help="interpreter of the environment to lock (default .venv)")
    p.add_argument("--check", action="store_true", help="only say whether the lock is current; exit 1 if not")
    args = p.parse_args(argv)
    if not Path(args.python).exists():
        print(f"ERROR {args.python} does not exist. TIP run ./dev setup test,site first", file=sys.stderr)
        return 2
    if args.check:
        found = problems(python=args.python)
        for line in found:
            print(f"- {line}", file=sys.stderr)
        print(f"{LOCK.name}: " + (f"{len(found)} problem(s); run tools/lock.py to renew it" if found else "current"),
              file=sys.stderr)
        return 1 if found else 0
    minor, versions = freeze(args.python)
    missing = sorted({requirement_name(r) for r in requirements()} - {canonical(n) for n in versions})
    if missing:   # a learner's .venv (no maintainer extras): its lock would drop their pins
        print(f"ERROR {args.python} lacks {', '.join(missing)} of pyproject.toml, so its lock would leave them "
              "unpinned. TIP run ./dev setup test,site first", file=sys.stderr)
        return 2
    write_atomic(LOCK, render(minor, versions))
    print(f"* wrote {LOCK.name}: {len(versions)} packages, python {minor}", file=sys.stderr)
    return 0
