"""Find kernelspecs without importing jupyter_client (keeps a fully cached run fast)."""

from __future__ import annotations

from pathlib import Path

from jupyter_core.paths import jupyter_path

from .errors import EnvironmentProblem

#: arguments for every kernel the tools start. IPython's history is an SQLite file shared by all kernels
#: of the user; with several notebooks running at once one of them can print "The history saving thread
#: hit an unexpected error (OperationalError('database is locked'))" into a cell's saved output.
KERNEL_ARGUMENTS = ["--HistoryManager.enabled=False"]


def ensure_kernel(kernel_name: str) -> Path:
    """Folder of the kernelspec `kernel_name`; EnvironmentProblem when it is not installed."""
    for folder in jupyter_path("kernels"):
        spec = Path(folder) / kernel_name / "kernel.json"
        if spec.is_file():
            return spec.parent
    raise EnvironmentProblem.no_kernel(kernel_name)
