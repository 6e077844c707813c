"""Run many notebooks in parallel worker processes, with caching, progress and a summary."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .cache import Cache, cache_key, environment, helper_digest, machine_identity, probe_digest
from .errors import UsageError
from .isa import flags_with_isa
from .results import NB_CACHED, NB_ERROR, NB_FAILED, NotebookResult
from .triage import note_tally


def find_notebooks(paths: list[Path], keyword: str | None = None) -> list[Path]:
    """Notebooks named by paths (files, or folders searched recursively), filtered by keyword."""
    found: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found.extend(
                f for f in sorted(p.rglob("*.ipynb"))
                if not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        elif p.is_file() and p.suffix == ".ipynb":
            found.append(p)
        elif p.exists():
            raise UsageError(f"{p}: not a notebook (.ipynb) or a folder.")
        else:
            raise UsageError(f"{p}: no such file or folder.")
    if keyword:
        found = [f for f in found if keyword.lower() in str(f).lower()]
    return list(dict.fromkeys(found))


@dataclass
class RunOptions:
    """Settings of one harness run."""

    timeout: float = 300
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    refresh: bool = False
    use_cache: bool = True
    kernel: str = "jax-study"
    keep_going: bool = False
    cpu_isa: str | None = None  # run kernels with XLA_FLAGS=--xla_cpu_max_isa=ISA (verify/isa.py)
    probe: str | None = None    # module:function judged in each notebook's live kernel (execute.load_probe)


class Runner:
    """Executes notebooks through `python -m verify.worker`, a few at a time."""

    def __init__(self, options: RunOptions, *, progress=None, cache: Cache | None = None) -> None:
        self.options = options
        self.progress = progress or (lambda result: None)
        self.cache = cache or Cache()
        self.env = environment()
        self.env["xla_flags"] = self.worker_env().get("XLA_FLAGS", "")  # what the kernels run with
        self.helpers = helper_digest()
        self.machine = machine_identity()
        self._procs: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._stopping = False

    def _key(self, path: Path) -> str:
        opts = {"kernel": self.options.kernel, "keep_going": self.options.keep_going,  # the ISA is in env's xla_flags
                "machine": self.machine}
        if self.options.probe:   # a verdict with the probe covers the probe's code too
            opts["probe"] = [self.options.probe, probe_digest(self.options.probe)]
        return cache_key(path, helpers=self.helpers, env=self.env, options=opts)

    def run_one(self, path: Path) -> NotebookResult:
        """Run (or skip, on a cache hit) one notebook."""
        t0 = time.monotonic()
        try:
            key = self._key(path)
        except OSError as exc:
            return NotebookResult(path=str(path), status=NB_ERROR, message=f"cannot read: {exc}")
        if self.options.use_cache and self.cache.hit(path, key):
            result = NotebookResult(path=str(path), status=NB_CACHED, message="unchanged since last passing run",
                                    cache_key=key, notes=self.cache.notes(path, key))
        else:
            result = self._spawn(path)
            result.cache_key = key
            if result.ok:
                # a refresh that rewrote the file changes the key: store the new one
                self.cache.store(path, self._key(path) if result.refreshed else key, result.seconds, result.notes)
        result.seconds = round(time.monotonic() - t0, 3)
        self.progress(result)
        return result

    def _spawn(self, path: Path) -> NotebookResult:
        with tempfile.TemporaryDirectory(prefix="verify-") as tmp:
            out = Path(tmp) / "result.json"
            cmd = [sys.executable, "-m", "verify.worker", str(path), "--result", str(out),
                   "--timeout", str(self.options.timeout), "--kernel", self.options.kernel]
            if self.options.refresh:
                cmd.append("--refresh")
            if self.options.keep_going:
                cmd.append("--keep-going")
            if self.options.probe:
                cmd += ["--probe", self.options.probe]
            with self._lock:
                if self._stopping:
                    return NotebookResult(path=str(path), status=NB_ERROR, message="interrupted before start")
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True, cwd=Path(__file__).resolve().parent.parent,
                                        env=self.worker_env())
                self._procs.add(proc)
            try:
                _, err = proc.communicate()
            finally:
                with self._lock:
                    self._procs.discard(proc)
            if out.exists():
                return NotebookResult.from_dict(json.loads(out.read_text()))
            tail = "\n".join(err.strip().splitlines()[-15:])
            msg = "interrupted" if self._stopping else f"worker exited with code {proc.returncode} and no result"
            return NotebookResult(path=str(path), status=NB_ERROR, message=msg + (f":\n{tail}" if tail else ""))

    def worker_env(self) -> dict[str, str]:
        """The environment of workers and so of their kernels (and the kernels' own subprocesses)."""
        env = dict(os.environ)
        if self.options.cpu_isa:
            env["XLA_FLAGS"] = flags_with_isa(env.get("XLA_FLAGS", ""), self.options.cpu_isa)
        return env

    def stop(self) -> None:
        """Stop every running worker; each shuts its kernel down and writes nothing."""
        with self._lock:
            self._stopping = True
            procs = list(self._procs)
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 20
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

    def expected_seconds(self, path: Path) -> float:
        return expected_seconds(path, self.cache)

    def run(self, paths: list[Path]) -> list[NotebookResult]:
        """Run every notebook, longest first (so the wall time stays near max(longest, total ÷ jobs));
        results in the order given. Ctrl-C stops all workers cleanly."""
        pool = ThreadPoolExecutor(max_workers=max(1, self.options.jobs))
        order = sorted(range(len(paths)), key=lambda i: -self.expected_seconds(paths[i]))
        submitted = {i: pool.submit(self.run_one, paths[i]) for i in order}
        futures = [submitted[i] for i in range(len(paths))]
        try:
            results = [f.result() for f in futures]
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            self.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return results


def expected_seconds(path: Path, cache: Cache) -> float:
    """How long a notebook is expected to take: its last run here, else the duration its last refresh
    recorded in the notebook (metadata.verify.seconds), else 0."""
    seconds = cache.seconds(path)
    if seconds is None:
        seconds = recorded_seconds(path)
    return seconds or 0.0


def shard(paths: list[Path], index: int, count: int, seconds) -> list[Path]:
    """The notebooks of shard `index` (1-based) of `count`: dealt longest first, each to the shard with the least
    expected time so far, so the shards take about as long as each other (CI runs them on separate machines).
    Every notebook is in exactly one shard; the deal depends only on the paths and `seconds(path)`."""
    if not 1 <= index <= count:
        raise UsageError(f"shard {index}/{count} does not exist: use K/N with 1 ≤ K ≤ N, e.g. 2/3")
    load = [0.0] * count
    mine = []
    for path in sorted(paths, key=lambda p: (-seconds(p), str(p))):
        k = load.index(min(load))
        load[k] += seconds(path) or 1.0   # unknown durations still spread out
        if k == index - 1:
            mine.append(path)
    return mine


def recorded_seconds(path: Path) -> float | None:
    """metadata.verify.seconds of a notebook (written by the refresh), read without parsing every cell."""
    try:
        with open(path, encoding="utf-8") as fh:
            meta = json.load(fh).get("metadata", {})
        return float(meta["verify"]["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def summary_line(results: list[NotebookResult]) -> str:
    """'N passed, N failed' plus cached/errors counts."""
    passed = sum(r.status == "passed" for r in results)
    cached = sum(r.status == NB_CACHED for r in results)
    failed = sum(r.status in (NB_FAILED, NB_ERROR) for r in results)
    return f"{passed + cached} passed, {failed} failed ({cached} cached)"


def rule_tally(results: list[NotebookResult]) -> dict[str, int]:
    """How many cells each rule decided, over all notebooks ("sanitized: X" counted per sanitizer)."""
    tally: dict[str, int] = {}
    for nb in results:
        for cell in nb.cells:
            main, _, extra = cell.rule.partition(" (sanitized: ")
            tally[main] = tally.get(main, 0) + 1
            for name in filter(None, extra.removesuffix(")").split("; ")):
                key = name if name.startswith("numeric") else f"sanitized: {name}"
                tally[key] = tally.get(key, 0) + 1
    return dict(sorted(tally.items(), key=lambda kv: -kv[1]))


def json_report(results: list[NotebookResult], env: dict, seconds: float) -> str:
    """The --json report: environment, summary, and per-notebook and per-cell results."""
    return json.dumps({
        "environment": env,
        "seconds": round(seconds, 3),
        "summary": summary_line(results),
        "rules": rule_tally(results),
        "notes": note_tally(results),
        "notebooks": [r.to_dict() for r in results],
    }, ensure_ascii=False, indent=1)
