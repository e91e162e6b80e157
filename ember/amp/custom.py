"""``custom_fwd`` / ``custom_bwd``: autocast for ``ember.autograd.Function`` subclasses, as
``torch.amp.custom_fwd`` / ``custom_bwd``.

``custom_fwd(cast_inputs=dtype)`` runs ``forward`` with autocast off and its floating inputs
cast to ``dtype`` (when autocast was on); ``custom_bwd`` runs ``backward`` under the autocast
state ``forward`` saw (the engine otherwise runs backward with autocast off).

>>> import ember
>>> class Square(ember.autograd.Function):
...     @staticmethod
...     @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     @ember.amp.custom_bwd(device_type="cpu")
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2 * x * g
>>> with ember.autocast("cpu"):
...     Square.apply(ember.ones(2).bfloat16()).dtype
ember.float32
"""

from __future__ import annotations

import functools

from .. import dtypes as _dt
from .._tensor import Tensor
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled


def _cast(value, device_type: str, dtype: _dt.DType):
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.dtype is not _dt.float64
        if eligible and value.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: _dt.DType | None = None):
    """Decorate a custom Function's ``forward`` (see the module's example).

    >>> import ember
    >>> callable(ember.amp.custom_fwd(device_type="cpu"))
    True
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        was_on = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not was_on:
            return fwd(*args, **kwargs)
        dtype = _dt.to_dtype(cast_inputs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast(args, device_type, dtype), **_cast(kwargs, device_type, dtype))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom Function's ``backward`` (see the module's example).

    >>> import ember
    >>> callable(ember.amp.custom_bwd(device_type="cpu"))
    True
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


__all__ = ["custom_bwd", "custom_fwd"]
