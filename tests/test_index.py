"""Generated navigation pages are never stale, their figures follow the chapters, links resolve."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

from coursetools.index_page import CAPSTONE_ACCURACY

FOLDER = ROOT / "content" / "入门"
BUILDERS = [("build_index.py", "入门"), ("build_index.py", "进阶"), ("build_core_path.py",), ("build_keyword_index.py",),
            ("build_glossary.py",)]


def _tool(name, *args):
    return subprocess.run([sys.executable, str(ROOT / "tools" / name), *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("builder", BUILDERS)
def test_generated_page_is_not_stale(builder):
    proc = _tool(*builder, "--check")
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def course_copy(tmp_path):
    dest = tmp_path / "入门"
    shutil.copytree(FOLDER, dest)
    return dest


def _table(folder):
    nb = json.loads((folder / "00_总目录.ipynb").read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("course", {}).get("generated") == "chapter-table")
    return "".join(cell["source"])


def _add_update_note(path):
    nb = json.loads(path.read_text())
    i = next(i for i, c in enumerate(nb["cells"]) if "".join(c["source"]).startswith("## 本章更新说明"))
    cell = nb["cells"][i + 1] if nb["cells"][i + 1]["cell_type"] == "markdown" else nb["cells"][i]
    cell["source"] = "".join(cell["source"]).rstrip("\n") + "\n999. 测试用的新说明。\n"
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1))


def test_when_update_notes_change_then_index_is_stale_until_rebuilt(course_copy):
    chapter = sorted(course_copy.glob("0[1-7]_*.ipynb"))[0]
    before = re.search(rf"{chapter.stem}\]\([^)]*\) \|[^|]*\|[^|]*\| (\d+) 条", _table(course_copy)).group(1)
    _add_update_note(chapter)
    stale = _tool("build_index.py", "入门", "--check", "--folder", str(course_copy))
    assert stale.returncode == 1 and "tools/build_index.py 入门" in stale.stderr
    assert _tool("build_index.py", "入门", "--folder", str(course_copy)).returncode == 0
    after = re.search(rf"{chapter.stem}\]\([^)]*\) \|[^|]*\|[^|]*\| (\d+) 条", _table(course_copy)).group(1)
    assert int(after) == int(before) + 1


def test_when_capstone_result_changes_then_index_follows(course_copy):
    capstone = next(course_copy.glob("07_*.ipynb"))
    text = capstone.read_text()
    m = CAPSTONE_ACCURACY.search(text)
    assert m, "chapter 07 must print `测试准确率\uff1a 0.xxxx\uff08a/b\uff09`"
    changed = m.group(0).replace(m.group(1), "0.5000").replace(f"{m.group(2)}/", "180/")
    capstone.write_text(text.replace(m.group(0), changed))
    assert _tool("build_index.py", "入门", "--check", "--folder", str(course_copy)).returncode == 1
    assert _tool("build_index.py", "入门", "--folder", str(course_copy)).returncode == 0
    assert "测试准确率 50.00%\uff08180/" in _table(course_copy)


def test_every_internal_link_resolves():
    proc = _tool("check_links.py", "--external")
    assert proc.returncode == 0, proc.stdout


def test_keyword_index_lists_every_jax_api_used_in_code_of_both_parts():
    page = (FOLDER / "关键词索引.ipynb").read_text()
    used = set()
    chapters = sorted((ROOT / "content").glob("*/[0-9][0-9]_*.ipynb"))
    assert {p.parent.name for p in chapters} == {"入门", "进阶"}
    for nb_path in (p for p in chapters if not p.name.startswith("00_")):
        for cell in json.loads(nb_path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                for line in "".join(cell["source"]).splitlines():
                    used |= set(re.findall(r"(?<![\w.])jax\.[a-z]\w*", line.split("#")[0]))
    missing = sorted(api for api in used if f"`{api}" not in page)
    assert used and not missing, missing
    assert "../进阶/01_" in page   # 进阶 places are linked from the shared page


def test_core_path_covers_both_parts_进阶_in_its_learning_route_order():
    from coursetools.core_path import ROUTE

    page = json.loads((FOLDER / "核心学习路径.ipynb").read_text())
    text = "\n".join("".join(c["source"]) for c in page["cells"])
    assert "\n## 入门" in "\n" + text and "\n## 进阶" in "\n" + text
    advanced = text.split("## 进阶", 1)[1]
    order = [m for m in re.findall(r"^### (\d\d)_", advanced, re.M)]
    assert order and order == sorted(order, key=ROUTE["进阶"].index)
    assert "](../进阶/01_" in advanced
