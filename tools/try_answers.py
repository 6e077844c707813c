#!/usr/bin/env python3
"""Try your own answers against one exercise's 🧪 自检, as an adversary would (nothing is written).

Usage: tools/try_answers.py NOTEBOOK EXERCISE ANSWERS.json
ANSWERS.json is a JSON list of source strings, each a complete answer that defines the exercise's names.
The chapter runs once; then each answer runs, followed by the self-check. Prints PASSED for every answer the
self-check accepts (for an answer that breaks a 限制, that is a bug: record it in rule_answers and fix the
check). Exit status: the number of answers that passed (0 when the check rejected them all).
The answers run one after another in the same kernel: one that changes shared state (a function's __code__,
a jax.config flag, a patched library attribute) also changes what the answers after it see. Give such an
answer a file of its own, or put it last.
A thin command: the logic is coursetools/selfcheck.py (try_answers).
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coursetools.selfcheck import try_answers  # noqa: E402


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, exercise, answers_file = Path(args[0]), args[1], Path(args[2])
    try:
        answers = json.loads(answers_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"ERROR cannot read {answers_file} as a JSON list of source strings: {exc}")
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise SystemExit(f"ERROR {answers_file} must hold a JSON list of source strings")
    results = try_answers(path, exercise, answers)
    for n, (passed, printed) in enumerate(results, 1):
        print(f"--- answer {n}: {'PASSED (✅)' if passed else 'rejected'}\n{printed[:800]}")
    return min(sum(passed for passed, _ in results), 100)


if __name__ == "__main__":
    sys.exit(main())
