"""在新的子进程里运行必须在 JAX 初始化之前配置的演示，并读回它报告的结果。

XLA 标志、CPU 设备数、`jax.distributed`、x64 默认值都只能在 `import jax` 之前设置；
notebook 的内核早已导入过 JAX，所以这类演示交给 `run_jax`：它起一个新的 Python 进程，
把配置写进环境变量或放在代码最前面，代码里用 `report(名字, 值)` 报告结果。报告的值以
带标记的一行 JSON 写到 stdout（`@@jaxcourse <名字> <JSON>`），notebook 只解析这些行，
其余输出（比如 gloo 的连接日志）一概不管。

    r = jaxcourse.run_jax('''
        import jax
        report("devices", jax.device_count())
    ''', devices=4)
    assert r["devices"] == 4
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

from .probes import run_python

TAG = "@@jaxcourse"

#: 放在演示代码前面：定义 report；值先转成普通的 Python 数（JAX / NumPy 数组转成列表）
PRELUDE = f'''\
def report(name, value):
    import json, sys
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError("report 的名字必须是不含空白的非空字符串（例如 'loss_0'），收到 " + repr(name))
    if hasattr(value, "tolist"):
        value = value.tolist()
    print("{TAG}", name, json.dumps(value, ensure_ascii=False, default=str), flush=True)
'''


class DemoFailed(RuntimeError):
    """子进程里的演示没有正常结束（退出码不是 0），或者没有报告要读的结果。"""


@dataclass
class DemoResult:
    """子进程演示的结果：`r[名字]` 读 `report` 报告的值（同一个名字报告多次时取最后一次）。"""

    returncode: int
    stdout: str
    stderr: str
    reports: dict = field(default_factory=dict)
    history: list = field(default_factory=list)  # 每次报告的名字和值，按报告的顺序

    def __getitem__(self, name):
        if name not in self.reports:
            known = "、".join(self.reports) or "（没有）"
            raise DemoFailed(f"子进程没有报告 {name!r}；它报告了：{known}。\nstderr 的最后几行：\n"
                             + tail(self.stderr))
        return self.reports[name]

    def __contains__(self, name) -> bool:
        return name in self.reports

    def all(self, name) -> list:
        """名字为 name 的全部报告值，按报告的顺序。"""
        return [v for n, v in self.history if n == name]

    def untagged(self) -> list[str]:
        """stdout 里不带标记的行（日志之类），原样返回。"""
        return [line for line in self.stdout.splitlines() if not line.startswith(TAG + " ")]


def tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def parse_reports(stdout: str) -> list[tuple[str, object]]:
    """stdout 里带标记的行 → [(名字, 值), …]。"""
    out = []
    for line in stdout.splitlines():
        if line.startswith(TAG + " "):
            _, name, payload = line.split(" ", 2)
            out.append((name, json.loads(payload)))
    return out


def jax_env(devices: int | None = None, xla_flags: str | list[str] | None = None, x64: bool | None = None,
            platform: str | None = "cpu", env: dict | None = None) -> dict:
    """子进程的环境变量：CPU 设备数、XLA 标志、x64 默认值、平台。"""
    flags = [xla_flags] if isinstance(xla_flags, str) else list(xla_flags or [])
    out = {}
    if devices is not None:
        out["JAX_NUM_CPU_DEVICES"] = str(devices)
    if flags:
        out["XLA_FLAGS"] = " ".join(flags)
    if x64 is not None:
        out["JAX_ENABLE_X64"] = "1" if x64 else "0"
    if platform:
        out["JAX_PLATFORMS"] = platform
    out.update(env or {})
    return out


def run_jax(code: str, *args: str, devices: int | None = None, xla_flags: str | list[str] | None = None,
            x64: bool | None = None, platform: str | None = "cpu", env: dict | None = None,
            timeout: float = 300, check: bool = True, stdin: str | None = None) -> DemoResult:
    """在新的子进程里运行 code，返回它用 `report` 报告的结果。

    devices：CPU 设备数（JAX_NUM_CPU_DEVICES）；xla_flags：XLA_FLAGS；x64：JAX_ENABLE_X64；
    platform：JAX_PLATFORMS（默认 "cpu"，None 表示不设置）；env：其他环境变量；args：子进程的 sys.argv[1:]；
    stdin：喂给子进程标准输入的文本（例如驱动 jax.debug.breakpoint 的命令）。
    check=True 时子进程失败就抛出 DemoFailed，附上 stderr 的最后几行；要演示报错时传 check=False，
    再看 returncode 和 stderr。
    """
    source = PRELUDE + textwrap.dedent(code)
    proc = run_python(source, *args, env=jax_env(devices, xla_flags, x64, platform, env), timeout=timeout,
                      stdin=stdin)
    history = parse_reports(proc.stdout)
    result = DemoResult(proc.returncode, proc.stdout, proc.stderr, dict(history), history)
    if check and proc.returncode != 0:
        raise DemoFailed(f"子进程演示失败（退出码 {proc.returncode}）。stderr 的最后几行：\n" + tail(proc.stderr))
    return result
