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


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to: unexpected arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (_dt.DType, type)) or hasattr(a, "_ember_dtype"):
            dtype = a
        elif isinstance(a, (str, Device, int)):
            if isinstance(a, str) and a.removeprefix("ember.").removeprefix("torch.") in _dt._BY_NAME and ":" not in a and a not in ("cpu", "cuda"):
                dtype = a
            else:
                device = a
        elif isinstance(a, bool):
            pass
        else:
            raise TypeError(f"to: unexpected argument {a!r}")
    return dtype, device, copy


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """Convert dtype and/or move device: ``to(dtype)``, ``to('cuda')``, ``to(other)``.

    >>> import ember
    >>> ember.ones(1).to("cpu", ember.float64).dtype
    ember.float64
    """
    dtype, device, copy = _parse_to(args, dict(kwargs))
    out = self
    if device is not None:
        dev = Device(device)
        if dev != device_of(self._data):
            out = apply(ToDevice(dev), out)
    if dtype is not None:
        out = cast(out, _dt.to_dtype(dtype))
    if copy and out is self:
        out = clone(self)
    return out


def cpu(self: Tensor) -> Tensor:
    """This tensor on the CPU (itself if already there)."""
    return to(self, "cpu")


def cuda(self: Tensor, device=None, non_blocking: bool = False) -> Tensor:
    """This tensor on a GPU (``cuda:0`` unless given)."""
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
    from .._legacy import legacy_name

    if dtype is None:
        return legacy_name(self)
    device = getattr(dtype, "_ember_device", None)
    out = to(self, _dt.to_dtype(dtype))
    return to(out, device) if device is not None else out


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage (differentiable).

    >>> import ember
    >>> ember.ones(2).clone()
    tensor([1., 1.])
    """
    return apply(Clone(), input)


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    """Itself when row-major contiguous, else a contiguous copy."""
    if self._data.flags.c_contiguous:
        return self
    return clone(self)


def _caster(dt):
    def convert(self: Tensor, memory_format=None) -> Tensor:
        return cast(self, dt)

    convert.__doc__ = f"This tensor as {dt}."
    return convert



__all__ = ["clone"]
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
