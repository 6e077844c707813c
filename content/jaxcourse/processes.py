"""检查期间，计算要留在这个进程里：限制说的是“不许用某个函数”“不许在主机上循环”，答案把同样的事交给子进程、
进程池或一个事先起好的工作进程去做，进程里的检查工具（forbid、counting、jax.profiler）就都看不见了。

两道关：
- 起进程：一个审计钩子（sys.addaudithook，整个进程只装一次，平时什么也不做）在块里拦下 subprocess、
  os.posix_spawn、os.fork、os.system、os.exec* 这些事件；
- 别的进程替它干活：块开始和结束时各记一次这个内核的所有后代进程（Linux 的 /proc）用掉的 CPU 时间和上下文
  切换次数，加上已经收回的子进程的 CPU 时间（os.times）。块里有哪个后代醒过来干了活（事先起好、在管道上等着
  的工作进程也算），就是违反限制。

看不到的：脱离了这个内核的进程（两次 fork、setsid 之后父进程变成 1 号）、别的机器。没有 /proc 的系统上只有第一道关。
"""

from __future__ import annotations

import os
import sys
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


def _proc_fields(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2:].split()     # 进程名可能含空格和括号：从最后一个 ')' 之后切


def _descendants() -> dict[int, tuple[int, str]] | None:
    """这个进程的所有后代：pid → (用掉的 CPU 时钟数 + 所有线程的上下文切换次数, 命令行)。没有 /proc 时是 None。"""
    if not os.path.isdir("/proc/self/task"):
        return None
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _proc_fields(int(name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = {}, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        fields = _proc_fields(pid)
        if fields is None:
            continue
        work = sum(int(x) for x in fields[11:15])          # utime stime cutime cstime
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/status") as f:
                    work += sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        found[pid] = (work, cmd)
    return found


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
    before, reaped = _descendants(), _reaped_cpu()
    _refusers.append(refuse)
    try:
        yield
    finally:
        _refusers.pop()
    after = _descendants()
    worked = [f"pid {pid}（{cmd[:80]}）" for pid, (work, cmd) in (after or {}).items()
              if before is not None and (pid not in before or work != before[pid][0])]
    if worked:
        refuse("别的进程在检查期间干了活：" + "、".join(worked))
    if _reaped_cpu() > reaped:
        refuse("检查期间有子进程运行过、并已结束")
