"""Prove every exercise's 🧪 自检 works: ⏳ when empty, ✅ with the reference, never ✅ when wrong.

Usage: tools/check_selfcheck.py [PATH ...] [--jobs N] [--repeat N] [--only ID,ID]
For each chapter the notebook runs once as shipped in a fresh `jax-study` kernel; then, in the
same kernel, each exercise's names are removed and its reference answer (appendix) and each
wrong answer (metadata.course.wrong_answers of the 🧪 自检 cell, and rule_answers: answers that break a
限制 of the statement) are run before its self-check, and so is each right_answers entry (another correct
answer, written differently from the reference: it must pass).
Also fails when a self-check's source or output contains a line of the reference answer.
With --repeat N every answer is judged N times in a row (each run of the 🧪 自检 draws its random data anew) and an
answer whose verdict is not the same every time is named selfcheck-flaky: a right answer that fails on some draws,
or a wrong one that passes on some (a hole that shows only sometimes). --only 11.3,11.5 judges just those exercises
(the chapter still runs whole first): for repeating the few whose checks draw random data or time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from verify.cells import is_code, source_text
from verify.compare import output_text
from coursemodel.contract import parse_chapter
from verify.kernels import KERNEL_ARGUMENTS
from verify.notebook_io import load_notebook

from .structure import Problem, chapter_paths

PASS, PENDING = "✅", "⏳"


def answer_lines(source: str) -> list[str]:
    """Lines of a reference answer that would give it away (not comments, imports or trivia)."""
    lines = []
    for line in source.splitlines()[1:]:
        s = line.strip()
        if len(s) >= 10 and not s.startswith(("#", "import ", "from ")):
            lines.append(s)
    return lines


class _Session:
    """One kernel holding the chapter's state, executing probe cells on demand."""

    def __init__(self, nb, path: Path, timeout: float, client: NotebookClient | None = None) -> None:
        self.nb = nb
        self.client = client or NotebookClient(
            nb, kernel_name="jax-study", timeout=timeout, allow_errors=True, extra_arguments=KERNEL_ARGUMENTS,
            record_timing=False, shutdown_kernel="immediate", resources={"metadata": {"path": str(path.parent.resolve())}})

    def run(self, source: str) -> str:
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)  # nbclient stores the executed cell back by index
        try:
            return output_text(self.client.execute_cell(cell, len(self.nb.cells) - 1).get("outputs", []))
        finally:
            self.nb.cells.pop()

    def run_chapter(self) -> None:
        """Every code cell of the chapter, in order (the state the self-checks run in)."""
        for i, cell in enumerate(self.nb.cells):
            if is_code(cell):
                self.client.execute_cell(cell, i)

    def forget(self, ex) -> None:
        """Remove the names the exercise asks for (the state of an empty ✍️ 作答区)."""
        self.run(f"for _n in {ex.names!r}:\n    globals().pop(_n, None)")

    def judge(self, ex, answer: str) -> tuple[str, str]:
        """Forget the exercise's names, run answer, then its 🧪 自检: (what the answer printed, what the check printed)."""
        self.forget(ex)
        return self.run(answer), self.run(source_text(self.nb.cells[ex.check]))


def _exercises(nb) -> list:
    return [e for e in parse_chapter(nb).exercises.values() if None not in (e.answer, e.check, e.reference) and e.names]


def _judge(session: _Session, path: Path, seconds: dict, repeat: int = 1, only: frozenset | None = None) -> list[Problem]:
    """Every exercise of the chapter whose cells ran in session: ⏳ shipped, ✅ reference, never ✅ wrong, no leak.
    Each answer is judged repeat times; one whose verdict differs between runs is named selfcheck-flaky (and not
    under its usual rule). only: exercise ids to judge (None: all)."""
    cells = session.nb.cells
    problems: list[Problem] = []

    def add(idx, rule, msg):
        problems.append(Problem(str(path), idx, cells[idx].get("id", "") if idx is not None else "", rule, msg))

    def verdict(ex, answer, what, should_pass=True):
        """Judge answer repeat times: (passed, what answer and check printed in the first run, each run's check
        output). passed is None when the runs disagree: then it is named selfcheck-flaky, with a run that went wrong."""
        runs = [session.judge(ex, answer) for _ in range(repeat)]
        passed = [PASS in got for _, got in runs]
        same = len(set(passed)) == 1
        if not same:
            first = next((s.strip() for s in answer.splitlines() if s.strip() and not s.strip().startswith("#")), "")
            out, got = runs[passed.index(not should_pass)]
            add(ex.check, "selfcheck-flaky", f"练习 {ex.id}: {what} passed {sum(passed)} of {repeat} runs (the verdict "
                f"depends on the self-check's random draw): {first[:120]!r}; a run that "
                f"{'failed' if should_pass else 'passed'} printed: {(out + got).strip()[:200]!r}")
        return (passed[0] if same else None), runs[0][0] + runs[0][1], [got for _, got in runs]

    for ex in _exercises(session.nb):
        if only is not None and ex.id not in only:
            continue
        start = time.perf_counter()
        check_src = source_text(cells[ex.check])
        ref_src = source_text(cells[ex.reference])
        shipped = output_text(cells[ex.check].get("outputs", []))
        if PENDING not in shipped:
            add(ex.check, "selfcheck-pending", f"练习 {ex.id}: with the ✍️ 作答区 empty the self-check must show ⏳, got: {shipped.strip()[:200]!r}")
        passed, printed, outputs = verdict(ex, ref_src, "the appendix reference answer")
        if passed is False:
            add(ex.check, "selfcheck-reference", f"练习 {ex.id}: the appendix reference answer does not pass: {printed.strip()[:300]!r}")
        outputs.insert(0, shipped)
        # right answers first: a rule answer may patch JAX for the rest of the kernel (04 4.3 swaps sqrt's JVP rule)
        for n, right in enumerate(ex.right_answers, 1):
            passed, printed, _ = verdict(ex, right, f"correct answer #{n} (right_answers)")
            if passed is False:
                add(ex.check, "selfcheck-right", f"练习 {ex.id}: correct answer #{n} (right_answers) does not pass: "
                    f"{printed.strip()[:300]!r}")
        for n, wrong in enumerate(ex.wrong_answers + ex.rule_answers, 1):
            kind = "wrong_answers" if n <= len(ex.wrong_answers) else f"rule_answers #{n - len(ex.wrong_answers)}"
            passed, _, got = verdict(ex, wrong, f"wrong answer #{n} ({kind})", should_pass=False)
            outputs += got
            if passed:
                add(ex.check, "selfcheck-wrong", f"练习 {ex.id}: wrong answer #{n} passes the self-check (it must not): {wrong[:120]!r}")
        for line in answer_lines(ref_src):
            if line in check_src or any(line in o for o in outputs):
                add(ex.check, "selfcheck-leak", f"练习 {ex.id}: self-check source or output contains the reference answer line {line!r}")
        session.forget(ex)
        seconds[ex.id] = time.perf_counter() - start
    return problems


def check_notebook(path: Path, timeout: float = 300, seconds: dict | None = None, repeat: int = 1,
                   only: frozenset | None = None) -> list[Problem]:
    """All self-check problems of one chapter, in a kernel of its own. seconds, when given, gets the wall time
    of the chapter's run ("chapter") and of each exercise's probes (by exercise id). repeat: how many times each
    answer is judged (see _judge). only: the exercise ids to judge (None: all); an id the chapter lacks is an error."""
    nb = load_notebook(path)
    seconds = {} if seconds is None else seconds
    exercises = _exercises(nb)
    if only is not None and not only <= {e.id for e in exercises}:
        known = ", ".join(e.id for e in exercises) or "none"
        raise SystemExit(f"ERROR {path}: --only names {', '.join(sorted(only - {e.id for e in exercises}))}, "
                         f"not an exercise with a 🧪 自检 here (this chapter has: {known})")
    if not exercises:
        return []
    session = _Session(nb, path, timeout)
    with session.client.setup_kernel():
        start = time.perf_counter()
        session.run_chapter()
        seconds["chapter"] = time.perf_counter() - start
        return _judge(session, path, seconds, repeat, only)


def probe(client: NotebookClient, nb, path: Path) -> list[tuple[int | None, str, str]]:
    """The same judgement in the kernel the verification run left (verify's probe hook, see
    [tool.pytest.ini_options] verify_probe): the chapter does not run a second time."""
    client.allow_errors = True   # a wrong answer may raise; the self-check after it must still run
    return [(p.cell, p.rule, p.message) for p in _judge(_Session(nb, Path(path), client.timeout, client), Path(path), {})]


def try_answers(path: Path, exercise: str, answers: list[str], timeout: float = 600) -> list[tuple[bool, str]]:
    """Run the chapter once, then each answer followed by exercise's 🧪 自检: [(passed, what it printed), …].

    For a reviewer playing the adversary (tools/try_answers.py): nothing is written, the notebook is untouched.
    """
    nb = load_notebook(path)
    exercises = parse_chapter(nb).exercises
    if exercise not in exercises or exercises[exercise].check is None:
        known = ", ".join(sorted(exercises)) or "none"
        raise SystemExit(f"ERROR {path} has no exercise {exercise} with a 🧪 自检 cell (it has: {known})")
    ex = exercises[exercise]
    session = _Session(nb, path, timeout)
    results = []
    with session.client.setup_kernel():
        session.run_chapter()
        for answer in answers:
            out, got = session.judge(ex, answer)
            results.append((PASS in got, (out + got).strip()))
    return results


def main(argv=None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", type=Path)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--times", action="store_true", help="also print the seconds each chapter run and exercise took")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="judge every answer N times (new random data each time) and name any whose verdict varies")
    p.add_argument("--only", metavar="ID,ID", help="judge only these exercises (e.g. 11.3,11.5); the chapter still runs whole")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    only = frozenset(i.strip() for i in args.only.split(",") if i.strip()) if args.only is not None else None
    if only is not None and not only:
        p.error("--only needs exercise ids, e.g. --only 11.3,11.5")
    root = Path(__file__).resolve().parent.parent
    paths = chapter_paths(args.paths or [root / "content"])
    seconds = {q: {} for q in paths}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda q: check_notebook(q, args.timeout, seconds[q], args.repeat, only), paths))
    problems = [prob for r in results for prob in r]
    for prob in problems:
        print(prob)
    if args.times:
        for q, parts in seconds.items():
            if parts:
                detail = "  ".join(f"{k} {v:.0f}s" for k, v in parts.items())
                print(f"{sum(parts.values()):6.0f}s  {q.name}: {detail}", file=sys.stderr)
    print(f"{len(paths)} chapter(s) checked, {len(problems)} self-check problem(s)", file=sys.stderr)
    return 1 if problems else 0
