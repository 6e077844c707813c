"""ffi_build：在运行时把 ffi_src/ 里的 C++ 源文件编译成共享库（进阶 05 的 XLA FFI 算子）。

- 编译器：环境变量 CXX，否则 PATH 上的 c++ / g++ / clang++；参数 -std=c++17 -O2 -shared -fPIC -I <jax.ffi.include_dir()>。
- 缓存：结果放在 $XDG_CACHE_HOME（默认 ~/.cache）/jaxcourse/ffi/<hash>/，hash 覆盖源文件内容、编译器路径和版本、
  参数和 jax 版本；同样的输入第二次调用不再编译。
- 原子写入：先编译到同目录的临时文件，成功后再 rename，编译被打断也不会留下残缺的 .so。
- 出错：没有编译器 → CompilerMissing（说明缺什么、怎么装）；编译失败 → CompileFailed（带编译器输出的末尾）。

导入时只用标准库（浏览器里也能 import jaxcourse）；jax 只在 build() 里、需要头文件目录时才导入。
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SRC_DIR = Path(__file__).resolve().parent / "ffi_src"
FLAGS = ("-std=c++17", "-O2", "-shared", "-fPIC")

#: 本进程里真正调用编译器的次数（测试用它确认缓存命中时没有重新编译）
compile_count = 0


class FFIBuildError(RuntimeError):
    """ffi_build 的错误基类。"""


class CompilerMissing(FFIBuildError):
    """找不到 C++ 编译器。"""


class CompileFailed(FFIBuildError):
    """编译器报错；消息里带编译器输出的末尾。"""


def find_compiler() -> str:
    """CXX 环境变量优先，否则在 PATH 上找 c++ / g++ / clang++；找不到就抛 CompilerMissing。"""
    cxx = os.environ.get("CXX")
    if cxx:
        path = shutil.which(cxx)
        if path is None:
            raise CompilerMissing(
                f"找不到 C++ 编译器：环境变量 CXX={cxx!r} 指向的程序不存在或不可执行。"
                "请改正 CXX，或者删掉它并安装 g++（Debian/Ubuntu：sudo apt-get install g++；"
                "macOS：xcode-select --install）。")
        return path
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    raise CompilerMissing(
        "找不到 C++ 编译器：PATH 上没有 c++、g++ 或 clang++，也没有设置环境变量 CXX。"
        "编译 XLA FFI 算子需要一个支持 C++17 的编译器：Debian/Ubuntu 上 sudo apt-get install g++，"
        "macOS 上 xcode-select --install；装好后重新运行。")


def _compiler_version(cxx: str) -> str:
    try:
        r = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise CompilerMissing(f"C++ 编译器 {cxx} 无法运行：{e}") from e
    return r.stdout.strip() or r.stderr.strip()


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jaxcourse" / "ffi"


def build(name: str = "scale_shift", *, source: str | None = None, include_dir: str | None = None,
          verbose: bool = False) -> Path:
    """编译 ffi_src/<name>.cc（或直接给出的源码文本 source），返回共享库的路径；命中缓存时不编译。

    include_dir 默认是 jax.ffi.include_dir()。
    """
    global compile_count
    text = source if source is not None else (SRC_DIR / f"{name}.cc").read_text(encoding="utf-8")
    if include_dir is None:
        import jax  # 只有真的要编译时才需要 JAX 的头文件

        include_dir = jax.ffi.include_dir()
        jax_version = jax.__version__
    else:
        jax_version = "custom-include"
    cxx = find_compiler()
    version = _compiler_version(cxx)
    key = "\0".join([text, cxx, version, " ".join(FLAGS), str(include_dir), jax_version])
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    out_dir = _cache_root() / digest
    target = out_dir / f"lib{name}.so"
    if target.exists():
        if verbose:
            print("ffi_build：命中缓存，不重新编译")
        return target
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FFIBuildError(f"无法创建缓存目录 {out_dir}：{e}。请把环境变量 XDG_CACHE_HOME 设成一个可写的目录再运行。") from e
    # 源文件和输出都用本次调用独有的临时名字：两个进程同时编译同一个库时互不覆盖对方正在读写的文件
    fd, src_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".cc", dir=out_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    src = Path(src_name)
    fd, tmp_name = tempfile.mkstemp(prefix=f".lib{name}.", suffix=".so.tmp", dir=out_dir)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        cmd = [cxx, *FLAGS, "-I", str(include_dir), str(src), "-o", str(tmp)]
        compile_count += 1
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except OSError as e:
            raise CompilerMissing(f"C++ 编译器 {cxx} 无法运行：{e}") from e
        except subprocess.TimeoutExpired as e:
            raise CompileFailed(f"编译 {name}.cc 超过 {e.timeout:.0f} 秒仍未结束，已放弃（{Path(cxx).name}）") from e
        if r.returncode != 0:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-15:])
            raise CompileFailed(f"编译 {name}.cc 失败（{Path(cxx).name} 返回 {r.returncode}），编译器输出的末尾：\n{tail}")
        os.replace(tmp, target)                      # 原子：要么没有 .so，要么是完整的 .so
    finally:
        for leftover in (tmp, src):
            if leftover.exists():
                leftover.unlink()
    if verbose:
        print("ffi_build：编译完成")
    return target
