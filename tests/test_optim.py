"""jaxcourse.optim 的手写优化器与 Optax 逐步一致(第 06 章讲它,第 07 章拿它和 Optax 对照)。"""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
optax = pytest.importorskip("optax")

from jaxcourse import optim  # noqa: E402

STEPS = 50


def _problem():
    """一个小的最小二乘问题,参数是嵌套 PyTree(字典里有矩阵和向量),梯度每步都不同。"""
    kx, kw, kb = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(kx, (32, 3))
    y = x @ jnp.array([[1.0], [-2.0], [0.5]]) + 0.3
    params = {"w": jax.random.normal(kw, (3, 1)), "b": {"bias": jax.random.normal(kb, (1,))}}

    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"]["bias"] - y) ** 2)

    return params, loss


def _run(opt, params, loss, apply):
    state = opt.init(params)
    trajectory = []
    for _ in range(STEPS):
        grads = jax.grad(loss)(params)
        updates, state = opt.update(grads, state)
        params = apply(params, updates)
        trajectory.append(params)
    return trajectory, state


def _assert_same_trajectory(mine, theirs):
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for la, lb in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
            assert la.dtype == lb.dtype
            assert jnp.allclose(la, lb, rtol=1e-5, atol=1e-6), f"第 {step + 1} 步参数不同:{la} vs {lb}"


@pytest.mark.parametrize("lr,momentum", [(0.05, 0.9), (0.1, 0.5)])
def test_sgd_momentum_matches_optax_sgd_over_50_steps(lr, momentum):
    params, loss = _problem()
    mine, _ = _run(optim.sgd_momentum(lr, momentum), params, loss, optim.apply_updates)
    theirs, _ = _run(optax.sgd(lr, momentum=momentum), params, loss, optax.apply_updates)
    _assert_same_trajectory(mine, theirs)
    # 确实在学:损失明显下降(防止两边都“什么也不做”也算一致)
    assert loss(mine[-1]) < 0.1 * loss(params)


@pytest.mark.parametrize("kwargs", [{}, {"b1": 0.8, "b2": 0.99, "eps": 1e-6}])
def test_adam_matches_optax_adam_over_50_steps(kwargs):
    params, loss = _problem()
    mine, state = _run(optim.adam(0.05, **kwargs), params, loss, optim.apply_updates)
    theirs, _ = _run(optax.adam(0.05, **kwargs), params, loss, optax.apply_updates)
    _assert_same_trajectory(mine, theirs)
    assert int(state.count) == STEPS
    assert loss(mine[-1]) < 0.5 * loss(params)


def test_adam_first_step_moves_every_parameter_by_learning_rate():
    # 偏差校正的直接后果:第 1 步的更新量约为 −lr·sign(g),与梯度大小无关
    params = {"a": jnp.array([3.0, -0.001]), "b": jnp.array(100.0)}
    grads = {"a": jnp.array([40.0, -0.002]), "b": jnp.array(-7.0)}
    opt = optim.adam(0.1)
    updates, _ = opt.update(grads, opt.init(params))
    for u, g in zip(jax.tree.leaves(updates), jax.tree.leaves(grads)):
        assert jnp.allclose(u, -0.1 * jnp.sign(g), rtol=1e-3)


def test_optimizers_are_pure_and_jittable():
    params, loss = _problem()
    for opt in (optim.sgd_momentum(0.1), optim.adam(0.1)):
        state = opt.init(params)
        grads = jax.grad(loss)(params)
        eager = opt.update(grads, state)
        jitted = jax.jit(opt.update)(grads, state)
        again = opt.update(grads, state)  # 同样的输入 → 同样的输出:旧状态没有被改
        for a, b, c in zip(jax.tree.leaves(eager), jax.tree.leaves(jitted), jax.tree.leaves(again)):
            assert jnp.allclose(a, b, rtol=1e-6, atol=1e-7)
            assert jnp.array_equal(a, c)
        # 状态的结构在 update 前后不变(lax.scan / jit 的 carry 需要这一点)
        assert jax.tree.structure(eager[1]) == jax.tree.structure(state)


def test_optim_is_not_imported_by_jaxcourse():
    import subprocess
    import sys

    code = "import sys, jaxcourse; assert 'jaxcourse.optim' not in sys.modules; assert 'jax' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
