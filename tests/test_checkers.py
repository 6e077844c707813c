"""The structure and self-check checkers catch each broken rule, and name it."""

from __future__ import annotations


import nbformat
import pytest

from chapterfactory import SETUP, REFERENCE, chapter_cells, write_chapter
from nbfactory import code, md

from coursetools.selfcheck import check_notebook
from coursetools.structure import check_chapter, counts


def _rules(path):
    return {p.rule for p in check_chapter(path, nbformat.read(path, as_version=4))}


def _executed(tmp_path, cells=None, name="99_测试章.ipynb"):
    """Write the mini chapter and give every code cell an execution count, as a refresh would."""
    path = write_chapter(tmp_path / name, cells)
    nb = nbformat.read(path, as_version=4)
    for n, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), 1):
        cell.execution_count = n
    nbformat.write(nb, path)
    return path


def _index(cells, head):
    return next(i for i, c in enumerate(cells) if c.source.startswith(head))


def test_when_chapter_follows_contract_then_structure_check_is_clean(tmp_path):
    assert _rules(_executed(tmp_path)) == set()


def test_when_two_sections_are_swapped_then_section_order_is_named(tmp_path):
    cells = chapter_cells()
    quiz, updates = _index(cells, "## 测验"), _index(cells, "## 本章更新说明")
    cells[quiz], cells[updates] = cells[updates], cells[quiz]
    assert "section-order" in _rules(_executed(tmp_path, cells))


def test_when_new_way_cell_is_dropped_then_old_new_pair_is_named(tmp_path):
    cells = chapter_cells()
    del cells[_index(cells, "# ✅ 推荐写法")]
    assert "old-new-pair" in _rules(_executed(tmp_path, cells))


def test_when_reference_answer_is_removed_then_exercise_complete_is_named(tmp_path):
    cells = chapter_cells()
    del cells[_index(cells, "# 参考答案")]
    assert "exercise-complete" in _rules(_executed(tmp_path, cells))


@pytest.mark.parametrize("mutation, rule", [
    (lambda cells: cells.__setitem__(2, md("## 9.1 第一节\n\n### 课程讲解")), "course-section-link"),
    (lambda cells: cells[_index(cells, "## 测验")].__setattr__("source", "## 测验\n\n### 第 1 题\n\n答案:2"), "quiz-folded"),
    (lambda cells: cells[_index(cells, "# ✍️")].__setattr__("source", "# ✍️ 作答区 [练习 9.1]\nhalve = abs"), "answer-area-empty"),
    (lambda cells: cells[_index(cells, "# 🧪")].metadata.__setitem__("course", {}), "exercise-wrong-answer"),
    (lambda cells: cells.__setitem__(1, code("import jaxcourse")), "setup-cell"),
    (lambda cells: cells.__setitem__(1, code(SETUP.replace("github.com/", "gitlab.com/"), tags=["lite"])), "setup-cell"),
    (lambda cells: cells.insert(3, md("## 随便写的标题")), "section-order"),
    (lambda cells: cells[_index(cells, "# ❌ 旧写法")].__setattr__("source", "# ❌ 旧写法\nx.device()"), "old-version"),
    (lambda cells: cells[_index(cells, "# ✅ 推荐写法")].__setattr__("source", "# ✅ 正确写法\nprint(1)"), "old-new-pair"),
    (lambda cells: cells[_index(cells, "# ✅ 正确写法")].__setattr__("source", "# ✅ 推荐写法\nprint(1)"), "old-new-pair"),
    (lambda cells: cells.insert(4, code("# ❌ 不推荐\nprint(1)")), "stray-mark"),
    (lambda cells: cells.insert(4, md("> ⚠️ 注意 少了冒号")), "callout-form"),
    (lambda cells: cells.insert(4, md("#### ⚠️ 标题式警告")), "callout-form"),
    (lambda cells: cells[_index(cells, "## 练习")].__setattr__(
        "source", "## 练习\n\n### 练习 9.1 · 减半\n\n定义 `halve`。\n\n**限制\uff1a** 不用除法"), "exercise-rule"),
    (lambda cells: cells[_index(cells, "## 练习")].__setattr__(
        "source", "## 练习\n\n### 练习 9.1 · 减半\n\n定义 `halve`，不要用除法。"), "exercise-unstated-rule"),
], ids=["link", "quiz", "answer-area", "wrong-answers", "setup", "setup-other-repository", "unknown-heading",
        "old-version", "crossed-pair", "crossed-pair-2", "stray-mark", "callout-colon", "callout-heading", "exercise-rule",
        "exercise-unstated-rule"])
def test_when_a_rule_is_broken_then_it_is_named(tmp_path, mutation, rule):
    cells = chapter_cells()
    mutation(cells)
    assert rule in _rules(_executed(tmp_path, cells))


@pytest.mark.parametrize("change", ["drop", "no-try-line", "too-short", "untagged"])
def test_when_a_chapter_has_fewer_than_three_teaching_lite_cells_then_lite_cells_is_named(tmp_path, change):
    cells = chapter_cells()
    i = _index(cells, "# 试一试")
    if change == "drop":
        del cells[i]
    elif change == "no-try-line":
        cells[i].source = cells[i].source.replace("# 试一试\uff1a", "# ")
    elif change == "too-short":
        cells[i].source = "# 试一试\uff1a改一改\nprint(1)"
    else:
        cells[i].metadata["tags"] = []
    path = _executed(tmp_path, cells)
    problems = [p for p in check_chapter(path, nbformat.read(path, as_version=4)) if p.rule == "lite-cells"]
    assert len(problems) == 1 and "2 lite cell(s)" in problems[0].message
    assert change in ("drop", "untagged") or f"cell {i + 1}:" in problems[0].message   # says why it did not count


def test_when_a_lite_cell_uses_the_model_without_importing_it_then_it_is_named(tmp_path):
    cells = chapter_cells()
    i = _index(cells, "# 试一试")
    cells[i].source = cells[i].source.replace("import jaxcourse.minijax as mj\n", "")
    assert "lite-self-contained" in _rules(_executed(tmp_path, cells))


def test_when_a_cell_never_ran_then_executed_is_named(tmp_path):
    assert "executed" in _rules(write_chapter(tmp_path / "99_x.ipynb"))


def test_when_problem_is_reported_then_it_names_notebook_cell_and_rule(tmp_path):
    cells = chapter_cells()
    del cells[_index(cells, "# ✅ 推荐写法")]
    path = _executed(tmp_path, cells)
    text = [str(p) for p in check_chapter(path, nbformat.read(path, as_version=4)) if p.rule == "old-new-pair"][0]
    n = _index(cells, "# ❌ 旧写法") + 1
    assert text.startswith(str(path)) and f"cell {n} (id cell-{n})" in text and "[old-new-pair]" in text


# self-check checker: each case runs a real kernel

def _selfcheck_rules(tmp_path, cells):
    return {p.rule for p in check_notebook(write_chapter(tmp_path / "99_测试章.ipynb", cells))}


def test_when_exercise_is_sound_then_selfcheck_checker_is_clean(tmp_path):
    cells = chapter_cells()
    cells[_index(cells, "# 🧪")].metadata["course"]["right_answers"] = ["def halve(value):\n    return value * 0.5"]
    assert _selfcheck_rules(tmp_path, cells) == set()


def test_when_answer_leaks_into_selfcheck_message_then_leak_is_named(tmp_path):
    cells = chapter_cells()
    i = _index(cells, "# 🧪")
    cells[i].source = cells[i].source.replace('"halve(4) 的结果不对"', '"应该写成 return value / 2"')
    assert "selfcheck-leak" in _selfcheck_rules(tmp_path, cells)


def test_when_answer_leaks_only_into_what_the_selfcheck_prints_then_leak_is_named(tmp_path):
    """The line is not in the self-check's source (it is put together when the cell runs), only in its output."""
    cells = chapter_cells()
    i = _index(cells, "# 🧪")
    cells[i].source += '\nprint("提示：应该写成 return value " + "/ 2")'
    assert "return value / 2" not in cells[i].source
    assert "selfcheck-leak" in _selfcheck_rules(tmp_path, cells)


def test_when_reference_answer_is_wrong_then_reference_rule_is_named(tmp_path):
    cells = chapter_cells()
    cells[_index(cells, "# 参考答案")].source = REFERENCE.replace("/ 2", "/ 3")
    assert "selfcheck-reference" in _selfcheck_rules(tmp_path, cells)


def test_when_a_wrong_answer_passes_or_a_right_one_fails_then_the_rule_is_named(tmp_path):
    cells = chapter_cells()
    meta = cells[_index(cells, "# 🧪")].metadata["course"]
    meta["wrong_answers"] = ["def halve(value):\n    return value // 2"]
    meta["right_answers"] = ["def halve(value):\n    return value / 3"]     # recorded as right, rejected: named
    assert {"selfcheck-wrong", "selfcheck-right"} <= _selfcheck_rules(tmp_path, cells)


# 🧪 自检 drawing its test data afresh (unseeded) on every run, as the chapters' checks do
RANDOM_CHECK = ('# 🧪 自检 [练习 9.1]\nimport numpy as np\n_x = float(np.random.default_rng().integers(1, 100))\n'
                'jaxcourse.selfcheck("9.1", names=["halve"], checks=[\n'
                '    (lambda: callable(halve), "halve 应该是函数"),\n'
                '    (lambda: halve(_x) == _x / 2, "halve 的结果不对"),\n])')


def test_when_a_verdict_changes_between_runs_then_repeat_names_it_flaky(tmp_path, capsys):
    """--repeat N judges every answer N times: a right answer that fails on some runs and a wrong one that passes
    on some are named selfcheck-flaky with their pass count; stable answers are not. Each flaky answer here
    alternates on a counter (the answer cell runs anew before each judgement), so the test itself never is:
    both pass their first run (right) or fail it (wrong), which is all a single judgement sees."""
    from coursetools.selfcheck import main

    cells = chapter_cells()
    check = _index(cells, "# 🧪")
    cells[check].source = RANDOM_CHECK
    meta = cells[check].metadata["course"]
    meta["right_answers"] = ["def halve(value):\n    return value * 0.5",
                             '_r = globals().get("_r", 0) + 1\ndef halve(value):\n    return value / 2 if _r % 2 else value / 3']
    meta["wrong_answers"] += ['_w = globals().get("_w", 0) + 1\ndef halve(value):\n    return value / 2 if _w % 2 == 0 else value * 2']
    path = write_chapter(tmp_path / "99_测试章.ipynb", cells)
    assert main([str(path), "--repeat", "2", "--jobs", "1"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all("[selfcheck-flaky] 练习 9.1:" in line for line in lines), lines
    assert "correct answer #2 (right_answers) passed 1 of 2 runs" in lines[0] and "_r = globals()" in lines[0]
    assert "wrong answer #2 (wrong_answers) passed 1 of 2 runs" in lines[1] and "_w = globals()" in lines[1]


class _ScriptedSession:
    """Stands in for the kernel: each judgement of an answer passes or fails as scripted, in turn."""

    def __init__(self, nb, script):
        self.nb, self.script, self.judged = nb, script, []

    def judge(self, ex, answer):
        self.judged.append(answer)
        return "", self.script[answer][(self.judged.count(answer) - 1) % len(self.script[answer])]

    def forget(self, ex):
        pass


def test_without_repeat_each_answer_is_judged_once_and_a_rule_answer_is_named_by_its_kind(tmp_path):
    from coursetools.selfcheck import _judge

    cells = chapter_cells()
    check = cells[_index(cells, "# 🧪")]
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text="⏳ 练习 9.1：还没有作答\n")]  # as shipped
    check.metadata["course"]["rule_answers"] = ["halve = lambda v: v / 2"]
    nb = nbformat.v4.new_notebook(cells=cells)
    wrong = check.metadata["course"]["wrong_answers"][0]
    script = {REFERENCE: ["✅", "✅"], wrong: ["❌", "❌"], "halve = lambda v: v / 2": ["❌", "✅"]}
    session = _ScriptedSession(nb, script)
    assert _judge(session, tmp_path / "x.ipynb", {}) == [] and len(session.judged) == 3   # as before --repeat
    session = _ScriptedSession(nb, script)
    problems = _judge(session, tmp_path / "x.ipynb", {}, repeat=2)
    assert len(session.judged) == 6 and [p.rule for p in problems] == ["selfcheck-flaky"]
    assert "wrong answer #2 (rule_answers #1) passed 1 of 2 runs" in problems[0].message


def test_only_judges_the_named_exercises_and_an_unknown_id_is_refused_before_any_kernel_starts(tmp_path):
    from coursetools.selfcheck import _judge, main

    cells = chapter_cells()
    check = cells[_index(cells, "# 🧪")]
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text="⏳ 练习 9.1：还没有作答\n")]
    nb = nbformat.v4.new_notebook(cells=cells)
    wrong = check.metadata["course"]["wrong_answers"][0]
    script = {REFERENCE: ["✅"], wrong: ["✅"]}            # the wrong answer passes: a problem when 9.1 is judged
    session = _ScriptedSession(nb, script)
    assert _judge(session, tmp_path / "x.ipynb", {}, only=frozenset({"9.2"})) == [] and session.judged == []
    problems = _judge(_ScriptedSession(nb, script), tmp_path / "x.ipynb", {}, only=frozenset({"9.1"}))
    assert [p.rule for p in problems] == ["selfcheck-wrong"]
    path = write_chapter(tmp_path / "99_测试章.ipynb", chapter_cells())
    with pytest.raises(SystemExit, match=r"--only names 9\.7, not an exercise .*this chapter has: 9\.1"):
        main([str(path), "--only", "9.1,9.7", "--jobs", "1"])


def test_when_answer_name_is_already_defined_then_pending_rule_is_named(tmp_path):
    cells = chapter_cells()
    cells.insert(_index(cells, "## 🔍 补充"), code("halve = None"))
    assert "selfcheck-pending" in _selfcheck_rules(tmp_path, cells)


def test_verify_judges_the_selfchecks_in_the_kernel_it_ran_the_chapter_in(tmp_path, run_notebooks):
    """pytest's notebook items run with the probe of [tool.pytest.ini_options]: a recorded wrong answer that
    passes fails the chapter's verification, named at its self-check cell; a sound chapter passes."""
    import tomllib

    from conftest import ROOT

    probe = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["verify_probe"]
    assert probe == "coursetools.selfcheck:probe"
    cells = chapter_cells()
    runs = _index(cells, "# ✅ 推荐写法")   # the factory's chapter reuses x after the lite cells: make it run through
    cells[runs].source = cells[runs].source.replace("print(len(x))", "x = [1, 2, 3]\nprint(len(x))")
    check = _index(cells, "# 🧪")
    good = write_chapter(tmp_path / "good" / "99_测试章.ipynb", cells)
    cells[check].metadata["course"]["wrong_answers"] = ["def halve(value):\n    return value // 2"]
    bad = write_chapter(tmp_path / "bad" / "98_测试章.ipynb", cells)
    run_notebooks(good, bad, refresh=True)                       # saved outputs from a real run
    judged = run_notebooks(good, bad, probe=probe)               # both at once (jobs=2)
    assert judged["99_测试章"].ok
    result = judged["98_测试章"]
    failed = [c for c in result.failures() if c.rule == "selfcheck-wrong"]
    assert not result.ok and failed and failed[0].index == check and "wrong answer #" in failed[0].message
    assert run_notebooks(bad)["98_测试章"].ok                      # without the probe nothing judges them


def test_counts_name_both_kinds_of_pair(tmp_path):
    path = _executed(tmp_path)
    figures = counts(path, nbformat.read(path, as_version=4))
    assert figures["old_new_pairs"] == 1 and figures["wrong_right_pairs"] == 1


def test_a_part_folder_must_match_the_metadata_and_its_apxml_course(tmp_path):
    folder = tmp_path / "进阶"
    folder.mkdir()
    path = _executed(folder)  # metadata says part 测试, course links point into getting-started-with-jax
    assert "chapter-metadata" in _rules(path)
    nb = nbformat.read(path, as_version=4)
    nb.metadata["course"]["part"] = "进阶"
    nbformat.write(nb, path)
    problems = check_chapter(path, nbformat.read(path, as_version=4))
    assert {p.rule for p in problems} == {"course-section-link"}
    assert "advanced-jax" in problems[0].message
    for cell in nb.cells:
        cell.source = cell.source.replace("getting-started-with-jax", "advanced-jax")
    nbformat.write(nb, path)
    assert _rules(path) == set()


def test_fix_setup_rewrites_only_the_notebooks_it_is_given(tmp_path):
    from coursetools.structure import main

    cells = chapter_cells()
    cells[_index(cells, "# 准备")].source = "# 准备：旧的准备单元格\nimport jaxcourse"
    given, other = _executed(tmp_path, cells, "98_给定.ipynb"), _executed(tmp_path, cells, "97_其他.ipynb")
    before = other.read_text()
    main(["--fix-setup", str(given)])
    assert "setup-cell" not in _rules(given)
    assert other.read_text() == before and "setup-cell" in _rules(other)


def test_try_answers_reports_which_answers_the_selfcheck_accepts(tmp_path):
    from coursetools.selfcheck import try_answers

    path = write_chapter(tmp_path / "99_测试章.ipynb", chapter_cells())
    before = path.read_bytes()
    results = try_answers(path, "9.1", ["def halve(v):\n    return v / 2", "def halve(v):\n    return v * 2"])
    assert [passed for passed, _ in results] == [True, False]
    assert "✅" in results[0][1] and "❌" in results[1][1]
    assert path.read_bytes() == before   # the notebook is untouched
    with pytest.raises(SystemExit, match="no exercise 7.7"):
        try_answers(path, "7.7", [])
