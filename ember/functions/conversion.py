"""Moving and converting tensors: ``to``, ``cpu``, ``cuda``, ``type``, ``float``..., ``clone``.

>>> import ember
>>> ember.ones(2).to(ember.int64).dtype
ember.int64
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import dtypes as _dt
from .._tensor import Tensor
from ..backend import Device, device_of, to_device
from ..ops.base import Op, Spec, apply
from ..ops.elementwise import cast


@dataclass(frozen=True)
class ToDevice(Op):
    """Copy to another device; the gradient is copied back."""

    device: Device

    def forward(self, xp, x):
        return to_device(x, self.device)

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype, self.device)

    def vjp(self, g, out, x):
        return (apply(ToDevice(x.device), g),)


@dataclass(frozen=True)
class Clone(Op):
    def forward(self, xp, x):
        return x.copy()

    def infer(self, x):
        return Spec(tuple(x.shape), x.dtype)

    def vjp(self, g, out, x):
        return (g,)


def _parse_to(args: tuple, kwargs: dict):
    """PyTorch's three forms: ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, non_blocking=False, copy=False)`` and
    ``to(tensor, non_blocking=False, copy=False)``.
    """
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    other = kwargs.pop("tensor", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to: unexpected keyword arguments {sorted(kwargs)}")
    flags = []
    for a in args:
        if isinstance(a, bool):
            flags.append(a)
        elif flags:
            raise TypeError(f"to: unexpected argument {a!r} after non_blocking/copy")
        elif isinstance(a, Tensor):
            other = a
        elif isinstance(a, _dt.DType) or a in (float, int, bool) or hasattr(a, "_ember_dtype"):
            dtype = a
        elif isinstance(a, (str, Device, int)):
            device = a
        elif a is None:
            continue
        else:
            raise TypeError(
                f"to: expected a dtype, a device or a tensor, got {type(a).__name__} {a!r}"
            )
    if other is not None:
        dtype, device = other.dtype, other.device
    if len(flags) > 2:
        raise TypeError("to: too many positional arguments")
    if len(flags) == 2:
        copy = flags[1]
    return dtype, device, copy


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """Convert dtype and/or move device; returns ``self`` when nothing changes (unless copy=True).

    Forms: ``to(dtype)``, ``to('cuda')``, ``to('cuda', ember.float16)``, ``to(other_tensor)``,
    ``to(device=..., dtype=..., non_blocking=..., copy=...)``.

    >>> import ember
    >>> ember.ones(1).to("cpu", ember.float64).dtype
    ember.float64
    >>> x = ember.ones(1); x.to(ember.float32) is x
    True
    """
    dtype, device, copy = _parse_to(args, dict(kwargs)) if args or kwargs else (None, None, 0)
    out = self
    if device is not None:
        dev = Device(device)
        if dev != device_of(self._data):
            out = apply(ToDevice(dev), out)
    if dtype is not None:
        out = _cast(out, _dt.to_dtype(dtype))
    if copy and out is self:
        out = clone(self)
    return out


def cpu(self: Tensor, memory_format=None) -> Tensor:
    """This tensor on the CPU (itself if already there).

    >>> import ember
    >>> x = ember.ones(1); x.cpu() is x
    True
    """
    return to(self, "cpu")


def cuda(self: Tensor, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
    """This tensor on a GPU (``cuda:0`` unless given); a clear ``DeviceError`` without one."""
    dev = Device("cuda", device) if isinstance(device, int) or device is None else Device(device)
    return to(self, dev)


def type_(self: Tensor, dtype=None, non_blocking: bool = False):
    """With no argument, the legacy type name (``'ember.FloatTensor'``); else convert.

    >>> import ember
    >>> ember.ones(1).type()
    'ember.FloatTensor'
    >>> ember.ones(1).type(ember.LongTensor).dtype
    ember.int64
    """
    from .._legacy import legacy_name, legacy_type

    if dtype is None:
        return legacy_name(self)
    if isinstance(dtype, str):
        dtype = legacy_type(dtype)
    out = to(self, _dt.to_dtype(dtype))
    if hasattr(dtype, "_ember_device"):  # a legacy type also says where: ember.FloatTensor = cpu
        out = to(out, dtype._ember_device or "cpu")
    return out


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage (differentiable).

    >>> import ember
    >>> ember.ones(2).clone()
    tensor([1., 1.])
    """
    return apply(Clone(), input)


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    """Itself when row-major contiguous, else a contiguous copy (differentiable).

    >>> import ember
    >>> x = ember.ones(2, 3); x.contiguous() is x
    True
    """
    if self._data.flags.c_contiguous:
        return self
    return clone(self)


def _cast(x: Tensor, dt: _dt.DType) -> Tensor:
    """``cast``, but a non-floating result carries no history (it has no gradient in PyTorch)."""
    out = cast(x, dt)
    if out._node is not None and not dt.is_floating_point:
        out._node = None
        out._requires_grad = False
    return out


def _caster(dt):
    def convert(self: Tensor, memory_format=None) -> Tensor:
        return _cast(self, dt)

    convert.__name__ = convert.__qualname__ = dt.name
    convert.__doc__ = f"This tensor as {dt} (itself when it already is; differentiable)."
    return convert


def numel(input: Tensor) -> int:
    """Number of elements of a tensor.

    >>> import ember
    >>> ember.numel(ember.zeros(2, 3))
    6
    """
    return input._data.size


__all__ = ["clone", "numel"]
TENSOR_METHODS = {
    "to": to,
    "cpu": cpu,
    "cuda": cuda,
    "type": type_,
    "clone": clone,
    "contiguous": contiguous,
    "float": _caster(_dt.float32),
    "double": _caster(_dt.float64),
    "half": _caster(_dt.float16),
    "bfloat16": _caster(_dt.bfloat16),
    "long": _caster(_dt.int64),
    "int": _caster(_dt.int32),
    "short": _caster(_dt.int16),
    "char": _caster(_dt.int8),
    "byte": _caster(_dt.uint8),
    "bool": _caster(_dt.bool_),
}
