"""``ember.onnx.export``: a module or function, traced into a static graph, written as ONNX.

The model is traced with ``ember.static``'s define-and-run tracer (modules in eval mode, under
``no_grad``): each tensor argument becomes a placeholder, ``None`` at the axes named in
``dynamic_axes``, so the graph holds exactly the primitive ops eager mode runs. Parameters and
buffers become initializers (named after the module's parameters when they are used as they
are; values computed only from parameters are folded into one constant). Each ember op node is
then translated by the converter registered for its op class (``ember/onnx/<family>.py``); an
op with no converter raises ``ExportError`` naming the op and its node.

The ``onnx`` package is imported only when ``export`` runs (``pip install ember[onnx]``).

>>> import ember, tempfile, os
>>> model = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU())
>>> path = os.path.join(tempfile.mkdtemp(), "mlp.onnx")
>>> proto = ember.onnx.export(model, (ember.randn(4, 3),), path,
...                           input_names=["x"], dynamic_axes={"x": {0: "batch"}})
>>> [n.op_type for n in proto.graph.node]
['MatMul', 'Add', 'Relu']
>>> proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param
'batch'
"""

from __future__ import annotations

import inspect
import os

import numpy as np

from .._config import no_grad
from .._tensor import Tensor
from .context import CONVERTERS, DIMS_OK, Context, ExportError, elem_type

DEFAULT_OPSET = 17
MIN_OPSET = 13

_FAMILIES = ("elementwise", "reduce", "movement", "indexing", "linalg", "nn")


def _load_converters() -> None:
    import importlib

    for fam in _FAMILIES:
        importlib.import_module(f"{__package__}.{fam}")


def export(
    module_or_fn,
    example_args,
    path,
    input_names: list | None = None,
    output_names: list | None = None,
    dynamic_axes: dict | None = None,
    opset_version: int | None = None,
):
    """Export an inference graph of ``module_or_fn`` to ONNX and return the ``ModelProto``.

    ``example_args`` (a tensor or a tuple of arguments) gives the shape and dtype of each
    tensor argument (tensors inside list, tuple and dict arguments too, in order); other
    arguments are passed as they are and fixed into the graph. A Module
    runs in eval mode (its ``training`` flags are restored afterwards) and everything runs
    under ``no_grad``. ``path`` is a file name or a binary file object (None: don't write).

    ``input_names`` / ``output_names`` name the graph's inputs and outputs (defaults: the
    forward's parameter names; ``output`` or ``output_0``, ``output_1``...).
    ``dynamic_axes`` maps an input or output name to the axes whose size is free, as a list of
    axes or a dict ``{axis: "name"}`` (as ``torch.onnx.export``); an input's dynamic axes are
    traced as unknown sizes, so the graph computes shapes from the input at run time.
    ``opset_version`` defaults to 17 (13 at least).

    >>> import ember, io
    >>> f = lambda x: ember.nn.functional.softmax(x * 2, -1)
    >>> proto = ember.onnx.export(f, ember.ones(2, 3), io.BytesIO())
    >>> [n.op_type for n in proto.graph.node]
    ['Mul', 'Softmax']
    """
    try:
        import onnx
    except ImportError:
        raise ImportError(
            "ember.onnx.export needs the onnx package: pip install onnx (or ember[onnx])"
        ) from None
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise ValueError(
            f"ember.onnx.export: opset_version must be between {MIN_OPSET} and {newest} (the "
            f"newest this onnx package knows), got {opset_version}"
        )
    if not isinstance(example_args, tuple):
        example_args = (
            (example_args,) if not isinstance(example_args, list) else tuple(example_args)
        )
    graph, in_names, out_values = trace(
        module_or_fn, example_args, input_names, output_names, dynamic_axes
    )
    model = to_onnx(graph, in_names, out_values, output_names, dynamic_axes, opset)
    if path is not None:
        if isinstance(path, (str, os.PathLike)):
            onnx.save(model, os.fspath(path))
        else:
            path.write(model.SerializeToString())
    return model


# -- tracing -----------------------------------------------------------------------------


def _modules_of(fn, args) -> list:
    """The Modules ``fn`` is, is bound to, closes over, or gets as arguments."""
    from ..nn.module import Module

    found = []
    cands = [fn, getattr(fn, "__self__", None)] + list(args)
    target = getattr(fn, "__func__", fn)
    for cell in getattr(target, "__closure__", None) or ():
        try:
            cands.append(cell.cell_contents)
        except ValueError:
            pass
    code = getattr(target, "__code__", None)
    if code is not None:
        glb = getattr(target, "__globals__", {})
        cands += [glb[n] for n in code.co_names if n in glb]
    seen = set()
    for c in cands:
        if isinstance(c, Module) and id(c) not in seen:
            seen.add(id(c))
            found.append(c)
    return found


def _map_tensors(x, fn):
    """``x`` with every tensor inside (lists, tuples, namedtuples, dicts) replaced by ``fn(t)``."""
    if isinstance(x, Tensor):
        return fn(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map_tensors(e, fn) for e in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map_tensors(e, fn) for e in x)
    if isinstance(x, dict):
        return {k: _map_tensors(v, fn) for k, v in x.items()}
    return x


def _tensors_in(x) -> list:
    found: list = []
    _map_tensors(x, found.append)
    return found


def _default_input_names(fn, args: tuple) -> list:
    """Names for the tensors in ``args``: the forward's parameter names (``h_0``, ``h_1``...
    for the tensors inside a tuple argument ``h``), or ``input_<i>`` when they are unknown."""
    target = getattr(fn, "forward", fn)
    params: list = []
    try:
        sig = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        sig = []
    for p in sig:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            params.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            params += [f"{p.name}_{i}" for i in range(len(args) - len(params))]
            break
    names: list = []
    for pname, a in zip(params, args):
        if isinstance(a, Tensor):
            names.append(pname)
        else:
            names += [f"{pname}_{j}" for j in range(len(_tensors_in(a)))]
    n = len(_tensors_in(args))
    if len(names) != n or len(set(names)) != n:
        return [f"input_{i}" for i in range(n)]
    return names


def _axes_of(spec, name: str, ndim: int) -> dict:
    """``{axis: dim name}`` of one ``dynamic_axes`` entry."""
    if isinstance(spec, dict):
        items = list(spec.items())
    elif isinstance(spec, (list, tuple)):
        items = [(a, f"{name}_dynamic_axes_{k + 1}") for k, a in enumerate(spec)]
    else:
        raise TypeError(
            f"ember.onnx.export: dynamic_axes[{name!r}] must be a list of axes or a dict "
            f"{{axis: name}}, got {type(spec).__name__}"
        )
    out = {}
    for a, dim_name in items:
        if not isinstance(a, int) or not -ndim <= a < ndim:
            raise ValueError(
                f"ember.onnx.export: dynamic_axes[{name!r}] names axis {a!r}, but {name!r} "
                f"has {ndim} dimensions"
            )
        out[a % ndim] = str(dim_name)
    return out


def trace(fn, args: tuple, input_names=None, output_names=None, dynamic_axes=None):
    """Trace ``fn(*args)`` into an ember ``Graph`` (placeholders for the tensor arguments).
    Returns the graph, the input names and the output values (ember Values)."""
    from .. import static
    from ..static.compile import CompiledFunction
    from ..static.files import LoadedGraph

    if isinstance(fn, LoadedGraph):
        fn = fn.graph
    if isinstance(fn, static.Graph):
        return _from_graph(fn, input_names)
    if isinstance(fn, CompiledFunction):
        fn = fn.fn
    if not callable(fn):
        raise TypeError(f"ember.onnx.export: expected a Module or a function, got {fn!r}")
    tensors = _tensors_in(args)
    if not tensors:
        raise ValueError("ember.onnx.export: example_args holds no tensor to make an input of")
    names = list(input_names or [])
    if len(names) > len(tensors):
        raise ValueError(
            f"ember.onnx.export: {len(names)} input_names for {len(tensors)} tensor inputs"
        )
    names += _default_input_names(fn, args)[len(names) :]
    if len(set(names)) != len(names):
        raise ValueError(f"ember.onnx.export: input_names must be unique, got {names}")
    dynamic_axes = dict(dynamic_axes or {})  # names other than inputs are checked later

    modules = _modules_of(fn, args)
    flags = [(m, m.training) for top in modules for m in top.modules()]
    param_names = {}
    for top in modules:
        for pname, p in list(top.named_parameters()) + list(top.named_buffers()):
            if p is not None:
                param_names.setdefault(id(p._data), pname)
    label = getattr(fn, "__name__", None) or type(fn).__name__
    graph = static.Graph(label if label.isidentifier() else "model")
    try:
        for top in modules:
            top.eval()
        with graph.as_default(), no_grad():
            it = iter(names)

            def placeholder(a: Tensor) -> Tensor:
                nm = next(it)
                shape = list(a.shape)
                if nm in dynamic_axes:
                    for ax in _axes_of(dynamic_axes[nm], nm, len(shape)):
                        shape[ax] = None
                return static.placeholder(tuple(shape), a.dtype, name=nm)

            result = fn(*_map_tensors(args, placeholder))
            outs = _flatten_outputs(result, graph)
    finally:
        for m, t in flags:
            m.training = t
    builder = getattr(graph, "_builder", None)
    for slot in getattr(builder, "slots", {}).values():  # name constants after parameters
        v = slot.first
        if v.kind == "const" and v.name is None:
            v.name = param_names.get(id(slot.array))
    return graph, names, outs


def _flatten_outputs(result, graph) -> list:
    from ..static.symbol import Symbol

    outs: list = []

    def walk(x):
        if isinstance(x, Tensor):
            d = x._data
            if type(d) is not Symbol:  # does not depend on the inputs: a constant output
                d = graph.add_constant(np.array(d.get() if hasattr(d, "get") else d))
            outs.append(d)
        elif isinstance(x, (list, tuple)):
            for e in x:
                walk(e)
        elif isinstance(x, dict):
            for e in x.values():
                walk(e)
        else:
            raise ExportError(
                f"ember.onnx.export: the model returned {type(x).__name__}; only tensors and "
                "lists, tuples and dicts of tensors can be graph outputs"
            )

    walk(result)
    if not outs:
        raise ExportError("ember.onnx.export: the model returned no tensor")
    return outs


def _from_graph(graph, input_names):
    """An existing function graph (``CompiledFunction.graph``, ``static.load``)."""
    if not graph.outputs:
        raise ExportError(f"ember.onnx.export: graph '{graph.name}' has no outputs")
    names = list(input_names or [])
    names += [v.name or f"input_{i}" for i, v in enumerate(graph.inputs)][len(names) :]
    return graph, names, list(graph.outputs)


def _array_of(v):
    """The array of a constant or state value (read now for a compiled function's state)."""
    if v.data is not None:
        return v.data
    ref = v.ref
    if isinstance(ref, Tensor):
        raise ExportError(
            f"ember.onnx.export: Variable {v.name!r} has its value in a Session, not in the "
            "graph; export a function or module instead"
        )
    if hasattr(ref, "read"):  # a compiled function's parameter or buffer
        return ref.read()
    if hasattr(ref, "shape") and hasattr(ref, "dtype"):  # a loaded graph's array
        return ref
    raise ExportError(f"ember.onnx.export: state value %{v.id} ({v.name}) has no array to export")


# -- translation -------------------------------------------------------------------------


def _live_nodes(graph, outs) -> list:
    """The nodes the outputs need, in graph order."""
    need = {id(v) for v in outs}
    live = []
    for node in reversed(graph.nodes):
        if id(node.output) in need:
            live.append(node)
            need.update(id(x) for x in node.inputs)
    live.reverse()
    return live


def _value_info(helper, name: str, value, axes: dict, dim_names: dict):
    from ..static.dims import Dim

    dims = []
    for k, s in enumerate(value.shape):
        if k in axes:
            dims.append(axes[k])
        elif isinstance(s, Dim):
            e = s.expr
            dims.append(dim_names.get((id(e[1]), e[2])) if e[0] == "dim" else None)
        else:
            dims.append(int(s))
    return helper.make_tensor_value_info(name, elem_type(value.dtype), dims)


def to_onnx(graph, in_names, outs, output_names=None, dynamic_axes=None, opset=DEFAULT_OPSET):
    """Translate ember ``graph`` (its inputs named ``in_names``; ``outs`` the output values)
    into an ONNX ``ModelProto``, checked with ``onnx.checker``."""
    import onnx
    from onnx import helper

    from ..static.dims import has_dims
    from ..static.ir import format_node

    _load_converters()
    ctx = Context(graph, opset)
    dynamic_axes = dict(dynamic_axes or {})
    if output_names is None:
        output_names = ["output"] if len(outs) == 1 else [f"output_{i}" for i in range(len(outs))]
    output_names = list(output_names)
    if len(output_names) != len(outs):
        raise ValueError(
            f"ember.onnx.export: {len(output_names)} output_names for {len(outs)} outputs"
        )
    if len(set(output_names) | set(in_names)) != len(output_names) + len(in_names):
        raise ValueError(
            f"ember.onnx.export: input and output names must all differ ({in_names}, "
            f"{output_names})"
        )
    for nm in list(in_names) + output_names:
        ctx.used.add(nm)
    for k in dynamic_axes:
        if k not in ctx.used:
            raise ValueError(
                f"ember.onnx.export: dynamic_axes names {k!r}, which is not an input or output "
                f"name (inputs: {list(in_names)}, outputs: {output_names})"
            )

    inputs, dim_names = [], {}
    for v, nm in zip(graph.inputs, in_names):
        ctx.names[id(v)] = nm
        axes = _axes_of(dynamic_axes[nm], nm, len(v.shape)) if nm in dynamic_axes else {}
        for k, dn in axes.items():
            dim_names[(id(v), k)] = dn
        inputs.append(_value_info(helper, nm, v, axes, dim_names))

    live = _live_nodes(graph, outs)
    needed = {id(x) for n in live for x in n.inputs} | {id(v) for v in outs}
    for v in list(graph.state) + list(graph.constants):
        if id(v) in needed:
            ctx.names[id(v)] = ctx.initializer(_array_of(v), v.name or f"const_{v.id}")

    final = {}  # id(value) -> output name, for the outputs nodes produce (first use only)
    for v, nm in zip(outs, output_names):
        if v.kind == "node" and id(v) not in final:
            final[id(v)] = nm
    for node in live:
        op = node.op
        ctx.node = node
        if getattr(op, "has_side_effects", False):
            raise ctx.error(
                "it writes state (an in-place update of a parameter or buffer, or an "
                "optimizer step); export the model in eval mode, without in-place writes"
            )
        conv = CONVERTERS.get(type(op))
        if conv is None:
            raise ExportError(
                f"ember.onnx.export: no ONNX converter for op {op.name} "
                f"({type(op).__module__}.{type(op).__qualname__}) at node {format_node(node)} "
                f"in graph '{graph.name}'"
            )
        if type(op) not in DIMS_OK and has_dims(op):
            raise ctx.error(
                "its attributes hold sizes that are unknown until run time (from a dynamic "
                "axis); export without that dynamic axis"
            )
        start = len(ctx.nodes)
        try:
            name = conv(ctx, node, *[ctx.name_of(x) for x in node.inputs])
        except ExportError:
            raise
        except Exception as e:  # noqa: BLE001 - a converter bug: name the node
            raise ctx.error(f"{type(e).__name__}: {e}") from e
        want = final.get(id(node.output))
        if want is not None:
            name = _rename_output(ctx, start, name, want)
        ctx.names[id(node.output)] = name
    ctx.node = None

    outputs, done = [], set()
    for v, nm in zip(outs, output_names):
        src = ctx.name_of(v)
        if src != nm:  # an input, an initializer, or a value returned twice
            ctx.nodes.append(helper.make_node("Identity", [src], [nm], name=nm))
        done.add(nm)
        axes = _axes_of(dynamic_axes[nm], nm, len(v.shape)) if nm in dynamic_axes else {}
        outputs.append(_value_info(helper, nm, v, axes, dim_names))

    g = helper.make_graph(ctx.nodes, graph.name, inputs, outputs, ctx.initializers)
    opsets = [helper.make_opsetid("", opset)]
    from .. import __version__ as _version

    model = helper.make_model(
        g,
        opset_imports=opsets,
        producer_name="ember",
        producer_version=str(_version),
        ir_version=helper.find_min_ir_version_for(opsets),
    )
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise ExportError(f"ember.onnx.export: the ONNX model does not check: {e}") from None
    return model


def _rename_output(ctx, start: int, name: str, want: str) -> str:
    """Make the node that produced ``name`` (added since ``start``) output ``want`` instead."""
    for node in reversed(ctx.nodes[start:]):
        outs = list(node.output)
        if name in outs:
            node.output[outs.index(name)] = want
            return want
    return name  # not made by this converter (an input or initializer): an Identity follows


__all__ = ["DEFAULT_OPSET", "ExportError", "export", "to_onnx", "trace"]
