"""数一数程序打印了什么：jax.debug.print 之类的调试回调异步执行，要等它们都执行完再读标准输出。"""

import contextlib
import io


def printed_lines(run) -> list[str]:
    """运行 run()，等它的结果算完、所有调试回调执行完（effects_barrier），返回这期间打印到标准输出的各行。"""
    import jax

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.block_until_ready(run())
        jax.effects_barrier()
    return buf.getvalue().splitlines()
