"""jaxcourse.printed_lines waits for asynchronous debug callbacks before reading what was printed."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcourse import printed_lines


def test_counts_debug_prints_of_a_vmapped_jit_and_plain_prints():
    f = jax.jit(jax.vmap(lambda x: (jax.debug.print("x={x}", x=x), x * 2)[1]))
    lines = printed_lines(lambda: f(jnp.arange(3.0)))
    assert sorted(lines) == ["x=0.0", "x=1.0", "x=2.0"]
    assert printed_lines(lambda: print("a\nb")) == ["a", "b"]
    assert printed_lines(lambda: None) == []
