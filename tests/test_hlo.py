"""jaxcourse.hlo reads the optimized HLO that the pinned XLA writes (known issue 1's structural evidence)."""

from __future__ import annotations

import platform

import pytest

from jaxcourse import all_ops, entry_ops, where_is_w, ynn_fusion_bodies

FAKE = """HloModule m

%fused_computation (param_0: f32[4]) -> f32[] {
  %param_0 = f32[4]{0} parameter(0)
  %constant.1 = f32[3,3]{1,0} constant({...})
  ROOT %reduce = f32[] reduce(%param_0, %constant.2), dimensions={0}
}

ENTRY %main (x: f32[4]) -> f32[] {
  %x = f32[4]{0} parameter(0)
  ROOT %ynn_fusion = f32[] fusion(%x), kind=kCustom, calls=%fused_computation, backend_config={"fusion_config":{"kind":"__ynn_fusion"}}
}
"""


def test_reads_ops_and_the_fused_body_of_a_hand_written_module():
    assert entry_ops(FAKE) == ["parameter", "fusion"]
    assert {"parameter", "constant", "reduce", "fusion"} <= all_ops(FAKE)
    assert len(ynn_fusion_bodies(FAKE)) == 1 and "%constant.1" in ynn_fusion_bodies(FAKE)[0]
    assert where_is_w(FAKE, 3) == "融合内部的常量"


def test_reads_ops_whose_result_is_a_tuple():
    # XLA combines gradient all-reduces into one tuple-typed instruction; its name must still be read.
    text = FAKE.replace(
        "  ROOT %ynn_fusion",
        "  %all-reduce.1 = (f32[4]{0}, (f32[2]{0}, s32[])) all-reduce(%x, %y), channel_id=1, to_apply=%add\n"
        "  %t = (f32[], /*index=1*/f32[]) tuple(%a, %b)\n"
        "  ROOT %ynn_fusion")
    assert entry_ops(text) == ["parameter", "all-reduce", "tuple", "fusion"]
    assert {"all-reduce", "tuple"} <= all_ops(text)
    assert where_is_w(FAKE, 5) == "不在融合里"
    assert where_is_w(FAKE.replace("__ynn_fusion", "__other"), 3) is None


@pytest.mark.skipif((platform.system(), platform.machine()) != ("Linux", "x86_64"),
                    reason="the YNNPACK fusion is what the pinned XLA does on Linux x86_64")
def test_closure_constant_lands_inside_the_ynn_fusion_and_an_argument_does_not():
    import jax
    import jax.numpy as jnp

    W = jax.random.normal(jax.random.key(1), (128, 128))     # not a splat: XLA would fold a constant-filled W
    X = jax.random.normal(jax.random.key(2), (50, 128))
    closure = jax.jit(jax.vmap(lambda x: jnp.sum(W @ x))).lower(X).compile().as_text()
    arg = jax.jit(jax.vmap(lambda W, x: jnp.sum(W @ x), in_axes=(None, 0))).lower(W, X).compile().as_text()
    assert where_is_w(closure, 128) == "融合内部的常量"
    assert where_is_w(arg, 128) == "融合计算的参数"
    assert entry_ops(arg)[-1] == "fusion"
