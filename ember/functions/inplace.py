"""In-place ops (``add_``, ``mul_``, ``zero_``, ``x[i] = v``...) and the rules they keep.

An in-place op computes the out-of-place result from an alias of the old value, writes it into
the tensor's own storage, bumps the version counter (shared with views) and, when autograd is
recording, moves the tensor's history to the new node. Without recording, arithmetic updates
run the op's own forward straight into the array (``out=``: the optimizer's hot path).

>>> import ember
>>> x = ember.zeros(3)
>>> x.add_(2).mul_(3)
tensor([6., 6., 6.])
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .._config import graph_tracer, state
from .._errors import AutogradError, DTypeError, EmberError
from .._shape import broadcast_shapes
from .._tensor import Tensor
from ..backend import overrides, xp_of
from ..backend.arrays import assign
from ..backend.cuda import device_context
from ..dtypes import is_float_np
from ..ops import _arith_numba as _arith
from ..ops import elementwise as E
from ..ops.base import apply
from . import elementwise as F

_CPU_KERNELS = overrides.table("cpu")  # op class -> CPU override or None


def _recording(x: Tensor, args) -> bool:
    if graph_tracer(x, *args) is not None:  # building a graph: writes go through apply_inplace
        return True
    if not state.grad_enabled:
        return False
    if x._requires_grad:
        return True
    return any(isinstance(a, Tensor) and a._requires_grad for a in args)


def check_inplace_allowed(x: Tensor, name: str) -> None:
    """Refuse in-place writes to leaves that require grad (and their views) while recording."""
    if not state.grad_enabled:
        return
    if x._requires_grad and x._node is None:
        raise AutogradError(
            "a leaf Variable that requires grad is being used in an in-place operation.\n"
            f"{name}: a leaf tensor that requires grad (shape {tuple(x.shape)}) is being used in "
            "an in-place operation; do it under ember.no_grad() or use the out-of-place op"
        )
    node = x._node
    returned = getattr(node.op, "returned_input", None) if node is not None else None
    if returned is not None and returned():
        raise AutogradError(
            f"{name}: output {getattr(node.op, 'index', 0)} of {node.op.name} (shape "
            f"{tuple(x.shape)}) is an input the custom Function returned as-is, and is being "
            "modified in place, which would bypass the Function's backward; clone() the "
            "output of the custom Function first"
        )
    base = x._base
    if base is not None and base._requires_grad and base._node is None:
        raise AutogradError(
            f"{name}: a view of a leaf tensor that requires grad (base shape "
            f"{tuple(base.shape)}) is being used in an in-place operation"
        )


def _alias(x: Tensor, copy: bool) -> Tensor:
    """The tensor's current value and history under a new name, so the new node can use it."""
    t = Tensor._make(x._data.copy() if copy else x._data, x._requires_grad)
    t._node = x._node
    t._readonly = x._readonly and not copy
    # A fresh counter either way: without a copy the caller vouches that the new node's vjp
    # never reads this old value, so the write that follows must not fail its version check.
    t._version = [x._version[0]]
    return t


def commit(x: Tensor, result: Tensor, name: str) -> Tensor:
    """Write ``result`` into ``x``'s storage and give ``x`` the result's history."""
    rdt, xdt = result.dtype, x.dtype
    if rdt is not xdt:
        if not _dt.can_cast(rdt, xdt):
            from .._legacy import _BY_DTYPE  # PyTorch names dtypes here as ScalarType: Float

            r, o = (_BY_DTYPE[d].removesuffix("Tensor") for d in (rdt, xdt))
            raise DTypeError(
                f"result type {r} can't be cast to the desired output type {o}\n"
                f"{name}: result type {rdt} can't be cast to the desired output type {xdt}"
            )
        result = E.cast(result, xdt)
    if tuple(result.shape) != tuple(x.shape):
        raise EmberError(
            f"{name}: output with shape {tuple(x.shape)} doesn't match the broadcast shape "
            f"{tuple(result.shape)}"
        )
    if x._readonly:
        raise EmberError(
            f"{name}: the tensor (shape {tuple(x.shape)}) is a read-only broadcast view "
            "(from expand); clone() it before writing in place"
        )
    node = result._node
    rebase = node is not None and x._base is not None  # decided before anything is written
    if rebase:
        from .views import check_rebase, rebase_view

        check_rebase(x)
    tracer = graph_tracer(x, result)
    if tracer is not None:  # building a graph: rebind x to the new value (ember.static)
        tracer.write(x, result)
    elif result._data is not x._data:  # (the op wrote x's array itself: ``recorded_into``)
        with device_context(x._data):
            x._data[...] = result._data
    x._version[0] += 1
    if node is not None:
        if rebase:
            rebase_view(x, result)
            return x
        x._node = node
        x._requires_grad = True
        node.out_data = x._data
        node.out_counter = x._version
        node.out_version = x._version[0]
    return x


def apply_inplace(x: Tensor, fn, *args, name: str, saves_inputs: bool = False, **kwargs) -> Tensor:
    """``x = fn(x, *args)`` in place, with autograd's in-place rules."""
    tracer = graph_tracer(x, *args)
    if tracer is not None:
        tracer.own(x)
    if _recording(x, args):
        check_inplace_allowed(x, name)
        src = _alias(x, copy=saves_inputs)
    else:
        src = x
    if state.autocast is not None:  # in-place forms are not autocast (they keep x's dtype)
        from ..amp.autocast_mode import without_autocast

        return commit(x, without_autocast(fn, src, *args, **kwargs), name)
    return commit(x, fn(src, *args, **kwargs), name)


def recorded_into(x: Tensor, op, other, name: str) -> bool:
    """While autograd records, ``x = op(x)`` (``other`` None) or ``x = op(x, other)`` with the
    op's forward writing straight into ``x``'s array, as PyTorch's in-place kernels do, where the
    usual way (the result in a new array, copied into ``x``) would only add the copy: the op's
    vjp reads no input value, ``x`` is not a view and its dtype is floating, ``other`` is a tensor
    of ``x``'s dtype whose shape broadcasts into ``x``'s and whose memory is ``x``'s own or apart
    from it. On the CPU, an op whose kernel writes only new arrays keeps the usual way: the
    kernel and the copy beat NumPy's forward. False, having done nothing, where it does not
    apply.

    >>> import ember
    >>> w = ember.ones(2, requires_grad=True)
    >>> y = w * 1
    >>> recorded_into(y, E.ADD, ember.ones(2), "add_"), y
    (True, tensor([2., 2.], grad_fn=<AddBackward0>))
    """
    d = x._data
    if (
        op.saves_inputs
        or not op.writes_out
        or x._base is not None
        or x._readonly
        or not is_float_np(d.dtype)
        or not state.grad_enabled
    ):
        return False
    if other is not None and not isinstance(other, Tensor):
        return False
    args = () if other is None else (other,)
    if graph_tracer(x, *args) is not None:
        return False
    if not (x._requires_grad or (other is not None and other._requires_grad)):
        return False  # not recording: the no-autograd paths serve it
    on_host = type(d) is np.ndarray
    if other is not None:
        od = other._data
        if type(od) is not type(d) or od.dtype != d.dtype or other._readonly:
            return False
        try:
            if broadcast_shapes(name, d.shape, od.shape) != d.shape:
                return False
        except EmberError:  # the usual way raises its own message
            return False
        if od is not d and (np if on_host else xp_of(d)).may_share_memory(od, d):
            return False
    elif on_host and (k := _CPU_KERNELS[type(op)]) is not None and not getattr(k, "writes_out", 0):
        return False  # a CPU kernel that makes a new array: it and the copy beat NumPy's forward
    check_inplace_allowed(x, name)
    src = _alias(x, copy=False)
    if state.autocast is not None:  # in-place forms are not autocast (as ``apply_inplace``)
        from ..amp.autocast_mode import without_autocast

        commit(x, without_autocast(apply, op, src, *args, into=d), name)
    else:
        commit(x, apply(op, src, *args, into=d), name)
    return True


def inplace_method(fn, name: str, saves_inputs: bool = True):
    """A Tensor method ``name`` doing ``self = fn(self, *args)`` in place (``apply_inplace``).
    While autograd records, the old value is kept for ``fn``'s gradient unless
    ``saves_inputs`` is False (only for functions whose gradient never reads it).

    >>> import ember
    >>> from ember.functions.inplace import inplace_method
    >>> inplace_method(lambda t: t * 2, "double_")(ember.ones(2))
    tensor([2., 2.])
    """

    def method(self: Tensor, *args, **kwargs) -> Tensor:
        return apply_inplace(self, fn, *args, name=name, saves_inputs=saves_inputs, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``{getattr(fn, '__name__', name)}`` in place."
    return method


_OPS = {"add_": E.ADD, "sub_": E.SUB, "mul_": E.MUL, "div_": E.DIV}  # their forwards take out=


def _int_update(xd, other, name: str) -> bool:
    """Whether an int64 array's arithmetic update by a Python int stays int64, as the op's own
    result would (a counter such as BatchNorm's ``num_batches_tracked.add_(1)``)."""
    return (
        xd.dtype == np.int64 and type(other) is int and name != "div_" and -(2**63) <= other < 2**63
    )


def _fast(x: Tensor, other, name: str) -> bool:
    """The no-autograd arithmetic update straight into x's array; False when it doesn't apply."""
    if graph_tracer(x, other) is not None:
        return False
    if state.grad_enabled and (
        x._requires_grad or (isinstance(other, Tensor) and other._requires_grad)
    ):
        return False
    xd = x._data
    if isinstance(other, Tensor):
        od = other._data
        if od.dtype != xd.dtype or type(od) is not type(xd):
            return False
    elif isinstance(other, (int, float)) and not isinstance(other, bool):
        if not (is_float_np(xd.dtype) or _int_update(xd, other, name)):
            return False
        od = other
    else:
        return False
    if x._readonly:
        return False
    if type(xd) is np.ndarray and _arith.binary(name[:-1], xd, od, out=xd) is not None:
        x._version[0] += 1  # a large update on numba's threads
        return True
    try:
        with device_context(xd):
            _OPS[name].forward(np if type(xd) is np.ndarray else xp_of(xd), xd, od, out=xd)
    except ValueError:
        return False  # broadcasting that would change x's shape: take the checked path
    x._version[0] += 1
    return True


def add_(self: Tensor, other, *, alpha=1) -> Tensor:
    """In-place ``self += alpha * other``.

    >>> import ember
    >>> ember.ones(2).add_(1)
    tensor([2., 2.])
    """
    if alpha == 1 and (_fast(self, other, "add_") or recorded_into(self, E.ADD, other, "add_")):
        return self
    return apply_inplace(self, F.add, other, name="add_", alpha=alpha)


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    """In-place ``self -= alpha * other``.

    >>> import ember
    >>> ember.ones(2).sub_(1)
    tensor([0., 0.])
    """
    if alpha == 1 and (_fast(self, other, "sub_") or recorded_into(self, E.SUB, other, "sub_")):
        return self
    return apply_inplace(self, F.sub, other, name="sub_", alpha=alpha)


def mul_(self: Tensor, other) -> Tensor:
    """In-place ``self *= other``.

    >>> import ember
    >>> ember.ones(2).mul_(3)
    tensor([3., 3.])
    """
    if _fast(self, other, "mul_"):
        return self
    saves = isinstance(other, Tensor) and other._requires_grad
    return apply_inplace(self, F.mul, other, name="mul_", saves_inputs=saves)


def div_(self: Tensor, other, *, rounding_mode=None) -> Tensor:
    """In-place ``self /= other``.

    >>> import ember
    >>> ember.ones(2).div_(4)
    tensor([0.2500, 0.2500])
    """
    if rounding_mode is None and _fast(self, other, "div_"):
        return self
    saves = isinstance(other, Tensor) and other._requires_grad
    return apply_inplace(
        self, F.div, other, name="div_", saves_inputs=saves, rounding_mode=rounding_mode
    )


def pow_(self: Tensor, exponent) -> Tensor:
    """In-place ``self **= exponent``."""
    return apply_inplace(self, F.pow, exponent, name="pow_", saves_inputs=True)


def clamp_(self: Tensor, min=None, max=None) -> Tensor:
    """In-place clamp.

    >>> import ember
    >>> ember.tensor([-1.0, 2.0]).clamp_(min=0)
    tensor([0., 2.])
    """
    return apply_inplace(self, F.clamp, min, max, name="clamp_", saves_inputs=True)


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place.

    >>> import ember
    >>> ember.ones(2).zero_()
    tensor([0., 0.])
    """
    return fill_(self, 0)


def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place (a number or a 0-d tensor).

    >>> import ember
    >>> ember.zeros(2).fill_(7)
    tensor([7., 7.])
    """
    if isinstance(value, Tensor) and value.ndim != 0:
        raise EmberError(
            f"fill_: only supports 0-dimension value tensors, got shape {tuple(value.shape)}"
        )
    if not _recording(self, (value,)):
        if self._readonly:
            raise EmberError("fill_: the tensor is a read-only broadcast view; clone() it first")
        if not _arith.fill(self._data, value):  # large arrays on numba's threads
            with device_context(self._data):
                assign(self._data, value._data if isinstance(value, Tensor) else value)
        self._version[0] += 1
        return self
    from .creation import zeros_like

    def filled(src, v):
        return F.add(F.mul(src, 0), v if isinstance(v, Tensor) else zeros_like(src) + v)

    return apply_inplace(self, filled, value, name="fill_")


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, converted to this dtype and device) into this tensor in place.

    >>> import ember
    >>> ember.zeros(2).copy_(ember.tensor([1, 2]))
    tensor([1., 2.])
    """
    from .conversion import to

    if not isinstance(src, Tensor):
        from .creation import tensor

        src = tensor(src)
    if not _recording(self, (src,)):
        data = to(src, self.device)._data
        with device_context(self._data):
            assign(self._data, data)
        self._version[0] += 1
        return self

    def copied(dst, s):
        s = to(s, dst.device, dst.dtype)
        return F.add(F.mul(dst, 0), s)

    return apply_inplace(self, copied, src, name="copy_")


def _iop(name):
    fn = {"add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "pow_": pow_}[name]

    def iop(self, other):
        return fn(self, other)

    iop.__name__ = f"__i{name[:-1]}__"
    return iop


__all__: list = []
TENSOR_METHODS = {
    "add_": add_,
    "sub_": sub_,
    "mul_": mul_,
    "div_": div_,
    "pow_": pow_,
    "clamp_": clamp_,
    "clip_": clamp_,
    "zero_": zero_,
    "fill_": fill_,
    "copy_": copy_,
    "__iadd__": _iop("add_"),
    "__isub__": _iop("sub_"),
    "__imul__": _iop("mul_"),
    "__itruediv__": _iop("div_"),
    "__ipow__": _iop("pow_"),
}
