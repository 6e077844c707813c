"""Command line of the harness (tools/run_all.py is a thin wrapper around main)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from .errors import VerifyError
from .isa import ISAS, host_exceeds, probe
from .kernels import ensure_kernel
from .results import NB_CACHED, NB_ERROR, NB_FAILED
from .triage import junit_xml, markdown_report, note_tally
from .runner import RunOptions, Runner, find_notebooks, json_report, rule_tally, summary_line

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MARKS = {"passed": "✔", NB_CACHED: "↺", NB_FAILED: "✘", NB_ERROR: "✘"}


def _color(text: str, code: str) -> str:
    if os.environ.get("NO_COLOR") or not sys.stderr.isatty():
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def build_parser() -> argparse.ArgumentParser:
    """Arguments of run_all.py."""
    p = argparse.ArgumentParser(
        prog="tools/run_all.py",
        description="Re-execute course notebooks on the pinned JAX and check that every saved output and assert still holds.",
    )
    p.add_argument("paths", nargs="*", type=Path, default=None, help="notebooks or folders (default: content/)")
    p.add_argument("-k", dest="keyword", help="only notebooks whose path contains KEYWORD")
    p.add_argument("--refresh", action="store_true", help="write fresh outputs back (atomically) instead of comparing")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks run at once (default: one per core)")
    p.add_argument("--timeout", type=float, default=300, help="seconds allowed per cell (default 300)")
    p.add_argument("--no-cache", action="store_true", help="run even notebooks that passed unchanged before")
    p.add_argument("--json", type=Path, help="write the full report as JSON to FILE")
    p.add_argument("--markdown", type=Path, help="write the triaged report as Markdown (CI job summary) to FILE")
    p.add_argument("--junit", type=Path, help="write the report as JUnit XML to FILE")
    p.add_argument("--keep-going", action="store_true",
                   help="run every cell even after a failure, to list every behaviour change (never writes)")
    p.add_argument("--cpu-isa", choices=ISAS, metavar="ISA",
                   help="verify as on an older CPU: kernels run with XLA_FLAGS=--xla_cpu_max_isa=ISA "
                        f"({', '.join(ISAS)}); compares with the saved outputs, never refreshes")
    p.add_argument("--skip-if-not-lower", action="store_true",
                   help="with --cpu-isa: exit 0 at once when this CPU has nothing newer than ISA (the run would repeat a plain one)")
    p.add_argument("--kernel", default="jax-study", help=argparse.SUPPRESS)
    p.add_argument("--probe", metavar="MODULE:FUNCTION",
                   help="also run this probe in each notebook's live kernel after its last cell, as pytest does "
                        "(the course: coursetools.selfcheck:probe judges every exercise's self-check)")
    p.add_argument("-v", "--verbose", action="store_true", help="also list each cell's rule")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (0 verified, 1 failed, 2 usage/environment)."""
    args = build_parser().parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.paths or [root / "content"]
    if args.jobs < 1 or args.timeout <= 0:
        print("ERROR --jobs must be ≥ 1 and --timeout > 0", file=sys.stderr)
        return EXIT_USAGE
    if args.cpu_isa and args.refresh:
        print(f"ERROR --cpu-isa {args.cpu_isa} checks the saved outputs as another CPU sees them; it never "
              "writes them (outputs are made on the plain environment)", file=sys.stderr)
        print("TIP  drop --refresh to verify under the lowered ISA, or drop --cpu-isa to refresh", file=sys.stderr)
        return EXIT_USAGE
    try:
        notebooks = find_notebooks(paths, args.keyword)
    except VerifyError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not notebooks:
        print(f"ERROR no notebooks found in {', '.join(map(str, paths))}"
              + (f" matching -k {args.keyword!r}" if args.keyword else ""), file=sys.stderr)
        print("TIP  check the path, or drop -k to run everything", file=sys.stderr)
        return EXIT_USAGE

    def progress(result):
        mark = MARKS.get(result.status, "?")
        color = "32" if result.ok else "31"
        line = f"{_color(mark, color)} {result.path}  {result.seconds:.1f} s  {result.status}"
        if result.refreshed:
            line += " (rewritten)"
        print(line, file=sys.stderr, flush=True)
        if args.verbose:
            for c in result.cells:
                print(f"    {c.label}: {c.status} — {c.rule}", file=sys.stderr)

    mode = "refresh" if args.refresh else "check"
    print(f"* {mode}: {len(notebooks)} notebook(s), {args.jobs} at a time, timeout {args.timeout:g} s per cell",
          file=sys.stderr)
    if args.cpu_isa and args.skip_if_not_lower and host_exceeds(args.cpu_isa) is False:
        print(f"* skipped: this CPU has nothing newer than {args.cpu_isa}, so XLA held to it generates the same "
              "code as a plain run (which ./dev test does)", file=sys.stderr)
        return EXIT_OK
    if args.cpu_isa:
        try:
            print(f"* {probe(args.cpu_isa)}", file=sys.stderr)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            print(f"ERROR {exc}", file=sys.stderr)
            return EXIT_USAGE
    options = RunOptions(timeout=args.timeout, jobs=args.jobs, refresh=args.refresh,
                         use_cache=not args.no_cache, kernel=args.kernel,
                         keep_going=args.keep_going, cpu_isa=args.cpu_isa, probe=args.probe)
    t0 = time.monotonic()
    try:
        runner = Runner(options, progress=progress)
        ensure_kernel(args.kernel)
        results = runner.run(notebooks)
    except VerifyError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted: kernels shut down, no notebook was half-written", file=sys.stderr)
        return 130
    seconds = time.monotonic() - t0
    failed = [r for r in results if not r.ok]
    for r in failed:
        print("\n" + r.report(), file=sys.stderr)
    if args.json:
        args.json.write_text(json_report(results, runner.env, seconds), encoding="utf-8")
    if args.markdown:
        title = f"Notebook verification on jax {runner.env.get('jax')}" + (
            f", XLA held to {args.cpu_isa}" if args.cpu_isa else "")
        args.markdown.write_text(markdown_report(results, title, runner.env), encoding="utf-8")
    if args.junit:
        args.junit.write_text(junit_xml(results), encoding="utf-8")
    for note, count in note_tally(results).items():
        print(f"note ({count} notebook(s)): {note}", file=sys.stderr)
    tally = rule_tally(results)
    if tally:
        print("rules: " + ", ".join(f"{k} {v}" for k, v in tally.items()), file=sys.stderr)
    print(f"\n{summary_line(results)} in {seconds:.1f} s", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
