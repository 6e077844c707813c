#!/usr/bin/env python3
"""Run 进阶 07's Pallas kernels compiled for a real TPU and print what they do (one JSON line per finding).

Not part of CI (CI has no accelerator) and not run by the course: the chapter quotes these figures as
"measured on TPU v5e" with the JAX version printed here. Plain script on purpose: the TPU host has its own
JAX (0.10.2 when this was written) and no package index, so it cannot use the course's environment.

Usage on a TPU host:  python3 tools/tpu_pallas_07.py [--halt]
--halt runs the pl.debug_check probe, which halts the TPU core: run it last, in its own process.
"""

from __future__ import annotations

import functools
import json
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def report(name, **fields):
    print(json.dumps({"probe": name, **fields}, ensure_ascii=False, default=str), flush=True)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def probe(fn):
    """Run one probe; an exception is a finding too, so report it and go on."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - every failure is reported, none is hidden
        report(fn.__name__, error=first_line(exc), tail=traceback.format_exc().splitlines()[-1][:300])


f32 = functools.partial(jax.ShapeDtypeStruct, dtype=jnp.float32)


def matmul_kernel(a_ref, b_ref, o_ref, *, precision=None):
    @pl.when(pl.program_id(2) == 0)
    def _init():
        o_ref[...] = jnp.zeros_like(o_ref)
    o_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32, precision=precision)


def tiled_matmul(a, b, bm, bk, bn, precision=None):
    m, k = a.shape
    _, n = b.shape
    return pl.pallas_call(
        functools.partial(matmul_kernel, precision=precision), out_shape=f32((m, n)),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)))(a, b)


def inputs(m, k, n):
    ka, kb = jax.random.split(jax.random.key(0))
    return jax.random.normal(ka, (m, k), jnp.float32), jax.random.normal(kb, (k, n), jnp.float32)


def environment():
    dev = jax.devices()[0]
    report("environment", jax=jax.__version__, jaxlib=jax.lib.__version__ if hasattr(jax.lib, "__version__") else "?",
           platform=dev.platform, device_kind=dev.device_kind, n_devices=jax.device_count(),
           python=sys.version.split()[0])


def matmul_precision():
    """256×512×256 with 128 blocks: in-kernel default precision vs HIGHEST, against a HIGHEST jnp.dot."""
    A, B = inputs(256, 512, 256)
    ref = jnp.dot(A, B, precision=lax.Precision.HIGHEST)
    ref64 = np.asarray(A, np.float64) @ np.asarray(B, np.float64)
    out = {}
    for name, prec in (("default", None), ("highest", lax.Precision.HIGHEST)):
        C = jax.jit(functools.partial(tiled_matmul, bm=128, bk=128, bn=128, precision=prec))(A, B)
        out[name] = {"max_abs_vs_jnp_highest": float(jnp.max(jnp.abs(C - ref))),
                     "max_abs_vs_float64": float(np.max(np.abs(np.asarray(C, np.float64) - ref64))),
                     "allclose_rtol1e-5_atol1e-4": bool(np.allclose(C, ref, rtol=1e-5, atol=1e-4))}
    xla_default = jnp.dot(A, B)
    out["jnp_dot_default_vs_highest"] = float(jnp.max(jnp.abs(xla_default - ref)))
    out["max_abs_of_result"] = float(jnp.max(jnp.abs(ref)))
    report("matmul_precision", shape="256x512x256", block="128x128x128", **out)


def small_blocks_lower():
    """The chapter's 64×64 product with 32×32 blocks (CPU interpret shapes), compiled for TPU."""
    A, B = inputs(64, 64, 64)
    for blk in (32, 64):
        try:
            C = jax.jit(functools.partial(tiled_matmul, bm=blk, bk=blk, bn=blk, precision=lax.Precision.HIGHEST))(A, B)
            report("small_blocks_lower", block=blk, ok=True,
                   max_abs=float(jnp.max(jnp.abs(C - jnp.dot(A, B, precision=lax.Precision.HIGHEST)))))
        except Exception as exc:  # noqa: BLE001
            report("small_blocks_lower", block=blk, ok=False, error=first_line(exc))


def partial_block():
    """A grid that does not divide the array: what the last block reads, and the unmasked sum."""
    rows, n, blk = 8, 200, 128                      # 2 blocks of 128 columns, the second holds 72 real ones
    x = jnp.arange(rows * n, dtype=jnp.float32).reshape(rows, n) + 1.0

    def dump(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    seen = pl.pallas_call(dump, out_shape=f32((rows, 2 * blk)), grid=(2,),
                          in_specs=[pl.BlockSpec((rows, blk), lambda i: (0, i))],
                          out_specs=pl.BlockSpec((rows, blk), lambda i: (0, i)))(x)
    tail = np.asarray(seen)[:, n:]                  # the 56 columns past the end of x, as the kernel read them
    report("partial_block_read", n_pad_cols=int(tail.shape[1]), any_nan=bool(np.isnan(tail).any()),
           all_zero=bool((tail == 0).all()), sample_row0=tail[0, :6].tolist(),
           equals_next_row_values=bool(np.array_equal(tail[0, :6], np.asarray(x)[1, :6])))

    def block_sum(x_ref, o_ref):
        o_ref[...] = jnp.full(o_ref.shape, jnp.sum(x_ref[...]))

    def masked_sum(x_ref, o_ref):
        col = pl.program_id(0) * blk + lax.broadcasted_iota(jnp.int32, (rows, blk), 1)
        o_ref[...] = jnp.full(o_ref.shape, jnp.sum(jnp.where(col < n, x_ref[...], 0.0)))

    spec = pl.BlockSpec((rows, blk), lambda i: (0, i))
    outs = {}
    for name, kern in (("unmasked", block_sum), ("masked", masked_sum)):
        s = pl.pallas_call(kern, out_shape=f32((rows, n)), grid=(2,), in_specs=[spec], out_specs=spec)(x)
        outs[name] = float(np.asarray(s)[0, -1])
    want = float(np.asarray(x)[:, blk:].sum())
    report("partial_block_sum", want=want, unmasked=outs["unmasked"], masked=outs["masked"],
           unmasked_is_nan=bool(np.isnan(outs["unmasked"])), unmasked_ok=outs["unmasked"] == want,
           masked_ok=outs["masked"] == want)


def scratch_accumulator():
    """VMEM scratch accumulator + dimension_semantics (parallel, parallel, arbitrary)."""
    A, B = inputs(256, 512, 256)
    bm = bk = bn = 128
    nk = 512 // bk

    def kernel(a_ref, b_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32,
                                precision=lax.Precision.HIGHEST)

        @pl.when(pl.program_id(2) == nk - 1)
        def _():
            o_ref[...] = acc_ref[...]

    params_cls = getattr(pltpu, "CompilerParams", None) or getattr(pltpu, "TPUCompilerParams")
    call = pl.pallas_call(
        kernel, out_shape=f32((256, 256)), grid=(2, 2, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)), pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=params_cls(dimension_semantics=("parallel", "parallel", "arbitrary")))
    C = jax.jit(call)(A, B)
    ref = jnp.dot(A, B, precision=lax.Precision.HIGHEST)
    text = jax.jit(call).lower(A, B).as_text()
    report("scratch_accumulator", params_class=params_cls.__name__, max_abs=float(jnp.max(jnp.abs(C - ref))),
           allclose=bool(np.allclose(C, ref, rtol=1e-5, atol=1e-4)),
           semantics_in_lowering=[s for s in ("parallel", "arbitrary") if s in text])


def matmul_speed():
    """1024³ float32: Pallas tiled matmul vs jnp.dot (median of 20 runs each, after warm-up)."""
    import time
    A, B = inputs(1024, 1024, 1024)
    fns = {"pallas_128": jax.jit(functools.partial(tiled_matmul, bm=128, bk=128, bn=128)),
           "pallas_256x512": jax.jit(functools.partial(tiled_matmul, bm=256, bk=512, bn=256)),
           "jnp_dot": jax.jit(jnp.dot)}
    times = {}
    for name, fn in fns.items():
        fn(A, B).block_until_ready()
        ts = []
        for _ in range(20):
            t0 = time.perf_counter()
            fn(A, B).block_until_ready()
            ts.append(time.perf_counter() - t0)
        times[name] = sorted(ts)[len(ts) // 2] * 1e3
    report("matmul_speed_ms", **{k: round(v, 4) for k, v in times.items()})


def debug_check_halts():
    """A failing pl.debug_check with checks enabled, then an unrelated program in the same process."""
    def sqrt_kernel(x_ref, o_ref):
        pl.debug_check(jnp.all(x_ref[...] >= 0), "negative input")
        o_ref[...] = jnp.sqrt(x_ref[...])

    x_neg = -jnp.ones((8, 128), jnp.float32)
    with pl.enable_debug_checks(True):
        try:
            out = pl.pallas_call(sqrt_kernel, out_shape=f32((8, 128)))(x_neg)
            out.block_until_ready()
            report("debug_check_fail", raised=False, out_has_nan=bool(jnp.isnan(out).any()))
        except Exception as exc:  # noqa: BLE001
            report("debug_check_fail", raised=True, error=first_line(exc))
    try:
        y = (jnp.ones(4) + 1).block_until_ready()
        report("after_debug_check", ok=True, value=np.asarray(y).tolist())
    except Exception as exc:  # noqa: BLE001
        report("after_debug_check", ok=False, error=first_line(exc))


def main() -> None:
    environment()
    if "--halt" in sys.argv:
        probe(debug_check_halts)
        return
    for fn in (matmul_precision, small_blocks_lower, partial_block, scratch_accumulator, matmul_speed):
        probe(fn)


if __name__ == "__main__":
    main()
