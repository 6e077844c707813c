"""jaxcourse.ffi_build：编译进阶 05 的 XLA FFI 算子（缓存、原子写入、清楚的报错）。"""

import ctypes
import shutil

import pytest

from jaxcourse import ffi_build

HAVE_CXX = any(shutil.which(n) for n in ("c++", "g++", "clang++"))
needs_cxx = pytest.mark.skipif(not HAVE_CXX, reason="这台机器没有 C++ 编译器")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """每个测试一个空的缓存目录；不受外面的 CXX 影响。"""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CXX", raising=False)
    return tmp_path / "cache" / "jaxcourse" / "ffi"


def _leftovers(root):
    return sorted(p.name for p in root.rglob("*") if p.is_file() and (p.suffix == ".tmp" or p.name.endswith(".so")))


@needs_cxx
def test_build_loads_and_second_call_hits_cache(cache):
    before = ffi_build.compile_count
    so = ffi_build.build("scale_shift")
    assert so.is_file() and str(so).startswith(str(cache))
    lib = ctypes.cdll.LoadLibrary(str(so))
    assert hasattr(lib, "ScaleShift")                 # XLA_FFI_DEFINE_HANDLER_SYMBOL 导出的 C 符号
    mtime = so.stat().st_mtime_ns
    assert ffi_build.build("scale_shift") == so         # 第二次：命中缓存
    assert ffi_build.compile_count == before + 1         # 只编译了一次
    assert so.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in so.parent.iterdir()) == ["libscale_shift.so"]   # 没有留下临时文件


@needs_cxx
def test_source_change_gives_new_library(cache, tmp_path):
    a = ffi_build.build("t", source="extern \"C\" int f() { return 1; }\n", include_dir=str(tmp_path))
    b = ffi_build.build("t", source="extern \"C\" int f() { return 2; }\n", include_dir=str(tmp_path))
    assert a != b and a.is_file() and b.is_file()
    assert ctypes.cdll.LoadLibrary(str(b)).f() == 2


def test_cxx_pointing_nowhere_is_a_clear_error(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(ffi_build.CompilerMissing, match="CXX") as info:
        ffi_build.build("scale_shift", include_dir=str(tmp_path))
    assert "g++" in str(info.value)                      # 说明怎么装


def test_no_compiler_on_path_is_a_clear_error(cache, tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ffi_build.CompilerMissing, match="PATH") as info:
        ffi_build.build("scale_shift", include_dir=str(tmp_path))
    assert "apt-get install g++" in str(info.value)
    assert isinstance(info.value, ffi_build.FFIBuildError)


@needs_cxx
def test_compile_error_shows_compiler_output_and_leaves_nothing(cache, tmp_path):
    with pytest.raises(ffi_build.CompileFailed) as info:
        ffi_build.build("broken", source="int main( { this is not C++ }\n", include_dir=str(tmp_path))
    msg = str(info.value)
    assert "broken.cc" in msg and "error" in msg        # 编译器输出的末尾在消息里
    assert _leftovers(cache) == []                       # 没有半成品 .so，也没有临时文件
    assert [p for p in cache.rglob("*") if p.is_file()] == []   # 临时源文件也删掉了


def test_unwritable_cache_dir_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")                              # 缓存根是一个普通文件：目录建不起来
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.delenv("CXX", raising=False)
    if not HAVE_CXX:
        pytest.skip("这台机器没有 C++ 编译器")
    with pytest.raises(ffi_build.FFIBuildError, match="XDG_CACHE_HOME"):
        ffi_build.build("t", source="int f() { return 1; }\n", include_dir=str(tmp_path))
