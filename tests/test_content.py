"""Every chapter under content/ passes the structure check. Its self-checks (⏳ empty, ✅ reference, ❌ every
recorded wrong answer) are judged by the chapter's notebook item: pytest verifies each notebook with the probe
`verify_probe` of [tool.pytest.ini_options] (coursetools.selfcheck:probe), in the kernel the verification ran
the chapter in, so the chapter runs once instead of twice."""

from __future__ import annotations

import nbformat
import pytest

from conftest import ROOT

from coursetools.structure import chapter_paths, check_chapter

CHAPTERS = chapter_paths([ROOT / "content"])
IDS = [p.stem for p in CHAPTERS]


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_chapter_structure(path):
    problems = check_chapter(path, nbformat.read(path, as_version=4))
    assert not problems, "\n".join(map(str, problems))


def test_notebook_items_judge_the_selfchecks(pytestconfig):
    """If the probe were dropped from the configuration, no test would judge the self-checks any more."""
    from verify.execute import load_probe

    from coursetools.selfcheck import probe

    assert load_probe(pytestconfig.getini("verify_probe")) is probe
