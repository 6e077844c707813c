"""手写优化器：动量 SGD 与 Adam，写成作用在 PyTree 上的纯函数。

语义与 Optax 一致（`optax.sgd(lr, momentum)`、`optax.adam(lr)`），方便第 07 章逐项对照：

    opt = adam(1e-3)
    state = opt.init(params)                     # 状态本身也是 PyTree
    updates, state = opt.update(grads, state)    # 纯函数：返回新状态，不改旧状态
    params = apply_updates(params, updates)      # 更新量是“加到”参数上的

本模块不在 `jaxcourse/__init__.py` 里导入（`import jaxcourse` 必须只用标准库），
用法是 `from jaxcourse import optim`。
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

__all__ = [
    "AdamState",
    "MomentumState",
    "Optimizer",
    "adam",
    "apply_updates",
    "sgd_momentum",
]


class Optimizer(NamedTuple):
    """一对纯函数：`init(params) -> state`，`update(grads, state) -> (updates, new_state)`。"""

    init: Callable
    update: Callable


class MomentumState(NamedTuple):
    """动量 SGD 的状态：速度 v，结构与参数相同。"""

    velocity: Any


class AdamState(NamedTuple):
    """Adam 的状态：步数 count、一阶矩 mu、二阶矩 nu（mu、nu 结构与参数相同）。"""

    count: jax.Array
    mu: Any
    nu: Any


def sgd_momentum(learning_rate: float, momentum: float = 0.9) -> Optimizer:
    """动量 SGD:v ← g + momentum·v，更新量 = −learning_rate·v（与 optax.sgd(lr, momentum) 相同）。"""

    def init(params):
        # 速度从 0 开始；zeros_like 保留每片叶子的形状和 dtype
        return MomentumState(velocity=jax.tree.map(jnp.zeros_like, params))

    def update(grads, state):
        velocity = jax.tree.map(lambda g, v: g + momentum * v, grads, state.velocity)
        updates = jax.tree.map(lambda v: -learning_rate * v, velocity)
        return updates, MomentumState(velocity=velocity)

    return Optimizer(init, update)


def adam(learning_rate: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    """Adam：指数滑动平均的一阶、二阶矩，做偏差校正后更新（与 optax.adam 相同）。

    m ← b1·m + (1−b1)·g,  v ← b2·v + (1−b2)·g²,  t ← t + 1
    m̂ = m / (1−b1^t),  v̂ = v / (1−b2^t)，更新量 = −learning_rate · m̂ / (√v̂ + eps)
    """

    def init(params):
        zeros = lambda p: jnp.zeros_like(p)  # noqa: E731
        # 步数放进状态里（而不是 Python 变量），这样 update 仍是纯函数、可以 jit
        return AdamState(count=jnp.zeros([], jnp.int32),
                         mu=jax.tree.map(zeros, params),
                         nu=jax.tree.map(zeros, params))

    def update(grads, state):
        mu = jax.tree.map(lambda g, m: b1 * m + (1 - b1) * g, grads, state.mu)
        nu = jax.tree.map(lambda g, v: b2 * v + (1 - b2) * g * g, grads, state.nu)
        count = state.count + 1
        t = count.astype(jnp.float32)
        # 偏差校正：m、v 从 0 起步，前几步偏小，除以（1 − b^t）补回来
        mu_hat = jax.tree.map(lambda m: m / (1 - b1 ** t), mu)
        nu_hat = jax.tree.map(lambda v: v / (1 - b2 ** t), nu)
        updates = jax.tree.map(lambda m, v: -learning_rate * m / (jnp.sqrt(v) + eps), mu_hat, nu_hat)
        return updates, AdamState(count=count, mu=mu, nu=nu)

    return Optimizer(init, update)


def apply_updates(params, updates):
    """参数 + 更新量，逐叶相加；结果转回参数原来的 dtype（与 optax.apply_updates 相同）。"""
    return jax.tree.map(lambda p, u: (p + u).astype(p.dtype), params, updates)
