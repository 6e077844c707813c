"""jaxcourse：课程 notebook 共用的小工具。

导入时只用标准库；需要 JAX / NumPy 的函数在调用时才导入它们，所以在浏览器里的
Pyodide 内核（没有 JAX）里也能 `import jaxcourse`。

- selfcheck：练习自检（✅ / ⏳ / ❌）
- forbid：检查练习的“限制”（with 块里禁止调用某些函数：换掉各处引用，并盯住函数的代码，别名、partial 也躲不过）
- replaced：with 块里把一个库函数换成包装过的版本（数调用次数、放大求解器的结果），notebook 里的别名一起换
- fresh_traces：with 块里 jit 过的答案重新追踪、重新编译（块外已编译的程序不丢），替身、盯住、改参数的检查才看得见它
- rewriting：with 块里函数不换，只改它每次被调用时收到的参数（答案认不出替身的扰动检查）
- in_this_process：with 块里的计算不许交给别的进程（起子进程、事先起好的工作进程干活都算违反；forbid、counting、rewriting 和 profiler 的记录都带着它）
- watching：with 块里学习者的代码一调用某个函数（盯住它的代码对象），就执行一个动作（forbid、counting 背后的机制）
- executions / executions_grow / eager_primitives / eager_ops_within / executed_events：直接调用时编译好的程序被执行了几次
  （随批大小变没有）、逐个执行了哪些运算、是否都在名单里（读 jax.profiler 的记录）
- expect_error / expect_warning：旧写法的预期报错、预期警告，并断言其类型
- all_eqns / call_body / jaxpr_size / primitive_names / host_callbacks / opaque_calls / same_size / loop_free / split_at / around：看 jaxpr（含子 jaxpr）里有什么，自检用它检查练习的限制
- value_part：去掉程序里结果用不到的方程（例如 jvp 顺带算的切向量系数），只看算函数值的那部分
- depends_on：结果是否真的由某个原语算出来（把它的输出改掉再算一遍），识破“调用了但结果没用上”的答案
- entry_ops / all_ops / collectives / ynn_fusion_bodies / where_is_w：读编译后的 HLO 文本（进阶 02、已知问题 1）
- has_upper_bound：jax.export 的导出件有没有给符号维度加上限（进阶 09）
- printed_lines：运行一段代码，等调试回调执行完，返回它打印的各行
- count_compiles：统计一段代码里某个函数被 XLA 编译了几次
- compile_budget：编译预算，超出次数就报错并说明什么重新编译了、为什么
- platform_info / in_browser / run_python：平台探测
- run_jax：在新的子进程里运行必须在 JAX 初始化之前配置的演示（设备数、XLA 标志、x64），读回它 report 的结果
- run_processes：在回环地址上启动 N 个进程运行同一段代码（多进程 jax.distributed 演示），超时或失败时结束全部子进程
- figure / use_cjk_font：画图前选好中文字体，中文标签不会变成方框
- ffi_build：把 ffi_src/ 里的 C++ 源码编译成 XLA FFI 算子的共享库（带缓存；没有编译器时报 CompilerMissing）
"""

import sys as _sys

from . import ffi_build
from .budget import CompileBudgetExceeded, compile_budget
from .checks import ForbiddenCall, expect_error, expect_warning, forbid, selfcheck
from .replacing import counting, fresh_traces, grows_on_host, replaced, rewriting, watching
from .profiling import eager_ops_within, eager_primitives, executed_events, executions, executions_grow
from .capture import printed_lines
from .compiles import count_compiles
from .exports import has_upper_bound
from .hlo import all_ops, collectives, entry_ops, where_is_w, ynn_fusion_bodies
from .jaxprs import (all_eqns, around, call_body, depends_on, host_callbacks, jaxpr_size, loop_free, opaque_calls,
                     primitive_names, same_size, same_traced, split_at, value_part)
from .display import (figure, install_cell_names, install_short_tracebacks, install_traceback_paths,
                      install_warning_format, use_cjk_font)
from .probes import in_browser, platform_info, run_python
from .processes import in_this_process
from .subproc import DemoFailed, DemoResult, run_jax
from .multiproc import ProcessesFailed, run_processes

__all__ = [
    "CompileBudgetExceeded",
    "DemoFailed",
    "DemoResult",
    "all_eqns",
    "all_ops",
    "around",
    "call_body",
    "collectives",
    "compile_budget",
    "count_compiles",
    "counting",
    "depends_on",
    "eager_ops_within",
    "eager_primitives",
    "entry_ops",
    "expect_error",
    "expect_warning",
    "executed_events",
    "executions",
    "executions_grow",
    "figure",
    "forbid",
    "fresh_traces",
    "grows_on_host",
    "has_upper_bound",
    "host_callbacks",
    "ForbiddenCall",
    "in_browser",
    "in_this_process",
    "jaxpr_size",
    "loop_free",
    "opaque_calls",
    "primitive_names",
    "printed_lines",
    "platform_info",
    "ProcessesFailed",
    "run_jax",
    "run_processes",
    "replaced",
    "rewriting",
    "run_python",
    "same_size",
    "same_traced",
    "split_at",
    "value_part",
    "watching",
    "selfcheck",
    "use_cjk_font",
    "where_is_w",
    "ynn_fusion_bodies",
]

install_warning_format()  # 警告和 traceback 里不出现机器路径（保存的输出要能在任何机器上原样发布）
install_traceback_paths()
install_cell_names()
install_short_tracebacks()  # 发布模式：保存的报错只留单元格里的调用和报错本身

if _sys.platform == "emscripten":  # 浏览器里的 Pyodide 内核：把 “没有 JAX” 换成中文说明
    try:
        from . import browser as _browser

        _browser.install()
    except ImportError:
        pass
