"""Pictures of computational graphs: eager autograd history and ``ember.static`` graphs.

``to_dot`` writes Graphviz's DOT text (no Graphviz needed); ``draw`` renders it to a file
(SVG, PNG or PDF by the path's suffix; ``.dot`` / ``.gv`` write the text) with the ``graphviz``
Python package (``pip install 'ember[viz]'``) and Graphviz's ``dot`` program
(``apt-get install graphviz``). Neither is imported or run by ``import ember``.

>>> import ember
>>> from ember import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
>>> loss = model(ember.randn(5, 4)).sum()
>>> src = ember.viz.to_dot(loss, params=model.named_parameters())
>>> for line in src.splitlines():
...     if "mmBackward" in line or "2.bias" in line:
...         print(line.strip())
n2 [label="AddmmBackward0", fillcolor="#d9d9d9"];
n4 [label="AccumulateGrad\\n2.bias\\nf32[2]", fillcolor="#cfe2f3"];
n8 [label="AddmmBackward0", fillcolor="#d9d9d9"];

The style: ops are boxes (grey: an autograd node or a forward op; rose with rounded corners:
a backward op of a static graph; yellow: a side effect such as ``Assign`` or
a random draw), leaves that require grad and graph state are blue boxes, fed inputs are
yellow ellipses, constants small white ellipses and the tensors drawn for green ellipses. Edges
follow the data and carry its type, ``f32[5,3]`` (``?`` for a size known only at run time).
"""

from __future__ import annotations

from pathlib import Path

from .._errors import EmberError
from .._node import Node as _AutogradNode
from .._tensor import Tensor
from ..static.ir import Graph, Value
from ._dot import STYLES, Dot

__all__ = ["STYLES", "draw", "to_dot", "to_graphviz"]

_RENDERED = ("svg", "png", "pdf", "jpg", "jpeg", "gif")
_TEXT = ("dot", "gv")


def to_dot(obj, params=None, *, forward=None, shapes: bool = True, name: str | None = None) -> str:
    """The DOT source (Graphviz's text format) of a picture of ``obj``'s graph.

    ``obj`` is one of:

    - a Tensor with autograd history (or a ``grad_fn``), or a list of them: the ops recorded
      for it, from its ``grad_fn`` back to the leaves that require grad, each drawn as an
      ``AccumulateGrad`` box with its type;
    - an ``ember.static.Graph``, or a compiled function (its latest trace): the whole graph,
      forward ops, backward ops and side effects in different colors;
    - a symbolic tensor, ``Variable`` or ``Operation`` of a define-and-run graph, or a list of
      them: the part of its graph that computing them runs.

    ``params`` names tensors in the picture: a dict ``{name: tensor}``, ``(name, tensor)`` pairs
    such as ``model.named_parameters()``, or a Module (its named parameters). ``forward``
    (tensors or graph values) says which results belong to the forward pass of a static
    graph; by default they are the losses passed to ``static.gradients``, else the outputs
    (see ``docs/viz.md``). ``shapes=False`` leaves the types off the edges.

    >>> import ember
    >>> x = ember.ones(2, 3, requires_grad=True)
    >>> print(ember.viz.to_dot((x * 2).sum()))  # doctest: +ELLIPSIS
    digraph "ember" {
    ...
      n0 [label="SumBackward0", fillcolor="#d9d9d9"];
      n1 [label="output\\nf32[]", shape="ellipse", fillcolor="#c5e8a5"];
      n0 -> n1;
      n2 [label="MulBackward0", fillcolor="#d9d9d9"];
      n2 -> n0 [label=" f32[2,3]"];
      n3 [label="AccumulateGrad\\nf32[2,3]", fillcolor="#cfe2f3"];
      n3 -> n2 [label=" f32[2,3]"];
    }
    <BLANKLINE>
    """
    kind, graph, items = _parse(obj)
    pairs = _pairs(params)
    names = _names(pairs)
    if kind == "eager":
        dot = Dot(name or "ember")
        from ._eager import draw_eager

        draw_eager(dot, items, names, shapes)
        return dot.source()
    from ._static import draw_static

    fwd = None if forward is None else [_value(f, "forward") for f in _as_list(forward)]
    _name_state(graph, names, pairs)
    dot = Dot(name or graph.name)
    draw_static(dot, graph, items, fwd, names, shapes)
    return dot.source()


def to_graphviz(obj, params=None, *, forward=None, shapes: bool = True, name: str | None = None):
    """The picture as a ``graphviz.Source`` (it shows itself in a Jupyter notebook); the
    arguments are those of ``to_dot``. Needs the ``graphviz`` Python package.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> src = ember.viz.to_graphviz(x.exp().sum())  # doctest: +SKIP
    >>> src  # doctest: +SKIP
    """
    graphviz = _graphviz("to_graphviz")
    return graphviz.Source(to_dot(obj, params, forward=forward, shapes=shapes, name=name))


def draw(
    obj,
    path,
    params=None,
    *,
    forward=None,
    shapes: bool = True,
    name: str | None = None,
) -> Path:
    """Render the picture of ``obj``'s graph (see ``to_dot``) to ``path`` and return the path.

    The format is the suffix: ``.svg``, ``.png``, ``.pdf`` (also ``.jpg``, ``.gif``) need the
    ``graphviz`` Python package and Graphviz's ``dot`` program; ``.dot`` / ``.gv`` write the
    DOT text and need neither.

    >>> import os, tempfile
    >>> import ember
    >>> w = ember.randn(3, 3, requires_grad=True)
    >>> out = ember.viz.draw(w.mm(w).sum(), os.path.join(tempfile.mkdtemp(), "g.dot"))
    >>> out.read_text().startswith('digraph "ember"')
    True
    """
    path = Path(path)
    fmt = path.suffix[1:].lower()
    if fmt not in _RENDERED and fmt not in _TEXT:
        raise ValueError(
            f"draw: cannot tell the format from the path {str(path)!r}: use a suffix among "
            + ", ".join("." + f for f in (*_RENDERED, *_TEXT))
        )
    src = to_dot(obj, params, forward=forward, shapes=shapes, name=name)
    if fmt in _TEXT:
        path.write_text(src)
        return path
    graphviz = _graphviz("draw")
    try:
        data = graphviz.Source(src).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise EmberError(
            f"draw: rendering {path.name} needs Graphviz's `dot` program, which is not on PATH; "
            "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install "
            "graphviz; conda: conda install graphviz), or write the DOT text with a .dot path"
        ) from None
    except graphviz.CalledProcessError as e:
        err = e.stderr.decode(errors="replace").strip() if isinstance(e.stderr, bytes) else e
        raise EmberError(f"draw: Graphviz's dot failed to render {path.name}: {err}") from None
    path.write_bytes(data)
    return path


# -- arguments ------------------------------------------------------------------------------


def _graphviz(who: str):
    try:
        import graphviz
    except ImportError:
        raise ModuleNotFoundError(
            f"ember.viz.{who} needs the graphviz Python package: pip install 'ember[viz]' (or "
            "pip install graphviz), plus Graphviz's dot program (apt-get install graphviz); "
            "ember.viz.to_dot needs neither"
        ) from None
    return graphviz


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _static_value(x):
    """The graph value ``x`` stands for, or None for an eager object."""
    from ..static.define import Operation

    if isinstance(x, Value):
        return x
    if isinstance(x, Operation):
        return x.value
    if isinstance(x, Tensor) and isinstance(x._data, Value):
        return x._data
    return None


def _value(x, what: str) -> Value:
    v = _static_value(x)
    if v is None:
        raise TypeError(
            f"to_dot: {what} must be symbolic tensors or graph values, got {type(x).__name__}"
        )
    return v


def _parse(obj):
    """``("eager", None, roots)`` or ``("static", graph, targets or None)``."""
    from ..static.compile import CompiledFunction

    if isinstance(obj, Graph):
        return "static", obj, None
    if isinstance(obj, CompiledFunction):
        if obj._latest is None:
            raise EmberError(
                f"to_dot: compiled function {obj.__name__} has no graph yet: call it once first"
            )
        return "static", obj.graph, None
    items = _as_list(obj)
    if not items:
        raise ValueError("to_dot: nothing to draw (an empty list)")
    values = [_static_value(x) for x in items]
    if all(v is not None for v in values):
        graphs = {id(v.graph) for v in values}
        if len(graphs) > 1:
            raise EmberError("to_dot: the symbolic tensors belong to different graphs")
        return "static", values[0].graph, values
    for x, v in zip(items, values):
        if v is not None:
            raise TypeError("to_dot: cannot draw symbolic and eager tensors in one picture")
        if not isinstance(x, (Tensor, _AutogradNode)):
            raise TypeError(
                "to_dot: expected a Tensor, a grad_fn, an ember.static Graph, a compiled "
                f"function, or a list of tensors; got {type(x).__name__}"
            )
    return "eager", None, items


def _pairs(params):
    if params is None:
        return []
    if hasattr(params, "named_parameters"):  # a Module
        return list(params.named_parameters())
    if hasattr(params, "items"):
        return list(params.items())
    return list(params)


def _names(pairs: list) -> dict:
    """``id(tensor)`` (and ``id(graph value)`` for symbolic tensors) -> name."""
    names = {}
    for name, t in pairs:
        names[id(t)] = name
        v = _static_value(t)
        if v is not None:
            names[id(v)] = name
    return names


def _name_state(graph: Graph, names: dict, pairs: list) -> None:
    """Name state values whose array is a named parameter's (a compiled function's state)."""
    by_array = {id(t._data): name for name, t in pairs if isinstance(t, Tensor)}
    if not by_array:
        return
    for v in graph.state:
        array = getattr(v.ref, "array", None)
        if array is not None and id(array) in by_array:
            names[id(v)] = by_array[id(array)]
