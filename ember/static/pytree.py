"""Arguments and results of a compiled function as trees: the leaves (tensors, Python
scalars, other objects), what each leaf's signature is, and the rebuilding of a result from the
arrays a run returns.

>>> import ember
>>> leaves, described = [], []
>>> flatten({"x": ember.ones(2), "n": 3}, "args", leaves, described)
>>> [d[0] for _, d in described]
['dict', 'tensor', 'value']
>>> rebuild(("seq", tuple, [("tensor",), ("const", 1)]), iter([ember.ones(1)._data]))
(tensor([1.]), 1)
"""

from __future__ import annotations

from .._tensor import Tensor
from .symbol import Symbol, TraceError

SCALARS = (bool, int, float, complex, str, bytes, type(None))


def flatten(x, path: str, leaves: list, described: list) -> None:
    """Leaves of an argument (tensors, Python scalars, other objects) and how each signs."""
    if isinstance(x, Tensor):
        if type(x._data) is Symbol:
            raise TraceError(f"argument {path!r} is a symbolic tensor; pass concrete tensors")
        leaves.append(x)
        described.append(
            (path, ("tensor", tuple(x._data.shape), x.dtype.name, str(x.device), x._requires_grad))
        )
    elif isinstance(x, SCALARS):
        leaves.append(x)
        described.append((path, ("value", type(x).__name__, x)))
    elif isinstance(x, (list, tuple)):
        described.append((path, ("seq", type(x).__name__, len(x))))
        for i, e in enumerate(x):
            flatten(e, f"{path}[{i}]", leaves, described)
    elif isinstance(x, dict):
        described.append((path, ("dict", tuple(x))))
        for k, e in x.items():
            flatten(e, f"{path}[{k!r}]", leaves, described)
    else:
        leaves.append(x)
        described.append((path, ("object", type(x).__name__, id(x))))


def tensor_paths(named) -> list:
    """``[(path, tensor)]`` for every tensor inside the named arguments ``[(name, value)]``."""

    out = []

    def walk(x, path):
        if isinstance(x, Tensor):
            out.append((path, x))
        elif isinstance(x, (list, tuple)):
            for i, e in enumerate(x):
                walk(e, f"{path}[{i}]")
        elif isinstance(x, dict):
            for k, e in x.items():
                walk(e, f"{path}[{k!r}]")

    for path, value in named:
        walk(value, path)
    return out


def out_structure(x, outs: list, tracer) -> tuple:
    """The structure of a traced result; its tensors' values go to ``outs`` (``tracer`` captures
    tensors made outside the graph)."""
    if isinstance(x, Tensor):
        d = x._data
        if type(d) is not Symbol:
            d = tracer.capture(x)
        elif d.graph is not tracer.graph:
            raise TraceError("the traced function returned a tensor of another graph")
        outs.append(d)
        return ("tensor",)
    if isinstance(x, (list, tuple)):
        items = [out_structure(e, outs, tracer) for e in x]
        return ("seq", type(x), items)
    if isinstance(x, dict):
        return ("dict", type(x), [(k, out_structure(e, outs, tracer)) for k, e in x.items()])
    if isinstance(x, SCALARS):
        return ("const", x)
    raise TraceError(
        f"a traced function may return tensors, Python numbers, and lists, tuples and dicts of "
        f"them; got {type(x).__name__}"
    )


def rebuild(s, it):
    """The result of structure ``s`` (from ``out_structure``) with the arrays of ``it``."""
    kind = s[0]
    if kind == "tensor":
        arr = next(it)
        return Tensor._make(arr)
    if kind == "const":
        return s[1]
    if kind == "dict":
        return s[1]((k, rebuild(e, it)) for k, e in s[2])
    items = [rebuild(e, it) for e in s[2]]
    return s[1](items) if s[1] in (list, tuple) else s[1](*items)


__all__ = ["SCALARS", "flatten", "out_structure", "rebuild", "tensor_paths"]
