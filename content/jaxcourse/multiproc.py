"""在本机回环地址上启动 N 个进程运行同一段代码（多进程 JAX 演示用），读回每个进程 report 的结果。

每个进程拿到 `PROCESS_ID`、`NUM_PROCESSES`、`PORT`、`COORDINATOR`（"127.0.0.1:端口"）四个变量
（也在环境变量 JAXCOURSE_PROCESS_ID / JAXCOURSE_NUM_PROCESSES / JAXCOURSE_PORT 里），以及 subproc.py 的 `report`：

    rs = jaxcourse.run_processes('''
        import jax
        jax.distributed.initialize(COORDINATOR, NUM_PROCESSES, PROCESS_ID)
        report("n", jax.device_count())
    ''', num_processes=2, devices=2)
    assert [r["n"] for r in rs] == [4, 4]

启动器保证：端口由操作系统挑一个空闲的；超时强制结束；不论成功、某个进程失败还是卡住，
返回前都结束并回收全部子进程（每个子进程在自己的进程组里，整组结束，不留孤儿也不留僵尸）；
失败时报告是哪个进程、退出码和它 stderr 的最后几行。导入时只用标准库。
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

from .probes import child_env
from .subproc import PRELUDE, DemoFailed, DemoResult, jax_env, parse_reports, tail


class ProcessesFailed(DemoFailed):
    """多进程演示里有进程失败或超时；results 是每个进程的 DemoResult（被结束的进程也有）。"""

    def __init__(self, message: str, results: list, failed: int | None = None, timed_out: bool = False):
        super().__init__(message)
        self.results = results
        self.failed = failed
        self.timed_out = timed_out


def free_port() -> int:
    """让操作系统在 127.0.0.1 上挑一个当前空闲的 TCP 端口。"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _header(i: int, n: int, port: int) -> str:
    return (f"PROCESS_ID = {i}\nNUM_PROCESSES = {n}\nPORT = {port}\n"
            f"COORDINATOR = '127.0.0.1:{port}'\n")


def _kill_group(proc: subprocess.Popen) -> None:
    """结束子进程所在的整个进程组（它自己和它派生的进程）。

    组长已经退出时组里可能还有它派生的进程，所以照样向整组发信号；组已空时 killpg 报 ProcessLookupError。
    组号就是组长的 pid；Linux 在组里还有进程时不会把这个号码分给别的进程。
    """
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass


def run_processes(code: str, num_processes: int = 2, *, devices: int | None = None,
                  xla_flags: str | list[str] | None = None, x64: bool | None = None,
                  platform: str | None = "cpu", env: dict | None = None, port: int | None = None,
                  timeout: float = 120, check: bool = True, python: str | None = None) -> list[DemoResult]:
    """启动 num_processes 个进程运行 code，返回按 PROCESS_ID 排好的 DemoResult 列表。

    devices / xla_flags / x64 / platform / env 与 run_jax 相同（devices 是每个进程的 CPU 设备数）。
    check=True 时：某个进程退出码不为 0 → 立刻结束其余进程，抛出 ProcessesFailed（写明进程号、退出码、
    stderr 尾部）；超过 timeout 秒 → 结束全部进程，抛出 ProcessesFailed(timed_out=True)。
    check=False 时同样结束剩下的进程，但不抛异常，返回各进程的结果（被结束的进程 returncode 为负数）。
    """
    if port is None:
        port = free_port()
    body = textwrap.dedent(code)
    base_env = child_env(jax_env(devices, xla_flags, x64, platform, env))
    procs: list[subprocess.Popen] = []
    files = []
    tmpdir = tempfile.TemporaryDirectory(prefix="jaxcourse-mp-")
    failed = None
    timed_out = False
    try:
        for i in range(num_processes):
            out = open(os.path.join(tmpdir.name, f"{i}.out"), "w+")
            err = open(os.path.join(tmpdir.name, f"{i}.err"), "w+")
            files.append((out, err))
            penv = {**base_env, "JAXCOURSE_PROCESS_ID": str(i), "JAXCOURSE_NUM_PROCESSES": str(num_processes),
                    "JAXCOURSE_PORT": str(port)}
            source = PRELUDE + _header(i, num_processes, port) + body
            procs.append(subprocess.Popen([python or sys.executable, "-c", source], env=penv,
                                          stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                          start_new_session=True))
        deadline = time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in procs]
            bad = [i for i, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                failed = bad[0]
                break
            if all(c == 0 for c in codes):
                break
            if time.monotonic() > deadline:
                timed_out = True
                break
            time.sleep(0.02)
    finally:
        for p in procs:
            _kill_group(p)
        for p in procs:
            try:
                p.wait(timeout=10)  # 回收：不留僵尸
            except subprocess.TimeoutExpired:
                pass
    results = []
    for p, (out, err) in zip(procs, files):
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        out.close()
        err.close()
        history = parse_reports(stdout)
        results.append(DemoResult(p.returncode, stdout, stderr, dict(history), history))
    tmpdir.cleanup()
    if check and failed is not None:
        r = results[failed]
        raise ProcessesFailed(f"进程 {failed}（共 {num_processes} 个）失败，退出码 {r.returncode}；"
                              f"其余进程已结束。它 stderr 的最后几行：\n" + tail(r.stderr), results, failed=failed)
    if check and timed_out:
        running = [i for i, p in enumerate(procs) if p.returncode is not None and p.returncode < 0]
        raise ProcessesFailed(f"多进程演示超过 {timeout:g} 秒没有结束，已结束全部进程"
                              f"（被强制结束的进程：{running}）。", results, timed_out=True)
    return results
