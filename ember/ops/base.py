"""The op contract and ``apply``: one op definition serves eager autograd and static graphs.

An op is a frozen dataclass whose fields are its static parameters, with:

- ``forward(xp, *arrays)``: the computation on raw arrays (``xp`` is numpy or cupy);
- ``infer(*specs)``: output shape and dtype from input shapes and dtypes, raising an
  ``EmberError`` that names the op and shapes when they do not fit;
- ``vjp(g, out, *inputs)``: input gradients written in ember ops on Tensors (so gradients are
  differentiable again), ``None`` for inputs that need none. Inputs with
  ``requires_grad == False`` may get ``None`` without any work.

Class attributes say what the vjp reads (``saves_inputs``, ``saves_output``: the version
checks follow them), whether the output may alias the input (``is_view``), whether such a view
may not be written (``read_only_view``: ember's own metadata, ``Tensor._readonly``, never an
array flag) and whether the op is differentiable at all.

Eager mode runs ``forward`` straight away and calls ``infer`` only when ``forward`` fails, to
turn NumPy's message into one that names the op; checks NumPy would not make itself belong in
the public function that builds the op, so static graphs get them too.

``forward`` never branches on the device. A device kernel (a fused CUDA kernel, cuDNN) is an
override registered beside the op (``ember.backend.overrides``); ``apply`` looks it up for the
inputs' device type (one dict lookup; none on the CPU while no CPU override is registered) and
runs it, or ``forward`` when there is none or it declines (returns ``NotImplemented``).

>>> import ember
>>> from ember.ops.elementwise import Exp
>>> from ember.ops.base import apply
>>> apply(Exp(), ember.zeros(2))
tensor([1., 1.])
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .._config import state
from .._errors import DeviceError, EmberError
from .._node import Node
from .._shape import broadcast_shapes, wrap_dim
from .._tensor import Size, Tensor
from ..backend import cuda as _cuda
from ..backend import device_of, overrides, xp_of
from ..backend.cuda import device_context, is_cupy_array
from ..dtypes import is_float_np

_ndarray = np.ndarray
_BF16 = _dt.bfloat16.np
_CPU_KERNELS = overrides.table("cpu")  # op class -> override (ember.backend.overrides) or None
_CUDA_KERNELS = overrides.table("cuda")
_CPU_REGISTERED = overrides.live("cpu")  # empty (no lookup on the CPU) unless one is registered


@dataclass(frozen=True)
class Spec:
    """Shape, dtype and device of a value, without data: what ``infer`` takes and returns."""

    shape: tuple
    dtype: _dt.DType
    device: object = None

    @property
    def ndim(self) -> int:
        return len(self.shape)


class Op:
    """Base of every primitive. Subclasses are ``@dataclass(frozen=True)``."""

    saves_inputs = False
    saves_output = False
    is_view = False
    read_only_view = False  # a view whose elements alias each other (expand): never written
    differentiable = True

    @property
    def name(self) -> str:
        return type(self).__name__

    def forward(self, xp, *arrays):
        raise NotImplementedError

    def infer(self, *specs) -> Spec:
        raise NotImplementedError(f"{self.name}: no infer rule")

    def vjp(self, g: Tensor, out: Tensor, *inputs: Tensor) -> tuple:
        raise EmberError(f"{self.name}: this op has no derivative")


def apply(op: Op, *inputs: Tensor, into=None) -> Tensor:
    """Run ``op`` on Tensors: now (eager) or as a graph node (while tracing).

    The one path of every op, in two steps (JAX's ``bind`` and ``process_primitive``):

    1. the mode's processor returns the raw result: eager mode runs the device override or
       ``forward`` on the arrays (inline below: this is ember's hottest path), tracing asks
       ``state.tracer.record``, which adds a graph node and returns its ``Symbol`` (or a
       finished Tensor when it ran the op eagerly: define mode, no symbolic input);
    2. the rest of this function, the same for both modes, wraps the result in a Tensor and
       gives it view metadata and autograd history.

    The view rule: the result of an ``is_view`` op shares its input's version counter and base
    (and records the op in ``_view_ops``, so in-place writes reach the base) when it aliases
    the input's memory. Eager mode asks the array (its ``base``; an empty result, which has
    nothing to alias, counts as a view): a "view" op that had to copy (``reshape`` of a
    non-contiguous array) is a new tensor, as in PyTorch, and writes into it must not bump or
    reach the input. A traced result has no memory yet: it is always a view, and the graph
    makes that true when it runs (``Tracer.write`` turns a write into a view into a
    ``CopySlices`` of the base), so the decision never depends on layouts unknown at trace
    time.

    ``into`` (eager mode, an op whose forward takes ``out=``) is an array of the result's shape
    and dtype that the forward writes: an in-place op's own storage (``functions.inplace``). A
    device override runs then only if it takes ``out=`` too (its ``writes_out`` attribute).

    >>> import ember
    >>> from ember.ops.elementwise import ADD
    >>> apply(ADD, ember.ones(2), ember.ones(2))
    tensor([2., 2.])
    """
    if state.autocast is not None:  # mixed precision: Cast ops first (ember.amp.policy)
        inputs = state.autocast.cast_inputs(op, inputs)
    tracer = state.tracer
    if tracer is None:
        first = inputs[0]._data
        if type(first) is _ndarray:
            xp = np
            for t in inputs:
                if type(t._data) is not _ndarray:
                    _check_devices(op, inputs)
                    break
            kernel = _CPU_KERNELS[type(op)] if _CPU_REGISTERED else None
        elif type(first) is (cupy_array := _cuda._ndarray):  # the GPUs compared as ints
            xp, gpu = _cuda._cupy, first.data.device_id
            for t in inputs:
                if type(d := t._data) is not cupy_array or d.data.device_id != gpu:
                    _check_devices(op, inputs)
                    break
            kernel = _CUDA_KERNELS[type(op)]
        else:
            xp = xp_of(first)
            _check_devices(op, inputs)
            kernel = (_CPU_KERNELS if xp is np else _CUDA_KERNELS)[type(op)]
            if xp is not np:
                gpu = first.device.id
        arrays = (first,) if len(inputs) == 1 else [t._data for t in inputs]
        try:  # the device kernel registered for the op, or its forward
            if into is not None:  # an override that writes ``out=`` too (``writes_out``) first
                with device_context(into):
                    out = overrides.into(kernel, op, xp, arrays, into)
            elif xp is np or gpu == xp.cuda.runtime.getDevice():
                if kernel is None or (out := kernel(op, xp, *arrays)) is NotImplemented:
                    out = op.forward(xp, *arrays)
            else:  # as in PyTorch, an op runs on its tensors' GPU, whichever is current
                with xp.cuda.Device(gpu):
                    if kernel is None or (out := kernel(op, xp, *arrays)) is NotImplemented:
                        out = op.forward(xp, *arrays)
        except EmberError:
            raise
        except Exception as e:  # turn NumPy's message into one naming the op and the inputs
            raise _named_error(op, inputs, e) from None
        if type(out) is not _ndarray and xp is np and not is_cupy_array(out):
            out = np.asarray(out)  # NumPy scalars; a CuPy array (a host-to-GPU copy) stays
    else:
        out = tracer.record(op, inputs)
        if isinstance(out, Tensor):  # run eagerly (define mode, no symbolic input)
            return out
    # -- one wrapping for every mode: the Tensor, its view metadata, its history --------------
    t = Tensor._make(out)
    if op.is_view and (tracer is not None or out.base is not None or out.size == 0):  # see above
        src = inputs[0]
        t._version = src._version
        t._base = src._base if src._base is not None else src
        t._view_ops = (src._view_ops or ()) + (op,)
        t._readonly = src._readonly or op.read_only_view
    if state.grad_enabled and op.differentiable:
        for x in inputs:
            if x._requires_grad:
                if out.dtype.kind == "f" or out.dtype == _BF16:  # integer results carry no grad
                    t._requires_grad = True
                    t._node = Node(op, inputs, t)
                break
    if state.anomaly and tracer is None:  # eager only: a Symbol has no values to check
        _anomaly_forward(op, inputs, t)
    return t


def _check_devices(op: Op, inputs) -> None:
    if len(inputs) < 2:
        return
    first = device_of(inputs[0]._data)  # devices are cached objects: compare by identity
    if all(device_of(t._data) is first for t in inputs[1:]):
        return
    devices = {device_of(t._data) for t in inputs}
    if len(devices) > 1:
        names = " and ".join(sorted(str(d) for d in devices))
        shapes = ", ".join(f"{tuple(t.shape)} on {t.device}" for t in inputs)
        raise DeviceError(
            f"{op.name}: expected all tensors on the same device, but found {names} ({shapes})"
        )


def _named_error(op: Op, inputs, cause: Exception) -> EmberError:
    try:
        op.infer(*inputs)
    except EmberError as e:
        return e
    except Exception:
        pass
    described = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in inputs)
    return EmberError(f"{op.name}: {cause} (inputs: {described})")


def _anomaly_forward(op: Op, inputs, out: Tensor) -> None:
    """Anomaly mode: remember where ``op`` was called (for backward errors) and stop on NaN/Inf."""
    site = _user_frame()
    if out._node is not None:
        out._node.trace = site
    arr = out._data
    if not state.anomaly_check_nan:
        return
    if is_float_np(arr.dtype) and not bool(xp_of(arr).isfinite(arr).all()):
        from .._errors import AutogradError

        bad = "NaN" if bool(xp_of(arr).isnan(arr).any()) else "Inf"
        described = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in inputs)
        raise AutogradError(
            f"anomaly: {op.name} produced {bad} values in its forward output of shape "
            f"{tuple(arr.shape)} (inputs: {described}); the op was called at {site}"
        )


def _user_frame() -> str:
    """The innermost stack frame outside ember (where user code called the op), as
    ``File "f.py", line 3, in fn: y = x.log()``."""
    import linecache
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    for frame, lineno in traceback.walk_stack(None):
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(root):
            line = linecache.getline(filename, lineno, frame.f_globals).strip()
            return f'File "{filename}", line {lineno}, in {frame.f_code.co_name}: {line}'
    return "<unknown>"


__all__ = ["Op", "Spec", "apply", "broadcast_shapes", "wrap_dim", "Size"]
