"""The static-graph IR: a flat, topologically ordered list of nodes over typed values.

A ``Graph`` holds four kinds of ``Value`` and a list of ``Node``:

- ``inputs``: fed on every run (placeholders, a compiled function's tensor arguments);
- ``state``: long-lived arrays read at the start of a run and written back at its end
  (parameters, buffers, gradients, optimizer state, ``Variable`` s); each has a ``ref`` that
  says where the array lives (the executor never looks at it: its caller reads and writes);
- ``constants``: arrays fixed when the graph was built (``data``);
- node outputs: each ``Node`` applies one primitive ``op`` (an ``ember.ops`` ``Op``: its fields
  are the attributes) to input values and defines one output value.

Every value has a ``shape`` (a tuple; ``None`` marks a dimension unknown until run time) and a
``dtype`` (a NumPy dtype, as arrays have). ``outputs`` lists what a function graph returns.

Side effects are ops too: ``Assign(target, value)`` stores ``value`` into the input or state
``target`` when the run ends (so every read in a run sees the value from before the run);
its output is ``value``. Ops whose class sets ``has_side_effects = True`` (``Assign``, the
optimizer's update) must be kept, in order, by every pass.

The text form (``str(graph)``) is also the file format of ``ember.static.save``::

    graph f(%0: f32[2,3] "x") {
      const %1: f32[] = 2.0
      %2: f32[2,3] = Mul(%0, %1)
      %3: f32[] = Sum(%2)
      return %3
    }

>>> import ember
>>> from ember.static import Graph
>>> from ember.ops.elementwise import Exp
>>> g = Graph("f")
>>> x = g.add_input((2,), "float32", "x")
>>> y = g.add_node(Exp(), [x], (2,), "float32")
>>> g.outputs.append(y)
>>> print(g)
graph f(%0: f32[2] "x") {
  %1: f32[2] = Exp(%0)
  return %1
}
>>> g.validate()
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from .. import dtypes as _dt
from .._errors import EmberError
from ..ops.base import Op, Spec


class GraphError(EmberError):
    """A graph that is malformed, or that cannot be written, read or run."""


class Value:
    """One value of a graph (SSA: defined once). ``kind`` is ``"input"``, ``"state"``,
    ``"const"`` or ``"node"``; ``node`` is the defining Node of a node value, ``data`` the array
    of a constant, ``ref`` where a state value lives, ``name`` an optional label."""

    __slots__ = (
        "id",
        "shape",
        "dtype",
        "kind",
        "name",
        "node",
        "data",
        "ref",
        "graph",
        "device",
        "__weakref__",
    )

    def __init__(self, graph, id: int, shape: tuple, dtype, kind: str, name=None) -> None:
        self.graph = graph
        self.id = id
        self.shape = tuple(shape)
        self.dtype = np.dtype(_np_dtype(dtype))
        self.kind = kind
        self.name = name
        self.node = None
        self.data = None
        self.ref = None
        self.device = None  # None on the CPU; a CUDA device tag otherwise

    def __repr__(self) -> str:
        return f"%{self.id}: {type_str(self)}"


class Node:
    """``output = op(*inputs)``."""

    __slots__ = ("op", "inputs", "output")

    def __init__(self, op: Op, inputs: tuple, output: Value) -> None:
        self.op = op
        self.inputs = tuple(inputs)
        self.output = output

    def __repr__(self) -> str:
        return format_node(self)


class Graph:
    """A graph: ``inputs``, ``state``, ``constants``, ``nodes`` (in order) and ``outputs``.

    Its values are ``value_type`` instances: ``Value`` here; the graphs ember code builds into
    (``ember.static.Graph``) make ``Symbol``s, values that double as a symbolic Tensor's array.
    """

    value_type: type = Value

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.inputs: list[Value] = []
        self.state: list[Value] = []
        self.constants: list[Value] = []
        self.nodes: list[Node] = []
        self.outputs: list[Value] = []
        self._next = 0

    # -- building ----------------------------------------------------------------------------
    def _value(self, shape, dtype, kind: str, name=None) -> Value:
        shape = tuple(int(s) if isinstance(s, (int, np.integer)) else s for s in shape)
        v = self.value_type(self, self._next, shape, dtype, kind, name)
        self._next += 1
        return v

    def add_input(self, shape, dtype, name: str | None = None) -> Value:
        """A value fed on every run."""
        v = self._value(shape, dtype, "input", name)
        self.inputs.append(v)
        return v

    def add_state(self, shape, dtype, ref=None, name: str | None = None) -> Value:
        """A long-lived value: read when a run starts, written back by ``Assign`` when it ends."""
        v = self._value(shape, dtype, "state", name)
        v.ref = ref
        self.state.append(v)
        return v

    def add_constant(self, array, name: str | None = None) -> Value:
        """A value fixed at build time (the array is kept as is: don't mutate it later)."""
        v = self._value(array.shape, array.dtype, "const", name)
        v.data = array
        self.constants.append(v)
        return v

    def add_node(self, op: Op, inputs, shape, dtype) -> Value:
        """Append ``op(*inputs)`` and return its output value (no checks: see ``validate``)."""
        out = self._value(shape, dtype, "node")
        node = Node(op, inputs, out)
        out.node = node
        self.nodes.append(node)
        return out

    # -- inspection --------------------------------------------------------------------------
    def values(self):
        """Every value: inputs, state, constants, then node outputs in order."""
        yield from self.inputs
        yield from self.state
        yield from self.constants
        for n in self.nodes:
            yield n.output

    def validate(self, check_types: bool = False) -> None:
        """Raise ``GraphError`` naming the node if the graph is malformed: a value used before
        it is defined or from another graph, an output not defined, an ``Assign`` whose target is
        not an input or state value or whose shapes differ. With ``check_types``, also re-run
        every op's ``infer`` and compare shapes and dtypes."""
        defined = set()
        for v in (*self.inputs, *self.state, *self.constants):
            if v.graph is not self:
                raise GraphError(f"{self.name}: value %{v.id} belongs to another graph")
            if v.id in defined:
                raise GraphError(f"{self.name}: value %{v.id} is defined twice")
            if v.kind == "const" and v.data is None:
                raise GraphError(f"{self.name}: constant %{v.id} has no data")
            defined.add(v.id)
        for i, node in enumerate(self.nodes):
            where = f"{self.name}: node {i} ({format_node(node)})"
            for x in node.inputs:
                if x.graph is not self or x.id not in defined:
                    raise GraphError(f"{where}: input %{x.id} is used before it is defined")
            out = node.output
            if out.node is not node or out.kind != "node" or out.id in defined:
                raise GraphError(f"{where}: bad output value %{out.id}")
            defined.add(out.id)
            if isinstance(node.op, Assign):
                target, value = node.inputs
                if target.kind not in ("input", "state"):
                    raise GraphError(f"{where}: Assign target must be an input or state value")
                if not _same_shape(target.shape, value.shape) or target.dtype != value.dtype:
                    raise GraphError(
                        f"{where}: Assign of {type_str(value)} into {type_str(target)}"
                    )
            if check_types:
                _check_node_type(node, where)
        for v in self.outputs:
            if v.graph is not self or v.id not in defined:
                raise GraphError(f"{self.name}: output %{v.id} is not defined in the graph")

    def __str__(self) -> str:
        return format_graph(self)

    def __repr__(self) -> str:
        return (
            f"<Graph {self.name}: {len(self.inputs)} inputs, {len(self.state)} state, "
            f"{len(self.constants)} constants, {len(self.nodes)} nodes>"
        )


def _same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        not isinstance(x, int) or not isinstance(y, int) or x == y for x, y in zip(a, b)
    )


def _check_node_type(node: Node, where: str) -> None:
    specs = [Spec(v.shape, _dt.from_numpy_dtype(v.dtype)) for v in node.inputs]
    try:
        spec = node.op.infer(*specs)
    except NotImplementedError:
        return
    except Exception as e:  # noqa: BLE001 - reported with the node
        raise GraphError(f"{where}: infer failed: {e}") from None
    out = node.output
    dt = np.dtype(_np_dtype(spec.dtype))
    if not _same_shape(tuple(spec.shape), out.shape) or dt != out.dtype:
        raise GraphError(
            f"{where}: infer gives {type_str_of(tuple(spec.shape), dt)} but the value is "
            f"{type_str(out)}"
        )


# -- side-effect ops ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Assign(Op):
    """``Assign(target, value)``: store ``value`` into ``target`` (an input or state value) when
    the run ends; the output is ``value``. Executors treat ``target`` as a destination, not a
    read."""

    has_side_effects = True
    replayable = True  # a CUDA graph replays it (its store is part of the graph)
    differentiable = False

    def forward(self, xp, target, value):
        return value

    def infer(self, target, value):
        return Spec(tuple(value.shape), value.dtype)


@dataclasses.dataclass(frozen=True)
class Group(Op):
    """``Group(*values)``: nothing, once all of ``values`` are computed (``static.group``)."""

    differentiable = False

    def forward(self, xp, *values):
        return None

    def infer(self, *values):
        return Spec((), _dt.bool_)


# -- text form ------------------------------------------------------------------------------

_SHORT = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "bool",
}
_LONG = {v: k for k, v in _SHORT.items()}
INLINE_LIMIT = 8  # constants with at most this many elements are written in the text


def _np_dtype(dtype):
    if isinstance(dtype, _dt.DType):
        return dtype.np
    if isinstance(dtype, str) and dtype in _LONG:
        return _dt.to_dtype(_LONG[dtype]).np
    if isinstance(dtype, str) or dtype in (float, int, bool):
        return _dt.to_dtype(dtype).np
    return dtype


def dtype_name(dtype) -> str:
    """Short name of a dtype in the text form (``f32``, ``i64``, ``bool``...)."""
    name = _dt.from_numpy_dtype(np.dtype(dtype)).name
    return _SHORT.get(name, name)


def type_str_of(shape: tuple, dtype) -> str:
    dims = ",".join(str(s) if isinstance(s, int) else "?" for s in shape)
    return f"{dtype_name(dtype)}[{dims}]"


def type_str(v: Value) -> str:
    """``f32[?,10]``: the dtype and shape of a value (``?`` for an unknown dimension)."""
    return type_str_of(v.shape, v.dtype)


def format_literal(x, strict: bool = False) -> str:
    """An op attribute as text that ``ember.static.files`` parses back (numbers, strings, None,
    tuples, lists, slices, ``...``, dtypes and nested ops). With ``strict`` anything else raises;
    otherwise it is shown as ``<repr>``."""
    if x is None or isinstance(x, (bool, int, str)) and not isinstance(x, np.generic):
        return repr(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if isinstance(x, np.generic):
        return format_literal(x.item(), strict)
    if isinstance(x, tuple):
        inner = ", ".join(format_literal(e, strict) for e in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, list):
        return "[" + ", ".join(format_literal(e, strict) for e in x) + "]"
    if isinstance(x, slice):
        parts = (x.start, x.stop, x.step)
        return "slice(" + ", ".join(format_literal(p, strict) for p in parts) + ")"
    if x is Ellipsis:
        return "..."
    if isinstance(x, _dt.DType):
        return x.name
    if isinstance(x, np.dtype):
        return _dt.from_numpy_dtype(x).name
    if isinstance(x, Op) and dataclasses.is_dataclass(x):
        return format_op(x, (), strict)
    if strict:
        raise GraphError(f"cannot write {type(x).__name__} {x!r} as text")
    shape = getattr(x, "shape", None)
    return f"<{type(x).__name__}{list(shape) if shape is not None else ''}>"


def op_fields(op: Op) -> list:
    """``(name, value)`` of an op's attributes that differ from their defaults."""
    if not dataclasses.is_dataclass(op):
        return []
    out = []
    for f in dataclasses.fields(op):
        if not f.init:
            continue
        value = getattr(op, f.name)
        if f.default is not dataclasses.MISSING and _same(value, f.default):
            continue
        out.append((f.name, value))
    return out


def _same(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable: show it
        return False


def format_op(op: Op, args, strict: bool = False, op_name=None) -> str:
    name = op_name(op) if op_name is not None else type(op).__name__
    parts = [f"%{a.id}" for a in args]
    if dataclasses.is_dataclass(op):
        parts += [f"{k}={format_literal(v, strict)}" for k, v in op_fields(op)]
    elif strict:
        raise GraphError(f"op {op.name} ({type(op).__name__}) cannot be written as text")
    else:
        parts.append(f"<{type(op).__name__}>")
    return f"{name}({', '.join(parts)})"


def format_node(node: Node, strict: bool = False, op_name=None) -> str:
    out = node.output
    return f"%{out.id}: {type_str(out)} = {format_op(node.op, node.inputs, strict, op_name)}"


def format_constant(v: Value, strict: bool = False) -> str:
    data = v.data
    if data is not None and data.size <= INLINE_LIMIT and data.dtype != _dt.bfloat16.np:
        host = data if type(data) is np.ndarray else np.asarray(data.get())
        text = format_literal(host.tolist(), strict)
    else:
        text = f"weights[{_q(const_key(v))}]"
    return f"const %{v.id}: {type_str(v)} = {text}"


def _q(name: str) -> str:
    return json.dumps(name)


def const_key(v: Value) -> str:
    return f"const.{v.id}"


def state_key(v: Value) -> str:
    return v.name if v.name else f"state.{v.id}"


def format_graph(g: Graph, strict: bool = False, op_name=None) -> str:
    """The text form (see the module docstring); ``strict`` raises for anything that would not
    read back (ops that are not plain dataclasses, attribute values with no literal form)."""
    ins = ", ".join(
        f"%{v.id}: {type_str(v)}" + (f" {_q(v.name)}" if v.name else "") for v in g.inputs
    )
    lines = [f"graph {g.name}({ins}) {{"]
    for v in g.state:
        lines.append(f"  state %{v.id}: {type_str(v)} {_q(state_key(v))}")
    for v in g.constants:
        lines.append("  " + format_constant(v, strict))
    for n in g.nodes:
        lines.append("  " + format_node(n, strict, op_name))
    if g.outputs:
        lines.append("  return " + ", ".join(f"%{v.id}" for v in g.outputs))
    lines.append("}")
    return "\n".join(lines)


__all__ = ["Assign", "Graph", "GraphError", "Group", "Node", "Value", "format_graph", "type_str"]
