"""Regenerate a course part's 00_总目录: the chapter table (and 入门's capstone figures).

`tools/build_index.py PART` is the command; the seed's names tools/build_index_入门.py and
tools/build_index_进阶.py call it with their part.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from verify.compare import output_text
from coursemodel.contract import PARTS

from .indexing import ROOT, chapters, link, read_notebook, replace_generated_cells, to_nb, write_or_check

CAPSTONE_ACCURACY = re.compile(r"测试准确率[:\uff1a]\s*([0-9.]+)\s*[(\uff08](\d+)/(\d+)[)\uff09]")
CAPSTONE_COMPILES = re.compile(r"训练循环编译次数[:\uff1a]\s*(\d+)")


@dataclass
class IndexConfig:
    """Where a course's chapters and index page are, and which chapter holds the capstone."""

    folder: Path
    index_name: str = "00_总目录.ipynb"
    capstone_prefix: str | None = None  # e.g. "07_": its saved outputs give the capstone figures
    command: str = ""
    planned: tuple = ()  # (file stem, 核心内容) of chapters not written yet: listed as （整理中）


def saved_text(nb) -> str:
    """All saved stream and text/plain outputs of a notebook, joined."""
    return "\n".join(output_text(cell.get("outputs", []), errors=False) for cell in nb.cells)


def capstone_figures(nb) -> str:
    """'测试准确率 X%(a/b)，训练循环只编译 N 次', read from the capstone chapter's saved outputs."""
    text = saved_text(nb)
    acc, comp = CAPSTONE_ACCURACY.search(text), CAPSTONE_COMPILES.search(text)
    if not acc or not comp:
        raise SystemExit("ERROR the capstone chapter's saved outputs lack `测试准确率: 0.xxxx (a/b)` or "
                         "`训练循环编译次数: N`; run tools/run_all.py on it with --refresh first")
    pct = float(acc.group(1)) * 100
    return f"测试准确率 {pct:.2f}%\uff08{acc.group(2)}/{acc.group(3)}\uff09，训练循环只编译 {comp.group(1)} 次"


def chapter_table(config: IndexConfig) -> str:
    """The markdown chapter table, one row per chapter, from the chapters' metadata and notes."""
    rows = {}
    for stem, topics in config.planned:
        rows[stem[:2]] = f"| {int(stem[:2])} | {stem}\uff08整理中\uff09 | {topics} | — | — |"
    for ch in chapters(config.folder):
        meta = ch.chapter.meta
        specials = meta.get("specials", "")
        if config.capstone_prefix and ch.path.name.startswith(config.capstone_prefix):
            specials += f"；综合项目：{capstone_figures(ch.nb)}"
        notes = f"{ch.chapter.update_notes} 条" if ch.chapter.update_notes else "—"
        number = int(meta.get("chapter", ch.name[:2]))
        rows[f"{number:02d}"] = (f"| {number} | {link(ch.path, None, ch.name)} | "
                                 f"{meta.get('topics', '')} | {specials} | {notes} |")
    head = ["| 章 | Notebook | 核心内容 | 本章专题 | 更新说明 |", "|---|---|---|---|---|"]
    return "\n".join(head + [rows[k] for k in sorted(rows)])


def main(argv=None, part: str | None = None) -> int:
    """Regenerate (or with --check, verify) a part's index page's generated cells."""
    p = argparse.ArgumentParser(description="regenerate the chapter table of a part's 00_总目录")
    if part is None:
        p.add_argument("part", choices=PARTS, help="which part of the course")
    p.add_argument("--check", action="store_true", help="only report whether the page is stale")
    p.add_argument("--folder", type=Path, help=argparse.SUPPRESS)  # tests: a copy of the course folder
    args = p.parse_args(argv)
    config = config_for(part or args.part)
    if args.folder:
        config.folder = args.folder
    index = config.folder / config.index_name
    if not config.folder.is_dir():
        print(f"ERROR {config.folder} does not exist yet: nothing to index", file=sys.stderr)
        return 2
    nb = to_nb(read_notebook(index))
    replace_generated_cells(nb, {"chapter-table": chapter_table(config)})
    return write_or_check(index, nb, args.check, config.command)


#: 进阶 chapters as the outline plans them; a row shows （整理中） until its notebook exists
PLANNED = {
    "进阶": (
        ("01_控制流与变换", "scan、cond/switch、while/fori、控制流与 grad/vmap/jit、掩码、闭包与 staging"),
        ("02_性能优化", "AOT 各阶段、jaxpr 与 HLO、代价与内存分析、profiler、重新编译、异步派发"),
        ("03_分布式计算", "Mesh 与分片、shard_map、集合通信、真实的多进程 JAX、数据并行训练"),
        ("04_进阶自动微分", "jvp/vjp/linearize、海森-向量积、custom_jvp/custom_vjp、隐函数求导"),
        ("05_互操作与自定义算子", "NumPy 与 DLPack、主机回调、C++ FFI 内核、自定义原语"),
        ("06_大规模训练", "Flax NNX、梯度累积、重计算、混合精度、模型并行、Orbax checkpoint"),
        ("07_Pallas内核", "Ref 与 pallas_call、grid 与 BlockSpec、分块矩阵乘、为 TPU lowering"),
        ("08_调试工具链", "jax.debug、checkify、debug_nans/infs、编译日志、key 复用检查"),
        ("09_导出与部署", "jax.export、序列化、形状多态、多平台导出、部署"),
        ("10_随机数与分片", "PRNG 实现、key 的性质、分片下的随机数"),
        ("11_科学计算", "float64、jax.scipy、diffrax、optimistix、lineax、数值稳定"),
    ),
}


def config_for(part: str) -> IndexConfig:
    """Configuration of one course part."""
    return IndexConfig(folder=ROOT / "content" / part, capstone_prefix={"入门": "07_"}.get(part),
                       command=f"tools/build_index.py {part}", planned=PLANNED.get(part, ()))
