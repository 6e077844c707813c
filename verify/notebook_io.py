"""Read notebooks with clear errors; write them atomically (temp file + rename)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import nbformat

from .errors import NotebookReadError


def load_notebook(path: Path) -> nbformat.NotebookNode:
    """Parse a notebook file, raising NotebookReadError with a precise message when it is bad."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise NotebookReadError(f"{path}: cannot read file ({exc.strerror}).") from exc
    except UnicodeDecodeError as exc:
        raise NotebookReadError(f"{path}: not UTF-8 text ({exc.reason}).") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookReadError.bad_json(path, exc) from exc
    if not isinstance(data, dict) or "cells" not in data or data.get("nbformat") != 4:
        raise NotebookReadError.bad_structure(path, "missing `cells` or nbformat != 4")
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise NotebookReadError.bad_structure(path, str(exc).splitlines()[0]) from exc
    return nb


def dumps_notebook(nb) -> str:
    """Serialise the way Jupyter does (sorted keys, indent 1, UTF-8), ending in a newline."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write text to path so that readers see either the old or the new file, never a half."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp-verify")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
