"""Turn a refresh of the course into a proposal a maintainer can review: a patch and a PR body.

Steps (`propose`): refresh every notebook (`run_all.py --refresh`), verify the refreshed ones
again, then write `refresh.patch` (git diff of what the refresh rewrote) and `pr-body.md` (the
changed cells classed like the check's triage, which numbers moved, and an nbdime text diff).
A refresh or re-verification that fails writes only `report.md`, puts every notebook back as it
was, and returns 1: a failing assert is news about JAX, never something to propose.
Nothing changed → no patch and no body, return 0.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import cells as C
from .compare import moved_numbers
from .errors import UsageError, VerifyError
from .execute import decide_cell
from .lock import LOCK, freeze, render
from .notebook_io import write_atomic
from .results import FAILED
from .runner import find_notebooks
from .triage import CLASSES, classify, fence, item_markdown

ROOT = Path(__file__).resolve().parent.parent

TRACEBACK_ONLY = "traceback only"  # outputs equal under the rules; the refresh only renewed a traceback
BODY_LIMIT = 60_000  # GitHub rejects PR bodies over 65,536 characters
SECTION_LINES = 40  # nbdime diff lines kept per changed part of a notebook
PATCH, BODY, REPORT = "refresh.patch", "pr-body.md", "report.md"


@dataclass
class NotebookChange:
    """What a refresh changed in one notebook."""

    path: str  # relative to the repository
    env_before: dict
    env_after: dict
    cells: list = field(default_factory=list)  # (class, CellResult, numbers moved)
    diff: str = ""  # nbdime, text only


def changed_cells(old_nb, new_nb) -> list[tuple[str, object, list]]:
    """Each code cell whose outputs the refresh replaced: (class, decision, numbers moved)."""
    found = []
    for index, (old, new) in enumerate(zip(old_nb.cells, new_nb.cells)):
        if not C.is_code(old) or old.get("outputs") == new.get("outputs"):
            continue
        res = decide_cell(old, new.get("outputs", []), refresh=False)
        res.index = index
        klass = classify(res) if res.status == FAILED else TRACEBACK_ONLY
        if res.rule == "text differs":
            res.message = "saved output → refreshed output"
        found.append((klass, res, moved_numbers(old.get("outputs", []), new.get("outputs", []))))
    order = CLASSES + [TRACEBACK_ONLY]
    return sorted(found, key=lambda item: (order.index(item[0]), item[1].index))


def nbdime_diff(old_text: str, new_path: Path) -> str:
    """nbdime's text diff of sources, outputs and metadata (images shown as a checksum)."""
    with tempfile.TemporaryDirectory(prefix="proposal-") as tmp:
        old = Path(tmp) / "saved.ipynb"
        old.write_text(old_text, encoding="utf-8")
        nbdiff = Path(sys.executable).parent / "nbdiff"
        proc = subprocess.run([str(nbdiff), "--no-color", "--no-git", "-s", "-o", "-m", str(old), str(new_path)],
                              capture_output=True, text=True)
    if proc.returncode:
        return f"(nbdime failed: {proc.stderr.strip()[:300]})"
    lines = proc.stdout.splitlines()
    body = [ln for ln in lines if not ln.startswith(("nbdiff ", "--- ", "+++ "))]
    return trim_sections("\n".join(body).strip())


def trim_sections(text: str, limit: int = SECTION_LINES) -> str:
    """Keep at most `limit` lines of each `## …` section of an nbdime diff."""
    out, section = [], []

    def flush():
        out.extend(section[:limit])
        if len(section) > limit:
            out.append(f"… ({len(section) - limit} more lines)")

    for line in text.splitlines():
        if line.startswith("## "):
            flush()
            section = []
            out.append(line)
        else:
            section.append(line)
    flush()
    return "\n".join(out)


def recorded_environment(nb) -> dict:
    """The environment a notebook's saved outputs came from (metadata.verify.environment)."""
    return nb.metadata.get("verify", {}).get("environment", {}) or {}


def describe(path: Path, rel: str, old_text: str) -> NotebookChange:
    """Classify what the refresh changed in one notebook (old_text: its text before)."""
    old_nb = nbformat.reads(old_text, as_version=4)
    new_nb = nbformat.read(path, as_version=4)
    return NotebookChange(path=rel, env_before=recorded_environment(old_nb), env_after=recorded_environment(new_nb),
                          cells=changed_cells(old_nb, new_nb), diff=nbdime_diff(old_text, path))


def pr_body(changes: list[NotebookChange], env: dict, title: str) -> str:
    """The pull request body: environment, classes, each changed cell, then the notebook diffs."""
    keys = sorted({k for c in changes for k in (*c.env_before, *c.env_after)})
    before = {k: sorted({str(c.env_before.get(k)) for c in changes}) for k in keys}
    lines = [f"# {title}", "",
             "Made by `tools/propose_refresh.py`: every notebook re-run with `--refresh`, the refreshed ones "
             "verified again, nothing hand-edited. Asserts held on this run; what follows is every saved "
             "output that changed.", "",
             "| | saved outputs | this refresh |", "|---|---|---|"]
    for k in keys:
        old, new = ", ".join(before[k]), str(env.get(k))
        lines.append(f"| {k} | `{old}` | " + (f"**`{new}`**" if [new] != before[k] else f"`{new}`") + " |")
    cells = [(c.path, *item) for c in changes for item in c.cells]
    counts = {k: sum(1 for _, klass, _, _ in cells if klass == k) for k in CLASSES + [TRACEBACK_ONLY]}
    lines += ["", f"**{len(cells)} cell(s) changed in {len(changes)} notebook(s).**", "",
              "| class | cells |", "|---|---|"] + [f"| {k} | {n} |" for k, n in counts.items() if n] + [""]
    for klass in [k for k, n in counts.items() if n]:
        lines += [f"## {klass}", ""]
        for path, k, res, moved in cells:
            if k != klass:
                continue
            extra = ("numbers moved: " + ", ".join(f"`{a}` → `{b}`" for a, b in moved[:12])
                     + (f" … ({len(moved) - 12} more)" if len(moved) > 12 else "")) if moved else ""
            lines.append(item_markdown(path, res, extra))
        lines.append("")
    lines += ["## Review", "",
              "- *numeric beyond tolerance*: floats moved more than the compare tolerates; check the chapter's "
              "text still describes them.",
              "- *repr/text change*, *new warning*: JAX or a dependency behaves or prints differently; write it up "
              "in the chapter's 本章更新说明 before merging.",
              "- *environment mismatch* alone (no cell listed): only the recorded versions changed.", "",
              "## Notebook diff (nbdime, text only)", ""]
    head = "\n".join(lines)
    diffs = []
    for c in changes:
        diffs.append(f"<details><summary><code>{c.path}</code></summary>\n" + fence(c.diff, limit=20_000)
                     + "\n</details>\n")
    body = head + "\n" + "\n".join(diffs)
    if len(body) > BODY_LIMIT:
        body = body[:BODY_LIMIT - 200].rsplit("\n", 1)[0] + (
            "\n\n… cut to fit a pull request body: the workflow's `refresh-proposal` artifact holds the whole "
            "report and patch.\n")
    return body


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run git in repo with unquoted (UTF-8) paths; return stdout."""
    proc = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=repo, capture_output=True, text=True)
    if check and proc.returncode:
        raise UsageError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout


def run_all(python: str, args: list[str]) -> int:
    """Run tools/run_all.py with the given interpreter; its progress goes to our stderr."""
    script = Path(__file__).resolve().parent.parent / "tools" / "run_all.py"
    cmd = [python, str(script), *args]
    print("* " + " ".join(cmd)[:300], file=sys.stderr, flush=True)
    return subprocess.run(cmd).returncode


def propose(repo: Path, notebooks: list[Path], out: Path, *, python: str = sys.executable,
            jobs: int | None = None, title: str = "Refresh saved outputs", pins: dict | None = None) -> int:
    """Refresh, verify, and write the proposal into `out` (see the module docstring); returns the exit status.

    pins: package → version to write into pyproject.toml (a refresh on another JAX proposes its pins too,
    and constraints.txt frozen from `python`'s environment).
    """
    repo, out = repo.resolve(), out.resolve()
    notebooks = [p.resolve() for p in notebooks]
    outside = [str(p) for p in notebooks if not p.is_relative_to(repo)]
    if outside:
        raise UsageError(f"not inside the repository {repo}: {', '.join(outside)}. "
                         "TIP  a proposal is a patch of that repository: refresh its own notebooks.")
    rels = [str(p.relative_to(repo)) for p in notebooks]
    dirty = git(repo, "status", "--porcelain", "--", *rels).strip()
    if dirty:
        raise UsageError(f"uncommitted changes in the notebooks to refresh:\n{dirty}\n"
                         "TIP  commit or stash them first: the patch must hold only what the refresh changed.")
    out.mkdir(parents=True, exist_ok=True)
    for name in (PATCH, BODY, REPORT, "refresh.json", "verify.json"):
        (out / name).unlink(missing_ok=True)
    before = {p: p.read_text(encoding="utf-8") for p in notebooks}
    common = ["--no-cache"] + (["--jobs", str(jobs)] if jobs else [])

    def give_up(status: int, what: str) -> int:
        for p, text in before.items():
            if p.read_text(encoding="utf-8") != text:
                write_atomic(p, text)
        report = out / REPORT
        note = f"**{what}** Nothing is proposed; every notebook was put back as it was.\n\n"
        report.write_text(note + (report.read_text(encoding="utf-8") if report.exists() else ""), encoding="utf-8")
        print(f"ERROR {what} See {report}.", file=sys.stderr)
        return status

    rc = run_all(python, [*map(str, notebooks), "--refresh", *common, "--json", str(out / "refresh.json"),
                          "--markdown", str(out / REPORT)])
    if rc:
        return give_up(1 if rc == 1 else 2, "The refresh failed: an assert or a cell broke (classified below).")
    changed = [p for p in notebooks if p.read_text(encoding="utf-8") != before[p]]
    if not changed:
        (out / REPORT).write_text("No saved output changed: nothing to propose.\n", encoding="utf-8")
        print("* no saved output changed: no patch, no pull request", file=sys.stderr)
        return 0
    rc = run_all(python, [*map(str, changed), *common, "--json", str(out / "verify.json"),
                          "--markdown", str(out / REPORT)])
    if rc:
        return give_up(1 if rc == 1 else 2, "The refreshed notebooks did not verify again: some output "
                                            "is not reproducible (classified below).")
    env = json.loads((out / "refresh.json").read_text(encoding="utf-8"))["environment"]
    changes = [describe(p, str(p.relative_to(repo)), before[p]) for p in changed]
    paths = [c.path for c in changes]
    if pins:
        pyproject = repo / "pyproject.toml"
        write_atomic(pyproject, repin(pyproject.read_text(encoding="utf-8"), pins))
        write_atomic(repo / LOCK.name, render(*freeze(python)))   # the side environment, every package
        paths += ["pyproject.toml", LOCK.name]
    (out / PATCH).write_text(git(repo, "diff", "--binary", "--", *paths), encoding="utf-8")
    (out / BODY).write_text(pr_body(changes, env, title), encoding="utf-8")
    summary = "\n".join(f"- `{c.path}`: {len(c.cells)} cell(s)" for c in changes)
    (out / REPORT).write_text(f"Refreshed outputs changed in {len(changes)} notebook(s); every one verified "
                              f"again.\n\n{summary}\n", encoding="utf-8")
    print(f"* {len(changes)} notebook(s) changed: {out / PATCH}, {out / BODY}", file=sys.stderr)
    return 0


PIN = re.compile(r'"(?P<name>[A-Za-z0-9_.-]+)==(?P<version>[^"]+)"')


def repin(pyproject_text: str, versions: dict[str, str]) -> str:
    """pyproject text with each `"name==x"` pin of a package in versions set to its new version."""
    def sub(m):
        new = versions.get(m.group("name").lower())
        return f'"{m.group("name")}=={new}"' if new else m.group(0)
    return PIN.sub(sub, pyproject_text)


CLI_DOC = """Refresh every notebook, verify it again, and write a patch plus a pull-request body for review.

Usage: tools/propose_refresh.py [PATH ...] [--jax pinned|latest|VERSION] [--out DIR] [--jobs N]

Writes into --out (default refresh-proposal/): report.md always; refresh.patch and pr-body.md
only when some saved output changed. The refreshed notebooks stay in the work tree (review them
with `git diff`). --jax other than `pinned` refreshes in a side environment (as
tools/upgrade_check.py builds it) and proposes that environment's pins in pyproject.toml too.
Exit: 0 proposal written or nothing changed, 1 an assert or a cell failed (nothing proposed,
notebooks put back), 2 usage or environment error.
"""

PINNED_WITH_JAX = ("jax", "jaxlib", "optax", "flax", "orbax-checkpoint", "diffrax", "equinox", "optimistix", "lineax")


def side_environment(version: str) -> tuple[str, dict]:
    """Python of a side environment with JAX `version`, and the versions it resolved."""
    from . import upgrade

    py = upgrade.build_env(ROOT / ".upgrade-envs" / f"jax-{version}", version)
    code = ("import json, importlib.metadata as m; "
            f"print(json.dumps({{n: m.version(n) for n in {PINNED_WITH_JAX!r}}}))")
    versions = json.loads(subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True).stdout)
    return str(py), versions


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="tools/propose_refresh.py", description=CLI_DOC.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=CLI_DOC)
    p.add_argument("paths", nargs="*", type=Path, help="notebooks or folders (default: content/)")
    p.add_argument("--jax", default="pinned", help="pinned (default), latest, or a release such as 0.12.1")
    p.add_argument("--out", type=Path, default=ROOT / "refresh-proposal", help="where the files go")
    p.add_argument("--jobs", type=int, help="notebooks run at once (default: one per core)")
    p.add_argument("--repo", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        notebooks = find_notebooks(args.paths or [args.repo / "content"])
        if not notebooks:
            print("ERROR no notebooks found. TIP check the paths", file=sys.stderr)
            return 2
        python, pins, title = sys.executable, None, "Refresh saved outputs on the pinned JAX"
        if args.jax != "pinned":
            python, pins = side_environment(args.jax)
            title = f"Refresh saved outputs on jax {pins['jax']}"
        return propose(args.repo, notebooks, args.out, python=python, jobs=args.jobs, title=title, pins=pins)
    except VerifyError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # upgrade.build_env could not build the side environment
        return int(exc.code or 2)
