"""Legacy tensor-type names older tutorials use: ``ember.FloatTensor``, ``ember.cuda.LongTensor``...

>>> import ember
>>> x = ember.ones(2).type(ember.DoubleTensor); x.dtype
ember.float64
>>> ember.FloatTensor([1, 2])
tensor([1., 2.])
>>> isinstance(ember.ones(2), ember.FloatTensor), ember.LongTensor(2).shape
(True, ember.Size([2]))
"""

from __future__ import annotations

from . import dtypes as _dt
from .backend import cuda as _cuda

_NAMES = {
    "FloatTensor": _dt.float32,
    "DoubleTensor": _dt.float64,
    "HalfTensor": _dt.float16,
    "BFloat16Tensor": _dt.bfloat16,
    "ByteTensor": _dt.uint8,
    "CharTensor": _dt.int8,
    "ShortTensor": _dt.int16,
    "IntTensor": _dt.int32,
    "LongTensor": _dt.int64,
    "BoolTensor": _dt.bool_,
}
_BY_DTYPE = {dt: name for name, dt in _NAMES.items()}


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj) -> bool:
        from ._tensor import Tensor

        return (
            isinstance(obj, Tensor)
            and obj.dtype is cls._ember_dtype
            and (obj.device.type == "cuda") == (cls._ember_device is not None)
        )

    def __repr__(cls) -> str:
        return f"<class '{cls._prefix}.{cls.__name__}'>"

    @property
    def dtype(cls):
        return cls._ember_dtype

    @property
    def is_cuda(cls) -> bool:
        return cls._ember_device is not None


def _make(name: str, dtype: _dt.DType, device: str | None):
    def __new__(cls, *args, device=None):
        from ._tensor import Tensor

        t = Tensor(*args, dtype=cls._ember_dtype)
        dev = device or cls._ember_device
        return t.to(dev) if dev is not None else t

    prefix = "ember.cuda" if device else "ember"
    return _LegacyTensorType(
        name,
        (),
        {"__new__": __new__, "_ember_dtype": dtype, "_ember_device": device, "_prefix": prefix},
    )


CPU_TYPES = {name: _make(name, dt, None) for name, dt in _NAMES.items()}
CUDA_TYPES = {name: _make(name, dt, "cuda") for name, dt in _NAMES.items()}
_cuda.register_legacy_types(CUDA_TYPES)  # ember.cuda.FloatTensor, from above the backend


def legacy_type(name: str):
    """The legacy type for ``'ember.FloatTensor'``, ``'torch.cuda.LongTensor'`` and the like."""
    from ._errors import DTypeError

    parts = name.split(".")
    table = CUDA_TYPES if parts[-2:-1] == ["cuda"] else CPU_TYPES
    if parts[0] not in ("ember", "torch") or parts[-1] not in table or len(parts) > 3:
        raise DTypeError(f"type: invalid type {name!r} (expected e.g. 'ember.FloatTensor')")
    return table[parts[-1]]


def legacy_name(t) -> str:
    """``'ember.FloatTensor'`` or ``'ember.cuda.FloatTensor'`` for a tensor."""
    prefix = "ember.cuda" if t.device.type == "cuda" else "ember"
    return f"{prefix}.{_BY_DTYPE[t.dtype]}"
