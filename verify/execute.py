"""Run one notebook in a fresh kernel, decide every cell, and optionally refresh the file.

This module imports no pytest: the CLI, the worker and the pytest plugin all call it.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import nbformat

try:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
except ImportError as exc:   # a learner's .venv: the harness is a maintainer extra
    raise ImportError(f"{exc}. The verification harness is not installed here: run ./dev setup test,site") from exc

from . import cells as C
from .cache import provenance, provenance_check, provenance_mismatch
from .compare import error_name, same_outputs, warnings_in
from .errors import VerifyError
from .kernels import KERNEL_ARGUMENTS, ensure_kernel
from .lite import comparable, lite_outputs
from .normalize import ANSI, normalize
from .notebook_io import dumps_notebook, load_notebook, write_atomic
from .results import FAILED, NB_ERROR, NB_FAILED, NB_PASSED, NOT_RUN, PASSED, CellResult, NotebookResult

DEFAULT_KERNEL = "jax-study"


def _head(cell) -> str:
    first = C.source_text(cell).strip().splitlines()
    return first[0][:100] if first else ""


def _traceback(outputs) -> str:
    for out in outputs:
        if out.get("output_type") == "error":
            return ANSI.sub("", "\n".join(out.get("traceback", []))) or f"{out.get('ename')}: {out.get('evalue')}"
    return ""


def _printed(outputs) -> str:
    """What the cell printed before it failed (often says which check broke)."""
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    return f"printed before the error:\n{text.rstrip()}\n\n" if text.strip() else ""


class _Tracker:
    """nbclient hooks: remember which cell runs and how long each took."""

    def __init__(self) -> None:
        self.current: int | None = None
        self.started: float = 0.0
        self.seconds: dict[int, float] = {}
        self.finished: set[int] = set()

    def on_start(self, cell, cell_index, **_) -> None:
        self.current, self.started = cell_index, time.monotonic()

    def on_done(self, cell, cell_index, **_) -> None:
        self.seconds[cell_index] = time.monotonic() - self.started
        self.finished.add(cell_index)


def decide_cell(cell, fresh_outputs, refresh: bool) -> CellResult:
    """Decide one cell that ran to completion (or raised where it was allowed to)."""
    res = CellResult(index=0, cell_id=cell.get("id", ""), source_head=_head(cell))
    saved = cell.get("outputs", [])
    if not C.expects_error(cell) and error_name(fresh_outputs):  # only in keep-going runs
        res.status, res.rule = FAILED, "cell error"
        err = next(o for o in fresh_outputs if o.get("output_type") == "error")
        res.message = f"{err.get('ename')}: {err.get('evalue')}".strip()[:300]
        res.detail = _traceback(fresh_outputs)
        return res
    if C.expects_error(cell):
        fresh_err, saved_err = error_name(fresh_outputs), error_name(saved)
        if fresh_err is None:
            res.status, res.rule = FAILED, "expected error missing"
            res.message = (
                f"cell is tagged `{C.RAISES_TAG}` but ran without error"
                + (f" (saved output shows {saved_err})" if saved_err else "")
                + ": the old way may work again — check the JAX changelog and rewrite the cell."
            )
            return res
        if saved_err and saved_err != fresh_err and not refresh:
            res.status, res.rule = FAILED, "error type changed"
            res.message = f"saved output raised {saved_err}, fresh run raised {fresh_err}"
            res.detail = _traceback(fresh_outputs)
            return res
    new_warnings = warnings_in(fresh_outputs) - warnings_in(saved)
    undeclared = sorted(w for w in new_warnings if not C.warning_declared(cell, w.split(":", 1)[0]))
    if undeclared and not refresh:
        res.status, res.rule = FAILED, "new warning"
        res.message = ("fresh run prints a warning the saved output does not have: " + "; ".join(undeclared)
                       + " — fix the cause, or list its category in metadata.course.expect_warnings and refresh")
        return res
    mode = C.volatile_mode(cell)
    if mode == "all":
        res.status, res.rule = PASSED, "volatile: not compared"
        return res
    equal, diff, fired = same_outputs(saved, fresh_outputs, mask_numbers=(mode == "numbers"),
                                      tolerance=C.course_meta(cell).get("tolerance"))
    rule = "outputs equal" + (f" (sanitized: {'; '.join(fired)})" if fired else "")
    if equal or refresh:
        res.status, res.rule = PASSED, rule if equal else "refreshed"
    else:
        res.status, res.rule = FAILED, "text differs"
        res.message = "fresh output differs from the saved one (diff below; `--refresh` accepts it)"
        res.detail = diff
    return res


def load_probe(spec: str):
    """'package.module:function' → the function. A probe runs in the notebook's live kernel after its last cell
    (probe(client, notebook, path) → [(cell index, rule, message), …], one item per problem); the course uses
    it to judge every exercise's self-check in the state the chapter left, without running the chapter again."""
    import importlib

    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise VerifyError(f"probe {spec!r} cannot be loaded ({exc}); give it as package.module:function") from exc


def _run_probe(probe, client, run_nb, path: Path) -> list[tuple[int | None, str, str]]:
    try:
        return list(probe(client, run_nb, path))
    except Exception as exc:   # a probe fault is the notebook's failure, never the harness's crash
        return [(None, "probe error", f"{type(exc).__name__}: {exc}"[:300])]


def run_notebook(
    path: Path,
    *,
    timeout: float = 300,
    kernel_name: str = DEFAULT_KERNEL,
    refresh: bool = False,
    keep_going: bool = False,
    probe: str | None = None,
) -> NotebookResult:
    """Execute one notebook and check it (or refresh it). Never raises for notebook faults.

    keep_going runs every cell even after an unexpected error, to list every behaviour change.
    probe ('module:function', see load_probe) runs in the same kernel after every cell ran; each problem it
    returns fails the notebook. Not with refresh or keep_going.
    """
    path = Path(path)
    t0 = time.monotonic()
    result = NotebookResult(path=str(path), status=NB_PASSED)
    try:
        saved_nb = load_notebook(path)
        ensure_kernel(kernel_name)
        probe_fn = load_probe(probe) if probe and not (refresh or keep_going) else None
    except VerifyError as exc:
        result.status, result.message = NB_ERROR, str(exc)
        return result

    run_nb = copy.deepcopy(saved_nb)
    tracker = _Tracker()
    client = NotebookClient(
        run_nb,
        timeout=timeout,
        kernel_name=kernel_name,
        extra_arguments=KERNEL_ARGUMENTS,
        allow_errors=keep_going,
        record_timing=False,
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(path.parent.resolve())}},
        on_cell_start=tracker.on_start,
        on_cell_executed=tracker.on_done,
    )
    stop: tuple[int, str, str, str] | None = None  # (cell index, rule, message, detail)
    probed: list[tuple[int | None, str, str]] = []
    try:
        if any(C.is_code(cell) for cell in saved_nb.cells):   # a markdown-only page needs no kernel
            if probe_fn is None:
                client.execute()
            else:
                with client.setup_kernel():   # shuts the kernel down after the probe, not after the last cell
                    client.execute(cleanup_kc=False)
                    probed = _run_probe(probe_fn, client, run_nb, path)
    except CellTimeoutError as exc:
        stop = (tracker.current, "cell timeout", f"no result within {timeout:g} s per cell; the kernel was stopped", str(exc).strip()[:2000])
    except DeadKernelError as exc:
        stop = (tracker.current, "kernel died", f"the kernel process died while running this cell ({exc})", "")
    except CellExecutionError as exc:
        idx = tracker.current
        outputs = run_nb.cells[idx].get("outputs", []) if idx is not None else []
        stop = (idx, "cell error", f"{exc.ename}: {exc.evalue}".strip()[:300],
                (_printed(outputs) + _traceback(outputs)) if idx is not None else ANSI.sub("", str(exc)))

    for index, (saved_cell, fresh_cell) in enumerate(zip(saved_nb.cells, run_nb.cells)):
        if not C.is_code(saved_cell) or C.SKIP_TAG in C.tags(saved_cell):
            continue
        if stop is not None and index == stop[0]:
            cell_res = CellResult(index=index, cell_id=saved_cell.get("id", ""), status=FAILED,
                                  rule=stop[1], message=stop[2], detail=stop[3], source_head=_head(saved_cell))
        elif index in tracker.finished:
            cell_res = decide_cell(saved_cell, fresh_cell.get("outputs", []), refresh)
            cell_res.index = index
        else:
            cell_res = CellResult(index=index, cell_id=saved_cell.get("id", ""), status=NOT_RUN,
                                  rule="not run", source_head=_head(saved_cell))
        cell_res.seconds = round(tracker.seconds.get(index, 0.0), 3)
        result.cells.append(cell_res)

    _check_lite(saved_nb, run_nb, path, result, tracker.finished)
    for index, rule, message in probed:
        cell = saved_nb.cells[index] if index is not None and 0 <= index < len(saved_nb.cells) else {}
        result.cells.append(CellResult(index=index if cell else -1, cell_id=cell.get("id", "(probe)"), status=FAILED,
                                       rule=rule, message=message, source_head=_head(cell) if cell else probe))
    env = provenance()
    if not refresh:
        fatal, note = provenance_check(saved_nb.metadata.get("verify", {}).get("environment"), env)
        if fatal:
            result.cells.insert(0, CellResult(index=-1, cell_id="(notebook)", status=FAILED, rule="environment mismatch",
                                              message=f"{fatal}. Refresh it on the pinned environment: "
                                                      f"tools/run_all.py {path} --refresh"))
        if note:
            result.notes.append(f"environment differs ({note}); outputs compared under the usual rules")
    if stop is not None or result.failures():
        result.status = NB_FAILED
        first = result.failures()[0]
        result.message = f"{len(result.failures())} cell(s) failed, first: {first.label} [{first.rule}]"
    elif refresh and not keep_going:
        result.refreshed = _write_refresh(path, saved_nb, run_nb, env, time.monotonic() - t0)
    result.seconds = round(time.monotonic() - t0, 3)
    return result


def _check_lite(nb, run_nb, path: Path, result: NotebookResult, ran) -> None:
    """Fail every lite cell that does not run without JAX, or prints there something else than in the kernel.

    The second check compares with what the kernel printed for the cell in this run (the usual rules).
    """
    found = lite_outputs(nb, path)
    for cell_res in result.cells:
        if cell_res.index not in found:
            continue
        err, outputs = found[cell_res.index]
        if err:
            cell_res.status, cell_res.rule = FAILED, "lite cell needs JAX"
            cell_res.message = (f"tagged `{C.LITE_TAG}` but fails where jax/numpy cannot be imported: "
                                f"{err} — remove the tag or make the cell pure Python")
            continue
        cell = nb.cells[cell_res.index]
        mode = C.volatile_mode(cell)
        if mode == "all" or cell_res.index not in ran or cell_res.status == FAILED:
            continue
        kernel = comparable(run_nb.cells[cell_res.index].get("outputs", []))
        same, diff, _ = same_outputs(kernel, outputs, mask_numbers=(mode == "numbers"),
                                     tolerance=C.course_meta(cell).get("tolerance"))
        if not same:
            cell_res.status, cell_res.rule = FAILED, "lite output differs"
            cell_res.message = ("without JAX (as in the browser) this lite cell prints something else than in the "
                                "kernel: make its output independent of the interpreter and of earlier JAX cells "
                                "(round floats from math; define what it uses in lite cells)")
            cell_res.detail = diff


RENEW_SECONDS = 5


def merged_for_refresh(saved_nb, run_nb, env: dict | None = None, seconds: float | None = None):
    """The saved notebook with fresh outputs and execution counts; everything else untouched.

    A cell whose fresh outputs equal the saved ones under the comparison rules (and whose tracebacks
    and, unless it is volatile, image pixels are unchanged) keeps its saved outputs byte for byte, so a
    refresh with nothing changed writes nothing. The recorded
    environment is renewed only when some output changed or it differs in a compared key (a new
    Python patch release alone does not rewrite a notebook whose outputs all still hold).
    `seconds` (the run's duration) is recorded as metadata.verify.seconds for the runner's
    longest-first order, renewed only when it is missing or off by more than half and by more than
    RENEW_SECONDS (a short notebook's time is mostly kernel start, which swings with machine load; the
    order only cares about long ones).
    """
    merged = copy.deepcopy(saved_nb)
    changed = False
    for cell, fresh in zip(merged.cells, run_nb.cells):
        if cell.get("cell_type") != "code":
            continue
        if C.is_code(cell) and C.SKIP_TAG not in C.tags(cell):
            mode = C.volatile_mode(cell)
            fresh_outputs = fresh.get("outputs", [])
            equal, _, _ = same_outputs(cell.get("outputs", []), fresh_outputs, mask_numbers=mode is not None,
                                       tolerance=C.course_meta(cell).get("tolerance"))
            saved_outputs = cell.get("outputs", [])
            if not equal or _tracebacks(saved_outputs) != _tracebacks(fresh_outputs) \
                    or (mode is None and _images(saved_outputs) != _images(fresh_outputs)):
                cell["outputs"] = nbformat.from_dict(fresh_outputs)
                changed = True
            cell["execution_count"] = fresh.get("execution_count")
    if env is not None:
        recorded = merged.metadata.get("verify", {}).get("environment")
        if changed or provenance_mismatch(recorded, env):
            merged.metadata.setdefault("verify", {})["environment"] = env
    if seconds is not None:
        old = merged.metadata.get("verify", {}).get("seconds")
        if not isinstance(old, (int, float)) or abs(seconds - old) > max(0.5 * old, RENEW_SECONDS):
            merged.metadata.setdefault("verify", {})["seconds"] = max(1, round(seconds))
    return merged


def _tracebacks(outputs) -> list:
    """Error tracebacks, normalised (not compared by the check, but a refresh keeps them current)."""
    return [normalize("\n".join(o.get("traceback", [])))[0] for o in outputs if o.get("output_type") == "error"]


def _images(outputs) -> list:
    """Image data of the outputs (the check compares only their display size; a refresh keeps the pixels current)."""
    return ["".join(data).strip() if isinstance(data, list) else data.strip()
            for o in outputs for mime, data in o.get("data", {}).items() if mime.startswith("image/")]


def _write_refresh(path: Path, saved_nb, run_nb, env: dict, seconds: float | None = None) -> bool:
    """Write the refreshed notebook atomically; return True when bytes changed."""
    text = dumps_notebook(merged_for_refresh(saved_nb, run_nb, env, seconds))
    if path.read_text(encoding="utf-8") == text:
        return False
    write_atomic(path, text)
    return True
