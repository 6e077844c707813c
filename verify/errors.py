"""All exception types of the harness, each with the message a maintainer needs."""

from __future__ import annotations


class VerifyError(Exception):
    """Base class: something the harness cannot do, with a message saying what to do."""


class NotebookReadError(VerifyError):
    """A notebook file is missing, unreadable or not valid notebook JSON."""

    @classmethod
    def bad_json(cls, path, exc) -> "NotebookReadError":
        return cls(
            f"{path}: not a valid notebook: line {exc.lineno} column {exc.colno}: {exc.msg}. "
            f"Restore it with `git checkout -- {path}` or fix the JSON by hand."
        )

    @classmethod
    def bad_structure(cls, path, detail) -> "NotebookReadError":
        return cls(
            f"{path}: JSON is valid but not an nbformat 4 notebook ({detail}). "
            "Open it in Jupyter and save it again, or restore it from git."
        )


class EnvironmentProblem(VerifyError):
    """The environment cannot run notebooks (kernel missing, wrong Python, …)."""

    @classmethod
    def no_kernel(cls, name) -> "EnvironmentProblem":
        return cls(
            f"kernelspec `{name}` is not installed in this environment. "
            "Run `./dev setup test,site` (it creates .venv, installs the harness and registers the kernel), "
            "then use .venv/bin/python tools/run_all.py."
        )


class UsageError(VerifyError):
    """The command line asks for something that does not exist."""
