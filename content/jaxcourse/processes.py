"""检查期间，计算要留在这个进程里：限制说的是“不许用某个函数”“不许在主机上循环”，答案把同样的事交给子进程、
进程池或一个事先起好的工作进程去做，进程里的检查工具（forbid、counting、jax.profiler）就都看不见了。

两道关：
- 起进程：一个审计钩子（sys.addaudithook，整个进程只装一次，平时什么也不做）在块里拦下 subprocess、
  os.posix_spawn、os.fork、os.system、os.exec* 这些事件；
- 别的进程替它干活：块开始和结束时各记一次这个内核的所有后代进程（Linux 的 /proc）主线程的 CPU 时间和上下文
  切换次数，加上已经收回的子进程的 CPU 时间（os.times）。块里有哪个后代的主线程醒过来干了活（事先起好、在管道上
  等着的工作进程也算），就是违反限制。

看不到的：脱离了这个内核的进程（两次 fork、setsid 之后父进程变成 1 号）、别的机器。没有 /proc 的系统上只有第一道关。
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

# 起新进程的审计事件（https://docs.python.org/3/library/audit_events.html）。multiprocessing 的 spawn/forkserver
# 直接调用 _posixsubprocess.fork_exec，不产生事件：由第二道关发现
_SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.posix_spawnp", "os.spawn", "os.exec", "os.fork",
                           "os.forkpty", "os.system", "os.startfile", "pty.spawn"})

_refusers: list = []     # 正在生效的块（由外到内）各自的 refuse(说明)
_hooked: list[bool] = []


def _audit(event: str, args) -> None:
    if _refusers and event in _SPAWN_EVENTS:
        _refusers[-1](f"另起进程（{event}）")


def _proc_fields(path: str) -> list[bytes] | None:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2:].split()     # 进程名可能含空格和括号：从最后一个 ')' 之后切


def _descendants() -> dict[int, tuple[int, str]] | None:
    """这个进程的所有后代：pid → (主线程的上下文切换次数 + 主线程的 CPU 时钟数 + 收回的子进程的 CPU 时钟数, 命令行)。
    只看主线程：导入过 JAX 的进程闲着时，它的后台线程也会偶尔醒来；替人干活的工作进程是主线程在收发、在算。
    没有 /proc 时是 None。"""
    if not os.path.isdir("/proc/self/task"):
        return None
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _proc_fields(f"/proc/{name}/stat")
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = {}, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        process, main = _proc_fields(f"/proc/{pid}/stat"), _proc_fields(f"/proc/{pid}/task/{pid}/stat")
        if process is None or main is None:
            continue
        work = int(main[11]) + int(main[12]) + int(process[13]) + int(process[14])   # utime stime; cutime cstime
        try:
            with open(f"/proc/{pid}/task/{pid}/status") as f:
                work += sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        found[pid] = (work, cmd)
    return found


def _settled() -> dict[int, tuple[int, str]] | None:
    """_descendants()，等它们安静下来（最多 1 秒）：刚替上一个检查回完话的工作进程，主线程还要一会儿才回到等待。"""
    last = _descendants()
    for _ in range(20):
        if not last:
            return last
        time.sleep(0.05)
        now = _descendants()
        if {p: w for p, (w, _) in now.items()} == {p: w for p, (w, _) in last.items()}:
            return now
        last = now
    return last


def _reaped_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


@contextmanager
def in_this_process(refuse=None):
    """with 块里的计算都要在这个进程里做。违反时调用 refuse(说明)（forbid 传入它自己的，好让 selfcheck 把那条
    检查显示为 ❌）；不给 refuse 就抛 ForbiddenCall。块结束时发现别的进程替它干了活，也调用 refuse。"""
    from .checks import ForbiddenCall

    def default(what):
        raise ForbiddenCall(f"练习的限制不允许把计算交给别的进程：{what}")

    refuse = refuse or default
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked.append(True)
    before, reaped = _settled(), _reaped_cpu()
    _refusers.append(refuse)
    try:
        yield
    finally:
        _refusers.pop()
    after = _descendants()
    worked = [f"pid {pid}：{cmd[:80]}" for pid, (work, cmd) in (after or {}).items()
              if before is not None and (pid not in before or work != before[pid][0])]
    if worked:
        refuse("别的进程替它干活（" + "；".join(worked) + "）")
    if _reaped_cpu() > reaped:
        refuse("检查期间运行完、已经结束的子进程")
