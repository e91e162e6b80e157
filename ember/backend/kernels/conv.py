"""GPU convolutions through NVIDIA's cuDNN frontend (``nvidia-cudnn-frontend``, module ``cudnn``).

CuPy 14 has no cuDNN module of its own, so ember drives cuDNN through the frontend's graph API:
one single-node graph per (operation, shapes, strides, dtype, device, switches), built once
and cached, then executed on raw device pointers:

- fprop: ``y = conv(x, w)`` (``graph.conv_fprop(image, weight, ...)``);
- dgrad: ``dx`` from ``dy`` and ``w`` (``graph.conv_dgrad(loss, filter, ...)``);
- wgrad: ``dw`` from ``x`` and ``dy`` (``graph.conv_wgrad(image, loss, ...)``).

Tensors are described in logical NCHW order with their actual strides in elements (packed
NCHW or channels-last both work); groups follow from the channel counts, as in cuDNN. The
compute type is float32 (float64 for float64); float32 may use TF32 unless
``ember.backends.cudnn.allow_tf32`` is False (the plans noted TENSOR_CORE are then removed), and
``deterministic`` removes plans noted NONDETERMINISTIC. Execution runs on CuPy's current stream
(``cudnn.set_stream``) with a workspace from CuPy's memory pool, so it works inside CUDA graph
capture as well.

``fprop``, ``dgrad`` and ``wgrad`` are the CUDA overrides of ``ember.ops.conv``'s ``Conv2d``,
``Conv2dGradInput`` and ``Conv2dGradWeight`` (registered there). Each returns
``NotImplemented`` when cuDNN cannot serve the call (frontend missing, switched off, a dtype or
shape it has no plan for): the op's ``forward`` (im2col + cuBLAS on CuPy) runs instead. A
failed plan is remembered (and warned about once), not retried.

>>> fprop(None, None, None, (1, 1), (0, 0), (1, 1), 1)
NotImplemented
"""

from __future__ import annotations

import ctypes
import warnings

import numpy as np

from ... import _caches
from .. import cudnn as _flags
from . import fused, served

_UNSUPPORTED = object()
_graphs: dict = {}
_handles: dict = {}
_warned: set = set()


def ptr(a) -> int:
    """Device address of a CuPy array's first element."""
    return a.data.ptr


def device_id(a) -> int:
    """Index of the GPU a CuPy array lives on (its memory's: no ``Device`` object made)."""
    return a.data.device_id


def io_type(mod, dtype):
    """cuDNN's data type for a NumPy dtype, or None where it has none."""
    name = np.dtype(dtype).name
    table = {"float32": "FLOAT", "float16": "HALF", "bfloat16": "BFLOAT16", "float64": "DOUBLE"}
    return getattr(mod.data_type, table[name]) if name in table else None


def elem_strides(a) -> list:
    """Strides in elements (what cuDNN tensors take)."""
    return [s // a.itemsize for s in a.strides]


def contiguous_strides(shape) -> list:
    """Row-major strides in elements for ``shape``."""
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return out[::-1]


def _packed(xp, a):
    """``a`` if its memory is dense NCHW or channels-last (cuDNN describes both), else a copy."""
    if a.flags.c_contiguous or a.transpose(0, 2, 3, 1).flags.c_contiguous:
        return a
    return xp.ascontiguousarray(a)


def handle(mod, xp, dev: int):
    """The cuDNN handle of GPU ``dev`` (one per device, made on first use)."""
    h = _handles.get(dev)
    if h is None:
        with xp.cuda.Device(dev):
            h = _handles[dev] = mod.create_handle()
    return h


def _build(mod, xp, kind, a, b, out_shape, params, tf32: bool, deterministic: bool, dev: int):
    stride, padding, dilation = (list(p) for p in params)
    io = io_type(mod, a.dtype)
    compute = mod.data_type.DOUBLE if a.dtype == np.float64 else mod.data_type.FLOAT
    g = mod.pygraph(
        handle=handle(mod, xp, dev),
        io_data_type=io,
        intermediate_data_type=compute,
        compute_data_type=compute,
    )
    ta = g.tensor(name="A", dim=list(a.shape), stride=elem_strides(a), data_type=io)
    tb = g.tensor(name="B", dim=list(b.shape), stride=elem_strides(b), data_type=io)
    geometry = dict(padding=padding, stride=stride, dilation=dilation)
    if kind == "fprop":  # a = x, b = w
        out = g.conv_fprop(image=ta, weight=tb, **geometry)
    elif kind == "dgrad":  # a = dy, b = w
        out = g.conv_dgrad(loss=ta, filter=tb, **geometry)
    else:  # wgrad: a = x, b = dy
        out = g.conv_wgrad(image=ta, loss=tb, **geometry)
    out.set_output(True).set_dim(list(out_shape)).set_stride(contiguous_strides(out_shape))
    out.set_data_type(io)
    notes = []
    if not tf32 and a.dtype == np.float32:
        notes.append(mod.numerical_note.TENSOR_CORE)
    if deterministic:
        notes.append(mod.numerical_note.NONDETERMINISTIC)
    return finish(mod, g, (ta, tb, out), notes)


def finish(mod, g, tensors, notes=()) -> tuple:
    """Validate and build graph ``g`` (heuristics A, then the fallback list; plans with the
    numerical ``notes`` removed): the cache entry ``(graph, tensors, their uids, workspace
    size)`` that ``run`` takes. ``tensors``: every buffer the graph reads or writes."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([mod.heur_mode.A, mod.heur_mode.FALLBACK])
    if notes:
        g.deselect_numeric_notes(list(notes))
    g.check_support()
    g.build_plans()
    tensors = tuple(tensors)
    return g, tensors, tuple(t.get_uid() for t in tensors), int(g.get_workspace_size())


def cached_plan(graphs: dict, warned: set, key, build, refused, instead: str, depth=0):
    """``graphs[key]``, built by ``build()`` on first use, or None where cuDNN has no plan: the
    refusal is remembered (not retried) and warned about once per ``key[0]`` (the kind): "cuDNN
    has no ``refused()``" (a callable: the description is formatted only then), and what runs
    ``instead``; ``depth``: the caller's calls above this one's, for the warning's stack level."""
    entry = graphs.get(key)
    if entry is None:
        try:
            entry = build()
        except Exception as e:  # no engine for this case: the op's other path from now on
            entry = _UNSUPPORTED
            if key[0] not in warned:
                warned.add(key[0])
                warnings.warn(
                    f"ember: cuDNN has no {refused()}: {type(e).__name__}: {e}; using "
                    f"{instead} for it (warned once per kind)",
                    RuntimeWarning,
                    stacklevel=5 + depth,
                )
        graphs[key] = entry
    return None if entry is _UNSUPPORTED else entry


def run(mod, xp, entry, dev: int, arrays) -> None:
    """Run a built graph (``finish``'s entry) on GPU ``dev`` with ``arrays``, in the order of its
    tensors, on CuPy's current stream, with a workspace from CuPy's pool."""
    graph, tensors, uids, ws_size = entry
    ws = xp.empty((max(ws_size, 1),), dtype=xp.uint8)
    h = handle(mod, xp, dev)
    mod.set_stream(handle=h, stream=xp.cuda.get_current_stream().ptr)
    execute(graph, tensors, uids, [ptr(a) for a in arrays], ptr(ws), h)


def _run(xp, kind: str, a, b, out_shape: tuple, params: tuple):
    if xp is None or not _flags.enabled or not fused(xp):
        return NotImplemented
    mod = _flags._cudnn()
    if mod is None or not served(a.dtype) or a.dtype != b.dtype:
        return NotImplemented
    if not a.size or not b.size or 0 in out_shape:
        return NotImplemented
    a, b = _packed(xp, a), _packed(xp, b)
    dev = device_id(a)
    tf32 = bool(_flags.allow_tf32)
    deterministic = bool(_flags.deterministic)
    key = (kind, dev, a.dtype, a.shape, a.strides, b.shape, b.strides)
    key += (out_shape, params, tf32, deterministic)
    entry = cached_plan(
        _graphs,
        _warned,
        key,
        lambda: _build(mod, xp, kind, a, b, out_shape, params, tf32, deterministic, dev),
        lambda: f"plan for conv {kind} of {tuple(a.shape)} and {tuple(b.shape)} ({a.dtype})",
        "im2col + cuBLAS",
    )
    if entry is None:
        return NotImplemented
    out = xp.empty(out_shape, dtype=a.dtype)
    run(mod, xp, entry, dev, (a, b, out))
    return out


_ordered = [True]  # the frontend takes ``tensor_uids`` (ordered buffers); False once refused
_direct = [True]  # the backend graph's raw-pointer call works; False once it failed


def _direct_call(graph, uids):
    """``(call, order, plan)`` to run a built graph through its backend graph's raw-pointer entry
    (what the frontend's own ``execute`` ends in: one C++ call on an array of device pointers
    in ascending uid order; ``order``: the positions in ``uids`` of those operands), read once
    from the frontend graph; None where its selected plan is not the cuDNN backend's (a Python
    engine) or the frontend has no such entry."""
    found = getattr(graph, "_ember_direct", False)
    if found is False:
        found = None
        try:
            if graph.selected_engine is None:
                order = tuple(uids.index(u) for u in graph._variant_pack_uids())
                plans = graph._plans
                cfg = graph._materialize_backend_plan(graph._plan_index) if plans else None
                plan = -1 if cfg is None or cfg.cpp_index is None else int(cfg.cpp_index)
                found = (graph._lowered_graph._execute_with_raw_ptrs, order, plan)
        except Exception:  # another frontend version: its public execute serves
            found = None
        try:
            graph._ember_direct = found
        except AttributeError:
            return None
    return found


def execute(graph, tensors, uids, pointers, workspace: int, handle) -> None:
    """Run a built graph on raw device pointers.

    Straight through the backend graph's raw-pointer entry where the frontend has one
    (``_direct_call``): the frontend's ``execute`` describes each bare address in Python on every
    call first (about 150 us a convolution under cProfile in an eager ResNet-18 step on an H100,
    frontend 1.32), which the backend does not read. Else the frontend's ordered form (buffers
    listed with their uids), else its dictionary form. ``uids`` are the tensors' own, read once
    when the graph was built."""
    if _direct[0]:
        found = _direct_call(graph, uids)
        if found is not None:
            call, order, plan = found
            try:
                array = (ctypes.c_void_p * len(order))(*[pointers[i] for i in order])
                call(
                    ctypes.addressof(array), len(order), workspace, handle.backend_handle or 0, plan
                )
                return
            except (TypeError, AttributeError, ValueError):
                _direct[0] = False  # checked before any launch: nothing ran
    if _ordered[0]:
        try:
            graph.execute(list(pointers), workspace, handle=handle, tensor_uids=uids)
            return
        except (TypeError, ValueError):  # a frontend without ordered execution (or layout)
            _ordered[0] = False
    graph.execute(dict(zip(tensors, pointers)), workspace, handle=handle)


def fprop(xp, x, w, stride, padding, dilation, groups: int):
    """``conv2d(x, w)`` (N, O, Ho, Wo) by cuDNN, or NotImplemented (module docstring)."""
    if xp is None:
        return NotImplemented
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return _run(xp, "fprop", x, w, (n, o, ho, wo), (stride, padding, dilation))


def dgrad(xp, g, w, x_shape, stride, padding, dilation, groups: int):
    """conv2d's input gradient (``x_shape``) for output gradient ``g`` by cuDNN, or
    NotImplemented."""
    return _run(xp, "dgrad", g, w, tuple(x_shape), (stride, padding, dilation))


def wgrad(xp, x, g, w_shape, stride, padding, dilation, groups: int):
    """conv2d's weight gradient (``w_shape``) for input ``x`` and output gradient ``g`` by
    cuDNN, or NotImplemented."""
    return _run(xp, "wgrad", x, g, tuple(w_shape), (stride, padding, dilation))


def clear() -> None:
    """Forget built graphs and handles (after switching GPUs or frontends in tests).

    >>> clear()
    """
    _graphs.clear()
    _handles.clear()
    _warned.clear()
    _ordered[0] = _direct[0] = True


_caches.register("cuDNN plans and handles", clear, lambda: len(_graphs) + len(_handles))

__all__ = ["fprop", "dgrad", "wgrad", "clear"]
