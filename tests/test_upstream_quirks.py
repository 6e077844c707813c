"""Upstream internals the course once asserted in chapter 05, kept here for maintainers (not for learners).

Each test pins a detail of JAX 0.12.0.1's implementation. After a JAX upgrade a failure here is news,
not a course bug: read the changelog, then update or delete the test (and mention it in the upgrade PR).
"""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp


def test_sharding_type_error_is_not_exported_from_jax_errors():
    """Chapters catch ShardingTypeError by class name because jax.errors does not export it."""
    assert not hasattr(jax.errors, "ShardingTypeError")


def test_the_switch_back_to_the_old_pmap_is_gone():
    assert not hasattr(jax.config, "jax_pmap_shmap_merge")


def test_pmap_is_a_jit_around_a_shard_map_without_vma_checks():
    text = jax.make_jaxpr(jax.pmap(lambda x: jnp.sin(x) * 2))(jnp.ones(1)).pretty_print(use_color=False)
    assert "name=_fun" in text and "shard_map[" in text and "check_vma=False" in text and "squeeze" in text


def test_pmap_prints_a_stray_source_location_before_indivisible_error():
    """jax/_src/pjit.py prints the caller's `file:line:col (<module>)` right before IndivisibleError."""
    code = ("import jax, jax.numpy as jnp\n"
            "try:\n    jax.pmap(lambda r: r.sum())(jnp.ones((9, 3)))\n"
            "except Exception as e:\n    print('RAISED', type(e).__name__)\n")
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300).stdout
    lines = out.strip().splitlines()
    assert lines[-1] == "RAISED IndivisibleError"
    assert len(lines) == 2 and lines[0].strip().endswith("(<module>)"), out


def test_jacobian_is_a_separate_alias_of_jacrev():
    """Chapter 07 once asserted this; api.py documents jax.jacobian as an alias of jax.jacrev (a distinct object)."""
    assert jax.jacobian is not jax.jacrev
    f = lambda x: jnp.sin(x) * x
    assert jnp.allclose(jax.jacobian(f)(jnp.arange(3.0)), jax.jacrev(f)(jnp.arange(3.0)))
