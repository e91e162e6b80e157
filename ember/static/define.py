"""Define-and-run: placeholders, Variables, groups and symbolic gradients.

Ops applied to a placeholder or a Variable build nodes of a graph instead of running; a
``Session`` runs the graph. Placeholders and Variables made outside ``with graph.as_default():``
go into the thread's default graph, and from then on ops on them build into it (ops on
ordinary tensors still run eagerly) until ``reset_default_graph()``.

>>> import numpy as np, ember
>>> from ember import static
>>> g = static.Graph()
>>> with g.as_default():
...     x = static.placeholder((None, 2))
...     w = static.Variable(ember.ones(2, 1))
...     y = x @ w
...     (gw,) = static.gradients(y.sum(), [w])
...     with static.Session() as sess:
...         _ = sess.run(static.global_variables_initializer())
...         sess.run([y, gw], {x: np.ones((3, 2), np.float32)})
[array([[2.],
       [2.],
       [2.]], dtype=float32), array([[3.],
       [3.]], dtype=float32)]
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from .._config import state
from .._errors import DTypeError, EmberError, ShapeError
from .._tensor import Tensor, _init
from . import ir as _ir
from .dims import Dim
from .ir import Assign, Group, Value, type_str
from .symbol import Symbol, TraceError, _CudaTag, device_tag
from .trace import Tracer


class Graph(_ir.Graph):
    """A graph ember code builds into: its values are ``Symbol``s, so the Tensors that hold
    them go through every public function; ``as_default`` makes it the graph ops on
    placeholders and Variables build into."""

    value_type = Symbol

    def as_default(self):
        """Make ops on placeholders and Variables build into this graph inside a ``with``.

        >>> import ember
        >>> from ember import static
        >>> g = static.Graph()
        >>> with g.as_default():
        ...     x = static.placeholder((2,))
        ...     y = x * 2
        >>> len(g.nodes)
        1
        """
        return _as_default(self)


class _Defaults(threading.local):
    def __init__(self) -> None:
        self.graph = None


_defaults = _Defaults()


def _builder(graph: Graph) -> Tracer:
    b = getattr(graph, "_builder", None)
    if b is None:
        b = graph._builder = Tracer(graph, define=True)
    return b


@contextlib.contextmanager
def _as_default(graph: Graph):
    previous = state.tracer
    if previous is not None and not getattr(previous, "define", False):
        raise TraceError("Graph.as_default() inside a function being traced by ember.compile")
    state.tracer = _builder(graph)
    try:
        yield graph
    finally:
        state.tracer = previous


def get_default_graph() -> Graph:
    """The graph placeholders and Variables go into now: the one of the innermost
    ``as_default`` block, else the thread's default graph (made on first use).

    >>> from ember import static
    >>> static.get_default_graph() is static.get_default_graph()
    True
    """
    tr = state.tracer
    if tr is not None and getattr(tr, "define", False):
        return tr.graph
    if _defaults.graph is None:
        _defaults.graph = Graph("default")
    return _defaults.graph


def reset_default_graph() -> None:
    """Forget the thread's default graph; ops on ordinary tensors stop passing through it.

    >>> from ember import static
    >>> static.reset_default_graph()
    """
    g = _defaults.graph
    if g is not None and state.tracer is getattr(g, "_builder", None):
        state.tracer = None
    _defaults.graph = None


def _building_graph() -> Graph:
    tr = state.tracer
    if tr is not None and not getattr(tr, "define", False):
        raise TraceError(
            "placeholders and Variables belong to define-and-run graphs; inside a function "
            "traced by ember.compile use ordinary tensors"
        )
    g = get_default_graph()
    if tr is None:
        state.tracer = _builder(g)  # the default graph: ops on symbolic tensors build into it
    return g


def _unique(graph: Graph, name: str | None, base: str) -> str:
    used = getattr(graph, "_names", None)
    if used is None:
        used = graph._names = set()
    stem = name or base
    out, k = stem, 0
    while out in used:
        k += 1
        out = f"{stem}_{k}"
    used.add(out)
    return out


def placeholder(shape, dtype=_dt.float32, name: str | None = None, device=None) -> Tensor:
    """A graph input fed by ``Session.run``'s ``feed_dict``; ``None`` marks a dimension of any
    size. Floating placeholders can be differentiated against with ``gradients``. With
    ``device='cuda'`` feeds are copied to the GPU (as TensorFlow's are), where the graph's
    Variables made from cuda tensors live too.

    >>> from ember import static
    >>> g = static.Graph()
    >>> with g.as_default():
    ...     x = static.placeholder((None, 3), name="x")
    >>> x.shape
    ember.Size([x.shape[0], 3])
    """
    g = _building_graph()
    dt = _dt.to_dtype(dtype)
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for s in shape:
        if s is not None and (not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 0):
            raise ShapeError(f"placeholder: bad dimension {s!r} in shape {shape}")
    v = g.add_input(shape, dt.np, _unique(g, name, "Placeholder"))
    v.device = _device_tag(device)
    v.shape = tuple(Dim.of(v, k) if s is None else s for k, s in enumerate(v.shape))
    return Tensor._make(v, dt.is_floating_point)


class Operation:
    """Something to run for its effect (``group``, ``initializer``): ``Session.run`` gives None."""

    __slots__ = ("value", "name")

    def __init__(self, value: Value, name: str) -> None:
        self.value = value
        self.name = name

    @property
    def graph(self) -> Graph:
        return self.value.graph

    def __repr__(self) -> str:
        return f"<ember.static.Operation {self.name!r}>"


class Variable(Tensor):
    """Graph state: a value kept by each ``Session`` between runs, set by its ``initializer``
    (or ``global_variables_initializer()``) and changed by ``assign`` / ``assign_add`` /
    ``assign_sub``, which return the new value. Reads in a run see the value from before
    any assignment in that run. Use it in ops like any tensor.

    >>> import ember
    >>> from ember import static
    >>> g = static.Graph()
    >>> with g.as_default():
    ...     v = static.Variable(ember.zeros(2), name="v")
    ...     inc = v.assign_add(ember.ones(2))
    ...     with static.Session() as s:
    ...         _ = s.run(v.initializer)
    ...         before, after = s.run([v, inc])
    ...         before, after, s.run(v)
    (array([0., 0.], dtype=float32), array([1., 1.], dtype=float32), array([1., 1.], dtype=float32))
    """

    __slots__ = ("initializer", "initial_value", "trainable")
    __deepcopy__ = None  # copied through ``__reduce__``: a plain tensor's copy has no slots

    def __init__(
        self, initial_value, name: str | None = None, dtype=None, trainable: bool = True
    ) -> None:
        g = _building_graph()
        init = _as_value(
            g, initial_value, _dt.to_dtype(dtype) if dtype is not None else None, "Variable"
        )
        v = g.add_state(init.shape, init.dtype, None, _unique(g, name, "Variable"))
        v.ref = self
        v.device = init.device
        floating = v.dtype.kind == "f" or v.dtype == _dt.bfloat16.np
        _init(self, v, bool(trainable) and floating)
        self.trainable = bool(trainable)
        self.initial_value = Tensor._make(init)
        out = g.add_node(Assign(), (v, init), init.shape, init.dtype)
        self.initializer = Operation(out, f"{v.name}/Assign")

    @property
    def name(self) -> str:
        return self._data.name

    @property
    def graph(self) -> Graph:
        return self._data.graph

    def __repr__(self) -> str:
        return f"<ember.static.Variable {self.name!r} {type_str(self._data)}>"

    def value(self) -> Tensor:
        """The variable's value (a read: the value from before this run's assignments)."""
        return self

    read_value = value

    def assign(self, value) -> Tensor:
        """Store ``value`` (same shape and dtype; numbers and arrays are converted) when the run
        ends; returns the new value."""
        var = self._data
        g = var.graph
        v = _as_value(g, value, _dt.from_numpy_dtype(var.dtype), f"{var.name}.assign")
        if v.shape != var.shape and not _fits(var.shape, v.shape):
            raise ShapeError(
                f"{var.name}.assign: value of shape {v.shape} does not match the variable's "
                f"shape {var.shape}"
            )
        if v.dtype != var.dtype:
            raise DTypeError(
                f"{var.name}.assign: value of dtype {_dt.from_numpy_dtype(v.dtype)} does not "
                f"match the variable's dtype {_dt.from_numpy_dtype(var.dtype)}"
            )
        out = g.add_node(Assign(), (var, v), var.shape, var.dtype)
        out.device = var.device
        return Tensor._make(out)

    def assign_add(self, delta) -> Tensor:
        """``assign(self + delta)``; returns the new value."""
        return self.assign(self + delta)

    def assign_sub(self, delta) -> Tensor:
        """``assign(self - delta)``; returns the new value."""
        return self.assign(self - delta)


def _fits(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        not isinstance(x, int) or not isinstance(y, int) or x == y for x, y in zip(a, b)
    )


def _as_value(g: Graph, x, dtype, what: str) -> Value:
    """``x`` as a value of ``g``: a symbolic tensor's own value, else a constant."""
    if isinstance(x, Tensor):
        d = x._data
        if type(d) is Symbol:
            if d.graph is not g:
                raise TraceError(f"{what}: the value belongs to another graph ('{d.graph.name}')")
            if dtype is not None and d.dtype != dtype.np:
                from ..ops.elementwise import cast

                return cast(x, dtype)._data
            return d
        arr = x._data.copy()  # on the tensor's device
        if dtype is not None and arr.dtype != dtype.np:
            arr = arr.astype(dtype.np)
        c = g.add_constant(arr)
        c.device = device_tag(arr)
        return c
    else:
        from ..functions.creation import tensor

        arr = tensor(x, dtype=dtype).numpy(force=True).copy()
    if dtype is not None and arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    return g.add_constant(arr)


def _device_tag(device):
    """The IR's tag for ``device`` (None on the CPU)."""
    if device is None:
        return None
    dev = _backend.Device(device)
    if dev.type == "cpu":
        return None
    from ..backend import cuda

    return _CudaTag(cuda.resolve(dev.index))


def global_variables_initializer() -> Operation:
    """One operation running every Variable's initializer in the current graph.

    >>> from ember import static
    >>> static.global_variables_initializer()
    <ember.static.Operation 'init'>
    """
    g = get_default_graph()
    ops = [v.ref.initializer for v in g.state if isinstance(v.ref, Variable)]
    return group(*ops, name="init")


def variables_initializer(var_list) -> Operation:
    """One operation running the initializers of ``var_list``."""
    return group(*[v.initializer for v in var_list], name="init")


def group(*inputs, name: str | None = None) -> Operation:
    """An operation that runs all of ``inputs`` (tensors, operations, or lists of them).

    >>> import ember
    >>> from ember import static
    >>> g = static.Graph()
    >>> with g.as_default():
    ...     a = static.Variable(ember.zeros(1))
    ...     b = static.Variable(ember.zeros(1))
    ...     both = static.group(a.assign_add(ember.ones(1)), b.assign_sub(ember.ones(1)))
    ...     with static.Session() as s:
    ...         _ = s.run(static.global_variables_initializer())
    ...         s.run(both), s.run([a, b])
    (None, [array([1.], dtype=float32), array([-1.], dtype=float32)])
    """
    values = []
    graph = None

    def add(x):
        nonlocal graph
        if isinstance(x, (list, tuple)):
            for e in x:
                add(e)
            return
        if isinstance(x, Operation):
            v = x.value
        elif isinstance(x, Tensor) and type(x._data) is Symbol:
            v = x._data
        else:
            raise EmberError(f"group: expected tensors or operations of a graph, got {x!r}")
        if graph is not None and v.graph is not graph:
            raise TraceError("group: inputs from different graphs")
        graph = v.graph
        values.append(v)

    add(inputs)
    if graph is None:
        graph = get_default_graph()
    out = graph.add_node(Group(), values, (), _dt.bool_.np)
    return Operation(out, _unique(graph, name, "group"))


def gradients(ys, xs, grad_ys=None) -> list:
    """Symbolic gradients of the sum of ``ys`` with respect to each of ``xs`` (None where ``x``
    does not reach any ``y``), built from the same vjp rules as ``backward()``.

    >>> import ember
    >>> from ember import static
    >>> g = static.Graph()
    >>> with g.as_default():
    ...     x = static.placeholder((3,))
    ...     y = static.placeholder((3,))
    ...     gx, gy = static.gradients((x * x).sum(), [x, y])
    >>> gx.shape, gy
    (ember.Size([3]), None)
    """
    from ..autograd.engine import grad as _grad
    from ..ops.base import apply
    from ..ops.elementwise import ZEROS_LIKE, add, const_like

    ys = [ys] if isinstance(ys, Tensor) else list(ys)
    single = isinstance(xs, Tensor)
    xs = [xs] if single else list(xs)
    if grad_ys is not None:
        grad_ys = [grad_ys] if isinstance(grad_ys, Tensor) else list(grad_ys)
    graph = None
    for t in [*ys, *xs]:
        if isinstance(t, Tensor) and type(t._data) is Symbol:
            graph = t._data.graph
            break
    if graph is None:
        raise TraceError("gradients: expected symbolic tensors of a graph")
    with _as_default(graph) if not _in(graph) else contextlib.nullcontext():
        outs, gouts = [], []
        for i, y in enumerate(ys):
            if not y._requires_grad:
                continue
            outs.append(y)
            if grad_ys is not None and grad_ys[i] is not None:
                gouts.append(grad_ys[i])
            else:
                gouts.append(add(apply(ZEROS_LIKE, y), const_like(y, 1)))
        targets = [x for x in xs if x._requires_grad]
        if not outs or not targets:
            return [None] * len(xs)
        found = _grad(outs, targets, gouts, retain_graph=True, create_graph=True, allow_unused=True)
    by_id = {id(x): g for x, g in zip(targets, found)}
    return [by_id.get(id(x)) for x in xs]


def _in(graph: Graph) -> bool:
    tr = state.tracer
    return tr is not None and getattr(tr, "graph", None) is graph


__all__ = [
    "Operation",
    "Variable",
    "get_default_graph",
    "global_variables_initializer",
    "gradients",
    "group",
    "placeholder",
    "reset_default_graph",
    "variables_initializer",
]
