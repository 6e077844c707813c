"""Every chapter under content/ passes the structure check and the self-check check."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from conftest import ROOT

from coursetools.selfcheck import check_notebook
from coursetools.structure import chapter_paths, check_chapter

CHAPTERS = chapter_paths([ROOT / "content"])
IDS = [p.stem for p in CHAPTERS]


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_chapter_structure(path):
    problems = check_chapter(path, nbformat.read(path, as_version=4))
    assert not problems, "\n".join(map(str, problems))


@pytest.fixture(scope="session")
def selfcheck_results(request):
    """Self-check problems of every selected chapter, computed in parallel once per session."""
    selected = [item.callspec.params["path"] for item in request.session.items
                if getattr(item, "originalname", "") == "test_chapter_selfchecks"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return dict(zip(selected, pool.map(check_notebook, selected)))


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_chapter_selfchecks(path, selfcheck_results):
    problems = selfcheck_results[path]
    assert not problems, "\n".join(map(str, problems))
