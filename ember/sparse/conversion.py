"""Moving and casting sparse COO tensors: ``to``, ``cpu``, ``cuda``, ``float()``... act on the
values (dtype and device) and the indices (device only, staying int64); ``clone``.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0]], [1.0]).double()
>>> s.dtype, s._indices().dtype
(ember.float64, ember.int64)
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..backend import Device
from ..functions.conversion import _parse_to
from .tensor import SparseTensor


def to(self: SparseTensor, *args, **kwargs) -> SparseTensor:
    """The sparse tensor with its values cast and/or both parts moved (itself when unchanged).

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0]], [1.0])
    >>> s.to("cpu") is s, s.to(ember.float64).dtype
    (True, ember.float64)
    """
    dtype, device, copy = _parse_to(args, dict(kwargs))
    indices, values = self._idx, self._vals
    if device is not None:
        dev = Device(device)
        indices, values = indices.to(dev), values.to(dev)
    if dtype is not None:
        values = values.to(_dt.to_dtype(dtype))
    if indices is self._idx and values is self._vals:
        return clone(self) if copy else self
    return SparseTensor._build(indices, values, self._size, self._coalesced)


def clone(self: SparseTensor, *, memory_format=None) -> SparseTensor:
    """A copy with its own indices and values (differentiable through the values).

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0]], [1.0]); s.clone()._values() is s._values()
    False
    """
    return SparseTensor._build(self._idx.clone(), self._vals.clone(), self._size, self._coalesced)


def cpu(self: SparseTensor, memory_format=None) -> SparseTensor:
    """The sparse tensor on the CPU (itself if there already).

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0]], [1.0]); s.cpu() is s
    True
    """
    return to(self, "cpu")


def cuda(self: SparseTensor, device=None, non_blocking: bool = False, memory_format=None):
    """The sparse tensor on a GPU (``cuda:0`` unless given)."""
    dev = Device("cuda", device) if isinstance(device, int) or device is None else Device(device)
    return to(self, dev)


def caster(dt: _dt.DType):
    """``float()``, ``double()``...: the values cast to ``dt``."""

    def convert(self: SparseTensor, memory_format=None) -> SparseTensor:
        return to(self, dt)

    convert.__name__ = dt.name
    return convert


CASTS = {
    "float": _dt.float32,
    "double": _dt.float64,
    "half": _dt.float16,
    "bfloat16": _dt.bfloat16,
    "long": _dt.int64,
    "int": _dt.int32,
    "short": _dt.int16,
    "char": _dt.int8,
    "byte": _dt.uint8,
    "bool": _dt.bool_,
}

__all__ = ["to", "clone", "cpu", "cuda", "caster", "CASTS"]
