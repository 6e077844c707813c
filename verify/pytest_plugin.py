"""pytest glue: every notebook under the configured folders is a test item.

All selected notebook items run together through the harness's parallel runner the first
time one of them is executed, so `pytest` gets the same parallelism as tools/run_all.py and
`pytest -k 01` still runs a single chapter.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .runner import RunOptions, Runner
from .triage import note_tally


def pytest_addoption(parser):
    group = parser.getgroup("verify", "course notebook verification")
    group.addoption("--verify-jobs", type=int, default=None, help="notebooks run at once (default: one per core)")
    group.addoption("--verify-timeout", type=float, default=300, help="seconds allowed per cell")
    group.addoption("--verify-no-cache", action="store_true", help="run notebooks even when cached as passing")
    group.addoption("--verify-kernel", default="jax-study", help="kernelspec the notebooks run on")
    group.addoption("--verify-shard", default=None, metavar="K/N",
                    help="run only shard K of N of the notebook items (balanced by expected time; CI runs the N "
                         "shards on separate machines); other test items are not affected")
    parser.addini("verify_notebook_dirs", "folders whose notebooks become test items", type="linelist",
                  default=["content"])
    parser.addini("verify_probe", "module:function run in each notebook's live kernel after its last cell "
                  "(verify.execute.load_probe); empty for none", default="")


class NotebookFailed(Exception):
    """Raised by a notebook item whose verification failed."""


def _under_configured_dirs(config, path: Path) -> bool:
    roots = [Path(config.rootpath, d).resolve() for d in config.getini("verify_notebook_dirs")]
    path = path.resolve()
    return any(root == path or root in path.parents for root in roots)


def pytest_collect_file(parent, file_path: Path):
    if file_path.suffix == ".ipynb" and ".ipynb_checkpoints" not in file_path.parts \
            and _under_configured_dirs(parent.config, file_path):
        return NotebookFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config, items):
    spec = config.getoption("verify_shard")
    if not spec:
        return
    from .cache import Cache
    from .errors import UsageError
    from .runner import expected_seconds, shard

    try:
        index, count = (int(part) for part in spec.split("/"))
        cache = Cache()
        notebooks = [i for i in items if isinstance(i, NotebookItem)]
        keep = set(shard([i.path for i in notebooks], index, count, lambda p: expected_seconds(p, cache)))
    except (ValueError, UsageError) as exc:
        raise pytest.UsageError(f"--verify-shard {spec}: {exc if isinstance(exc, UsageError) else 'expected K/N, e.g. 2/3'}")
    dropped = [i for i in notebooks if i.path not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if i not in dropped]


class NotebookFile(pytest.File):
    """A notebook file holds one item: the whole notebook, verified."""

    def collect(self):
        yield NotebookItem.from_parent(self, name="verify")


class _Batch:
    """Runs every selected notebook item at once, the first time any of them is needed."""

    def __init__(self, config) -> None:
        self.config = config
        self.results: dict[str, object] | None = None

    def result_for(self, item: "NotebookItem"):
        if self.results is None:
            paths = [i.path for i in item.session.items if isinstance(i, NotebookItem)]
            cfg = self.config
            options = RunOptions(
                timeout=cfg.getoption("verify_timeout"),
                jobs=cfg.getoption("verify_jobs") or os.cpu_count() or 1,
                use_cache=not cfg.getoption("verify_no_cache"),
                kernel=cfg.getoption("verify_kernel"),
                probe=cfg.getini("verify_probe") or None,
            )
            runner = Runner(options)
            try:
                self.results = {str(r.path): r for r in runner.run(paths)}
            except KeyboardInterrupt:
                self.results = {}
                raise
        return self.results[str(item.path)]


class NotebookItem(pytest.Item):
    """Verify one notebook through the shared engine."""

    def runtest(self):
        batch = self.config.stash.setdefault(_BATCH_KEY, _Batch(self.config))
        result = batch.result_for(self)
        self.user_properties.append(("status", result.status))
        self.user_properties.append(("seconds", result.seconds))
        self.user_properties.extend(("note", note) for note in result.notes)
        if not result.ok:
            raise NotebookFailed(result.report())

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, NotebookFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"notebook {self.path.name}"


_BATCH_KEY = pytest.StashKey[_Batch]()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Environment differences (another Python minor, NumPy, platform, XLA_FLAGS): reported, not failures."""
    batch = config.stash.get(_BATCH_KEY, None)
    if batch is None or not batch.results:
        return
    notes = note_tally(list(batch.results.values()))
    if notes:
        terminalreporter.section("notebook notes")
        for note, count in notes.items():
            terminalreporter.write_line(f"{count} notebook(s): {note}")
