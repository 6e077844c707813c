"""Another CPU without owning one: run the course with XLA's CPU code generator held to an older ISA.

The saved outputs were made on one CPU; a reader's CPU has other vector units, so XLA emits other
code (no FMA below AVX2, narrower vectors below AVX-512) and float results differ in the last bits.
`XLA_FLAGS=--xla_cpu_max_isa=AVX` makes this machine's XLA generate code as for such a CPU. A verify
under it compares against the saved outputs with the usual rules: every cell whose printed number
depends on rounding beyond the tolerance shows up, without another machine.
"""

from __future__ import annotations

import os
import subprocess
import sys

# The names XLA's cpu_features.cc knows (an unknown one is ignored with a log line, so refuse it here).
ISAS = ("SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_VNNI", "AVX512_BF16", "AMX", "AMX_FP16")


def flags_with_isa(flags: str, isa: str) -> str:
    """XLA_FLAGS with --xla_cpu_max_isa set to isa (any earlier value of it replaced)."""
    if isa not in ISAS:
        raise ValueError(f"unknown ISA {isa!r}: use one of {', '.join(ISAS)}")
    kept = [f for f in flags.split() if not f.startswith("--xla_cpu_max_isa=")]
    return " ".join(kept + [f"--xla_cpu_max_isa={isa}"])


# What a host must have for `--xla_cpu_max_isa=ISA` to hold XLA below it (/proc/cpuinfo flags).
_ABOVE = {"SSE4_2": "avx", "AVX": "avx2", "AVX2": "avx512f", "AVX512": "avx512_vnni"}


def host_exceeds(isa: str, cpuinfo: str | None = None) -> bool | None:
    """True when this CPU has instructions newer than isa (so capping XLA at isa changes its code),
    False when it has not, None when it cannot tell (no /proc/cpuinfo: not Linux)."""
    if cpuinfo is None:
        try:
            cpuinfo = open("/proc/cpuinfo", encoding="utf-8").read()
        except OSError:
            return None
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
    above = _ABOVE.get(isa)
    return None if above is None or not flags else above in flags


_PROBE = """
import sys, jax, jax.numpy as jnp, numpy as np
k1, k2 = jax.random.split(jax.random.key(0))
a, b = jax.random.normal(k1, (256, 256)), jax.random.normal(k2, (256, 256))
sys.stdout.buffer.write(np.asarray(jax.jit(lambda a, b: jnp.tanh(a @ b / 16))(a, b)).tobytes())
"""


def _probe_bits(xla_flags: str) -> bytes:
    env = {**os.environ, "XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, timeout=120)
    if proc.returncode:
        raise RuntimeError(f"the ISA probe failed: {proc.stderr.decode(errors='replace')[-500:]}")
    return proc.stdout


def probe(isa: str) -> str:
    """One line: does the lowered ISA change a jitted matmul+tanh's bits on this machine?

    When it does not (this CPU has nothing newer than `isa`), the run under it proves no more than
    a normal one: the line says so.
    """
    import numpy as np

    base = np.frombuffer(_probe_bits(os.environ.get("XLA_FLAGS", "")), dtype=np.float32)
    lowered = np.frombuffer(_probe_bits(flags_with_isa(os.environ.get("XLA_FLAGS", ""), isa)), dtype=np.float32)
    moved = int(np.count_nonzero(base != lowered))
    if not moved:
        return (f"--xla_cpu_max_isa={isa} changes no bit of a jitted 256×256 matmul+tanh on this machine: "
                "its CPU is no newer than that ISA, so this run checks no other CPU than a plain one")
    delta = float(np.abs(base - lowered).max())
    return (f"--xla_cpu_max_isa={isa} changes {moved} of {base.size} values of a jitted 256×256 matmul+tanh "
            f"on this machine (max |Δ| {delta:.1e}): the run sees another CPU's rounding")
