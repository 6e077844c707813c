"""Deliberately broken copies of the exemplar chapter 01 are caught, each by the rule it breaks (the self-check
rules, which run a kernel, are tested on a mini chapter in test_checkers.py)."""

from __future__ import annotations

import shutil

import nbformat
import pytest

from conftest import ROOT

from coursetools.structure import check_chapter
from coursemodel.contract import parse_chapter  # noqa: E402

EXEMPLAR = ROOT / "content" / "入门" / "01_JAX简介.ipynb"
pytestmark = pytest.mark.skipif(not EXEMPLAR.exists(), reason="chapter 01 is not written yet")


@pytest.fixture
def copy(tmp_path):
    dest = tmp_path / "入门" / EXEMPLAR.name
    dest.parent.mkdir()
    shutil.copy(EXEMPLAR, dest)
    nb = nbformat.read(dest, as_version=4)
    return dest, nb, parse_chapter(nb)


def _rules(path, nb):
    nbformat.write(nb, path)
    return {p.rule for p in check_chapter(path, nbformat.read(path, as_version=4))}


def test_exemplar_is_clean(copy):
    path, nb, _ = copy
    assert _rules(path, nb) == set()


def test_when_a_reference_answer_is_removed_then_exercise_complete(copy):
    path, nb, ch = copy
    ex = next(iter(ch.exercises.values()))
    del nb.cells[ex.reference]
    assert "exercise-complete" in _rules(path, nb)


def test_when_two_sections_are_swapped_then_section_order(copy):
    path, nb, ch = copy
    quiz = next(s for s in ch.sections if s.kind == "quiz")
    summary = next(s for s in ch.sections if s.kind == "summary")
    cells = nb.cells
    nb.cells = cells[:quiz.start] + cells[summary.start:summary.end] + cells[quiz.end:summary.start] + \
        cells[quiz.start:quiz.end] + cells[summary.end:]
    assert "section-order" in _rules(path, nb)


def test_when_a_new_way_cell_is_dropped_then_old_new_pair(copy):
    path, nb, ch = copy
    old, new = ch.old_new[0]
    del nb.cells[new]
    assert "old-new-pair" in _rules(path, nb)
