"""jaxcourse.multiproc.run_processes：成功、某个进程失败、卡住超时、端口空闲，且不留子进程。"""

import os
import socket
import time

import pytest

from jaxcourse.multiproc import ProcessesFailed, free_port, run_processes


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # 僵尸也算“不在了”的反面：读 /proc 的状态
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_two_processes_succeed():
    rs = run_processes(
        "import os\nreport('me', [PROCESS_ID, NUM_PROCESSES, int(os.environ['JAXCOURSE_PORT']) == PORT])\n",
        num_processes=2, platform=None)
    assert [r["me"] for r in rs] == [[0, 2, True], [1, 2, True]]
    assert all(r.returncode == 0 for r in rs)


def test_failing_worker_named_and_others_killed():
    code = ("import os, time\nreport('pid', os.getpid())\n"
            "if PROCESS_ID == 1:\n    time.sleep(0.5)\n    raise ValueError('worker boom')\n"
            "time.sleep(60)\n")
    t0 = time.monotonic()
    with pytest.raises(ProcessesFailed) as e:
        run_processes(code, num_processes=3, platform=None, timeout=30)
    assert time.monotonic() - t0 < 20
    msg = str(e.value)
    assert "进程 1" in msg and "退出码 1" in msg and "worker boom" in msg
    assert e.value.failed == 1
    pids = [r["pid"] for r in e.value.results]
    assert not any(alive(p) for p in pids)
    assert e.value.results[0].returncode < 0 and e.value.results[2].returncode < 0


def test_hanging_worker_times_out_and_nothing_left():
    code = ("import os, subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "report('pids', [os.getpid(), child.pid])\n"
            "if PROCESS_ID == 0:\n    sys.exit(0)\n"
            "time.sleep(60)\n")
    with pytest.raises(ProcessesFailed) as e:
        run_processes(code, num_processes=2, platform=None, timeout=3)
    assert e.value.timed_out and "超过 3 秒" in str(e.value)
    pids = [p for r in e.value.results for p in r["pids"]]
    time.sleep(0.3)
    # 工作进程本身被回收；工作进程派生的孙进程随进程组一起结束（孤儿由 init 回收）
    assert not any(alive(p) for p in pids)


def test_check_false_returns_results():
    rs = run_processes("import sys\nreport('x', PROCESS_ID)\nsys.exit(3 if PROCESS_ID else 0)\n",
                       num_processes=2, platform=None, check=False)
    assert rs[1].returncode == 3 and rs[1]["x"] == 1


def test_free_port_is_bindable():
    p = free_port()
    assert 1024 < p < 65536
    with socket.socket() as s:
        s.bind(("127.0.0.1", p))


def test_real_two_process_jax():
    pytest.importorskip("jax")
    rs = run_processes("""
        import jax, jax.numpy as jnp
        jax.distributed.initialize(COORDINATOR, NUM_PROCESSES, PROCESS_ID)
        report("counts", [jax.process_index(), jax.device_count(), jax.local_device_count()])
    """, num_processes=2, devices=2, timeout=120)
    assert [r["counts"] for r in rs] == [[0, 4, 2], [1, 4, 2]]
