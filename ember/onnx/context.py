"""The converter registry and the ``Context`` converters build ONNX nodes with.

A converter turns one node of an ember graph into ONNX nodes. It is registered for one or more
op classes with ``@converts`` and called as ``fn(ctx, node, *names)``: ``node`` is the ember
``Node`` (its ``op`` holds the attributes, ``node.inputs`` / ``node.output`` the typed values),
``names`` the ONNX names of its inputs. It returns the ONNX name of the node's result, adding
nodes with ``ctx.add`` and constants with ``ctx.const`` / ``ctx.ints`` / ``ctx.scalar``.

Converters never import ``onnx``: only the ``Context`` does, when an export starts, so that
``import ember`` does not load it.

>>> import numpy as np
>>> from ember.onnx.context import elem_type
>>> elem_type(np.float32)  # onnx.TensorProto.FLOAT
1
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .._errors import EmberError

CONVERTERS: dict = {}  # op class -> converter
DIMS_OK: set = set()  # op classes whose converter handles Dims (unknown sizes) in attributes

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

# ONNX TensorProto element types by NumPy dtype name (the values of onnx.TensorProto.DataType)
ELEM_TYPES = {
    "float32": 1,
    "uint8": 2,
    "int8": 3,
    "uint16": 4,
    "int16": 5,
    "int32": 6,
    "int64": 7,
    "bool": 9,
    "float16": 10,
    "float64": 11,
    "uint32": 12,
    "uint64": 13,
    "bfloat16": 16,
}


class ExportError(EmberError):
    """A model or function that cannot be exported to ONNX (names the op and its node)."""


def converts(*op_classes, dims: bool = False):
    """Register the decorated function as the converter of ``op_classes``; ``dims=True`` says it
    handles unknown sizes (``Dim``) in the op's attributes."""

    def register(fn):
        for cls in op_classes:
            CONVERTERS[cls] = fn
            if dims:
                DIMS_OK.add(cls)
        return fn

    return register


def elem_type(dtype) -> int:
    """The ONNX element type of a NumPy or ember dtype."""
    if isinstance(dtype, _dt.DType):
        dtype = dtype.np
    name = _dt.from_numpy_dtype(np.dtype(dtype)).name
    try:
        return ELEM_TYPES[name]
    except KeyError:
        raise ExportError(f"ember.onnx.export: dtype {name} has no ONNX equivalent") from None


def _host(arr) -> np.ndarray:
    if isinstance(arr, np.ndarray):
        return arr
    get = getattr(arr, "get", None)  # a CuPy array
    return np.asarray(get() if get is not None else arr)


class Context:
    """The ONNX graph being built: nodes, initializers, names, and helpers for converters."""

    def __init__(self, graph, opset: int) -> None:
        import onnx
        from onnx import helper

        self.onnx = onnx
        self.helper = helper
        self.graph = graph  # the ember Graph
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self.used: set = set()
        self._consts: dict = {}
        self._dims: dict = {}
        self.names: dict = {}  # id(ember Value) -> ONNX name
        self.node = None  # the ember node being converted (for error messages)

    # -- names ----------------------------------------------------------------------------
    def unique(self, stem: str) -> str:
        """A name not used yet in the ONNX graph, based on ``stem``."""
        stem = stem or "v"
        name, k = stem, 0
        while name in self.used:
            k += 1
            name = f"{stem}_{k}"
        self.used.add(name)
        return name

    def name_of(self, value) -> str:
        return self.names[id(value)]

    # -- nodes ----------------------------------------------------------------------------
    def add(self, op_type: str, inputs, n_out: int = 1, **attrs):
        """Append an ONNX node; returns its output name (a list of names when ``n_out > 1``).
        Attributes whose value is None are left out; an input name ``""`` is a missing
        optional input."""
        outs = [self.unique(op_type) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = self.helper.make_node(op_type, list(inputs), outs, name=outs[0], **attrs)
        self.nodes.append(node)
        return outs[0] if n_out == 1 else outs

    # -- constants ------------------------------------------------------------------------
    def initializer(self, array, name: str) -> str:
        """Add ``array`` as an initializer under (a unique variant of) ``name``."""
        arr = _host(array)
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)
        name = self.unique(name)
        et = elem_type(arr.dtype)
        raw = arr.view(np.uint16) if et == ELEM_TYPES["bfloat16"] else arr
        t = self.helper.make_tensor(name, et, arr.shape, raw.tobytes(), raw=True)
        self.initializers.append(t)
        return name

    def const(self, array, dtype=None) -> str:
        """An initializer holding ``array`` (shared between uses when it is small)."""
        arr = np.asarray(array, dtype=dtype)
        key = None
        if arr.size <= 64:
            key = (arr.dtype.str, arr.shape, arr.tobytes())
            name = self._consts.get(key)
            if name is not None:
                return name
        name = self.initializer(arr, "const")
        if key is not None:
            self._consts[key] = name
        return name

    def scalar(self, value, dtype) -> str:
        """A 0-d constant of ``dtype`` (a NumPy or ember dtype)."""
        if isinstance(dtype, _dt.DType):
            dtype = dtype.np
        return self.const(np.asarray(value, dtype=dtype))

    def ints(self, values) -> str:
        """A 1-D int64 constant (axes, pads, starts...)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1))

    # -- shapes with unknown sizes --------------------------------------------------------
    def shape(self, shape) -> str:
        """A 1-D int64 tensor holding ``shape``, whose entries may be ``Dim`` s (computed from
        the inputs' shapes at run time)."""
        from ..static.dims import Dim

        if not any(isinstance(s, Dim) for s in shape):
            return self.ints(int(s) for s in shape)
        parts = [self.dim(s) if isinstance(s, Dim) else self.ints([int(s)]) for s in shape]
        return self.add("Concat", parts, axis=0)

    def dim(self, dim) -> str:
        """A 1-D int64 tensor ``[size]`` for the ``Dim`` ``dim``."""

        def leaf(v, k):
            name = self.names.get(id(v))
            if name is None:
                raise self.error(
                    f"the size {dim!r} refers to a value that is not in this graph (an op cached "
                    "while tracing another graph?); export with fixed shapes"
                )
            return name, k

        return self.dim_expr(dim.expr, leaf)

    def dim_expr(self, expr, leaf, floating: bool = False) -> str:
        """A 1-D tensor ``[value]`` of the size expression ``expr`` (``("dim", ref, axis)``,
        numbers, ``(op, a, b)``); ``leaf(ref, axis)`` gives ``(ONNX name, axis)``. Computed in
        int64, or float64 when ``floating`` (a ``/`` in the expression)."""
        dtype = np.float64 if floating else np.int64
        if not isinstance(expr, tuple):
            return self.const(np.asarray([expr], dtype=dtype))
        if expr[0] == "dim":
            name, axis = leaf(expr[1], expr[2])
            key = (name, axis, floating)
            out = self._dims.get(key)
            if out is None:
                shape = self.add("Shape", [name])
                out = self.add("Gather", [shape, self.ints([axis])], axis=0)
                if floating:
                    out = self.add("Cast", [out], to=ELEM_TYPES["float64"])
                self._dims[key] = out
            return out
        a = self.dim_expr(expr[1], leaf, floating)
        b = self.dim_expr(expr[2], leaf, floating)
        op = expr[0]
        if op == "//" and floating:
            return self.add("Floor", [self.add("Div", [a, b])])
        if op == "%":
            return self.add("Mod", [a, b], fmod=1 if floating else 0)
        onnx_op = {"+": "Add", "-": "Sub", "*": "Mul", "//": "Div", "/": "Div"}[op]
        return self.add(onnx_op, [a, b])

    # -- helpers for converters -----------------------------------------------------------
    def error(self, why: str) -> ExportError:
        """An ``ExportError`` naming the node being converted and ``why``."""
        from ..static.ir import format_node

        node = self.node
        where = f" at node {format_node(node)}" if node is not None else ""
        name = node.op.name if node is not None else "?"
        return ExportError(f"ember.onnx.export: cannot export op {name}{where}: {why}")

    def cast(self, name: str, dtype) -> str:
        return self.add("Cast", [name], to=elem_type(dtype))

    def reduce(self, op_type: str, x: str, axes, keepdims: bool) -> str:
        """``op_type`` (ReduceSum, ReduceMax...) over ``axes`` (None: all), as an attribute or
        an input depending on the opset (axes became an input in opset 13 for ReduceSum and
        in opset 18 for the others)."""
        keep = 1 if keepdims else 0
        if axes is None:
            return self.add(op_type, [x], keepdims=keep)
        axes = [int(a) for a in axes]
        if not axes:
            return self.add("Identity", [x])
        as_input = op_type == "ReduceSum" or self.opset >= 18
        if as_input:
            return self.add(op_type, [x, self.ints(axes)], keepdims=keep)
        return self.add(op_type, [x], axes=axes, keepdims=keep)

    def squeeze(self, x: str, axes) -> str:
        return self.add("Squeeze", [x, self.ints(axes)]) if axes else x

    def unsqueeze(self, x: str, axes) -> str:
        return self.add("Unsqueeze", [x, self.ints(axes)]) if axes else x


__all__ = ["CONVERTERS", "Context", "ExportError", "converts", "elem_type"]
