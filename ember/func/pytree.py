"""Nested tuples, lists and dicts of tensors ("pytrees") as torch.func sees them: flatten to
leaves plus a spec, rebuild from leaves, and spread a prefix (``in_dims=(None, 0)``) over a tree.

>>> leaves, spec = tree_flatten({"a": 1, "b": (2, [3])})
>>> leaves
[1, 2, 3]
>>> tree_unflatten([4, 5, 6], spec)
{'a': 4, 'b': (5, [6])}
"""

from __future__ import annotations

from typing import Any


def _children(x) -> tuple[Any, list] | None:
    """``(kind, children)`` for a container, None for a leaf."""
    if isinstance(x, dict):
        return ("dict", type(x), tuple(x)), list(x.values())
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple keeps its class
        return ("namedtuple", type(x)), list(x)
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, type(x)), list(x)
    return None


def tree_flatten(tree) -> tuple[list, Any]:
    """The leaves of ``tree`` in order, and a spec that ``tree_unflatten`` rebuilds it from.

    >>> tree_flatten((1, {"x": 2}))[0]
    [1, 2]
    """
    leaves: list = []

    def walk(x):
        found = _children(x)
        if found is None:
            leaves.append(x)
            return None
        kind, kids = found
        return kind, [walk(k) for k in kids]

    return leaves, walk(tree)


def tree_unflatten(leaves, spec) -> Any:
    """Rebuild the tree ``spec`` describes from ``leaves`` (in ``tree_flatten``'s order).

    >>> tree_unflatten(["a", "b"], tree_flatten([0, (0,)])[1])
    ['a', ('b',)]
    """
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, kids = s
        values = [build(k) for k in kids]
        if kind[0] == "dict":
            return kind[1](zip(kind[2], values))
        if kind[0] == "namedtuple":
            return kind[1](*values)
        return kind[1](values)

    return build(spec)


def spec_text(spec) -> str:
    """A short text form of a spec, for messages: ``(*, {'a': *})``.

    >>> spec_text(tree_flatten((1, {"a": 2}))[1])
    "(*, {'a': *})"
    """
    if spec is None:
        return "*"
    kind, kids = spec
    inner = [spec_text(k) for k in kids]
    if kind[0] == "dict":
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(kind[2], inner)) + "}"
    if kind[0] == "list":
        return "[" + ", ".join(inner) + "]"
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


def broadcast_prefix(prefix, tree) -> list | None:
    """One entry of ``prefix`` per leaf of ``tree``: a non-container entry of ``prefix`` covers
    the whole subtree under it. None when the structures do not match.

    >>> broadcast_prefix((None, 0), ({"w": 1, "b": 2}, 3))
    [None, None, 0]
    """
    found = _children(prefix)
    if found is None:
        return [prefix] * len(tree_flatten(tree)[0])
    tree_found = _children(tree)
    if tree_found is None:
        return None
    (kind, kids), (tree_kind, tree_kids) = found, tree_found
    if kind[0] != tree_kind[0] or len(kids) != len(tree_kids):
        return None
    if kind[0] == "dict" and set(kind[2]) != set(tree_kind[2]):
        return None
    if kind[0] == "dict":
        kids = [prefix[k] for k in tree_kind[2]]
    out: list = []
    for p, t in zip(kids, tree_kids):
        part = broadcast_prefix(p, t)
        if part is None:
            return None
        out += part
    return out


__all__ = ["broadcast_prefix", "spec_text", "tree_flatten", "tree_unflatten"]
