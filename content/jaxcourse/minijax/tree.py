"""pytree：把嵌套的元组、列表、字典（以及注册过的类）拆成叶子列表和一个结构（treedef），再装回去。

变换只处理叶子（数组）；结构是追踪缓存键的一部分，这就是为什么 jit 对元组和列表分别追踪。
"""

from __future__ import annotations

_registry = {
    tuple: (lambda t: (list(t), None), lambda _, kids: tuple(kids)),
    list: (lambda l: (list(l), None), lambda _, kids: list(kids)),
    dict: (lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))), lambda keys, kids: dict(zip(keys, kids))),
}


def register_pytree_node(cls, flatten, unflatten):
    """flatten(obj) -> (children, aux); unflatten(aux, children) -> obj (jax.tree_util's contract)."""
    _registry[cls] = (flatten, unflatten)


class PyTreeDef:
    """The structure without the leaves; equal structures hash equal (a jit cache key part)."""

    def __init__(self, kind, aux, children):
        self.kind, self.aux, self.children = kind, aux, tuple(children)

    num_leaves = property(lambda self: 1 if self.kind == "*" else sum(c.num_leaves for c in self.children))

    def _key(self):
        return (self.kind, self.aux, self.children)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash((str(self.kind), self.aux, self.children))

    def _text(self):
        if self.kind == "*":
            return "*"
        if self.kind is None:
            return "None"
        kids = [c._text() for c in self.children]
        if self.kind is tuple:
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if self.kind is list:
            return "[" + ", ".join(kids) + "]"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if self.aux == "namedtuple":
            return f"CustomNode(namedtuple[{self.kind.__name__}], [{', '.join(kids)}])"
        return f"CustomNode({self.kind.__name__}[{self.aux}], [{', '.join(kids)}])"

    def __repr__(self):
        return f"PyTreeDef({self._text()})"


def tree_flatten(tree):
    """(leaves, treedef): leaves left to right, dict keys in sorted order (as in JAX)."""
    if tree is None:
        return [], PyTreeDef(None, None, ())
    kind = type(tree)
    if isinstance(tree, tuple) and hasattr(kind, "_fields") and kind not in _registry:   # namedtuple：自动是节点
        register_pytree_node(kind, lambda t: (list(t), "namedtuple"), lambda _, kids, cls=kind: cls(*kids))
    if kind not in _registry:
        return [tree], PyTreeDef("*", None, ())
    children, aux = _registry[kind][0](tree)
    leaves, defs = [], []
    for c in children:
        l, d = tree_flatten(c)
        leaves += l
        defs.append(d)
    return leaves, PyTreeDef(kind, aux, defs)


def tree_unflatten(treedef, leaves):
    leaves = iter(leaves)

    def build(d):
        if d.kind == "*":
            return next(leaves)
        if d.kind is None:
            return None
        return _registry[d.kind][1](d.aux, [build(c) for c in d.children])
    return build(treedef)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_map(fn, tree, *rest, **options):
    if options:
        from .errors import no_options
        no_options("jax.tree_util.tree_map", options)
    leaves, treedef = tree_flatten(tree)
    others = [treedef_leaves(treedef, r) for r in rest]
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def treedef_leaves(treedef, tree):
    leaves, other = tree_flatten(tree)
    if other != treedef:
        raise ValueError(f"pytree 结构不一致：{treedef} 和 {other}")
    return leaves


# jax.tree 的新名字：jax.tree.map(f, t) 就是 jax.tree_util.tree_map(f, t)
map = tree_map              # noqa: A001
leaves, structure, flatten, unflatten = tree_leaves, tree_structure, tree_flatten, tree_unflatten


def __getattr__(name):      # jax.tree / jax.tree_util 里有、迷你 JAX 里没有的
    if name.startswith("_"):
        raise AttributeError(name)
    from .errors import unsupported
    raise unsupported(f"jax.tree.{name}", "迷你 JAX 的 pytree 函数只有 map、leaves、structure、flatten、unflatten "
                      "（以及 tree_ 开头的同名函数）和 register_pytree_node")
