"""Result dataclasses shared by the engine, the runner, the CLI and the pytest plugin."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# Cell statuses
PASSED = "passed"
FAILED = "failed"
NOT_RUN = "not run"

# Notebook statuses
NB_PASSED = "passed"
NB_FAILED = "failed"
NB_CACHED = "cached"
NB_ERROR = "error"  # the notebook could not be run at all (bad JSON, kernel missing, …)


@dataclass
class CellResult:
    """What happened to one code cell."""

    index: int  # position in the notebook, 0-based, counting every cell
    cell_id: str
    status: str = NOT_RUN
    rule: str = ""  # which rule decided: "outputs equal", "cell error", "text differs", …
    message: str = ""  # one line
    detail: str = ""  # traceback or unified diff
    seconds: float = 0.0
    source_head: str = ""  # first source line, to find the cell by eye

    @property
    def label(self) -> str:
        """Human name of the cell: number (1-based, as a reader counts) and id."""
        if self.index < 0:
            return "notebook metadata"
        return f"cell {self.index + 1} (id {self.cell_id})"


@dataclass
class NotebookResult:
    """What happened to one notebook."""

    path: str
    status: str
    seconds: float = 0.0
    message: str = ""
    cells: list[CellResult] = field(default_factory=list)
    refreshed: bool = False
    cache_key: str = ""
    notes: list[str] = field(default_factory=list)  # reported, never a failure (e.g. another NumPy patch)

    @property
    def ok(self) -> bool:
        """True when nothing failed (a cache hit counts as passed)."""
        return self.status in (NB_PASSED, NB_CACHED)

    def failures(self) -> list[CellResult]:
        """Cells that failed, in notebook order."""
        return [c for c in self.cells if c.status == FAILED]

    def report(self) -> str:
        """Failure report: notebook → cell → what differed."""
        lines = [f"{self.path}: {self.status.upper()}" + (f" — {self.message}" if self.message else "")]
        lines += [f"  note: {note}" for note in self.notes]
        for cell in self.failures():
            lines.append(f"  {cell.label} [{cell.rule}]: {cell.message}")
            if cell.source_head:
                lines.append(f"    source: {cell.source_head}")
            for line in cell.detail.rstrip().splitlines():
                lines.append(f"    {line}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "NotebookResult":
        """Inverse of to_dict."""
        cells = [CellResult(**c) for c in data.pop("cells", [])]
        return cls(cells=cells, **data)
