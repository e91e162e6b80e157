"""PyTorch's ``out=`` keyword for the public functions (``ember.add(x, y, out=r)``).

One wrapper serves every function in ``OUT``: it runs the function as usual, then writes the
result into ``out`` through the in-place machinery (``inplace.apply_inplace``: the version
counter bumps, views write into their base, ``ember.compile`` records the write) and returns
``out`` itself. As in PyTorch:

- an ``out`` of another shape is resized (with a UserWarning when it had elements);
- the result is cast to ``out``'s dtype when ``can_cast`` allows it (``"exact"`` functions,
  the matmul family, want ``out``'s dtype to be the result's), and a ``dtype=`` argument must
  be ``out``'s dtype; creation functions make their values in ``out``'s dtype and device;
- functions returning ``(values, indices)`` take a tuple of tensors;
- autocast leaves them alone (they compute in their inputs' dtypes);
- a result that requires grad (or a differentiable result with an ``out`` that requires grad)
  is refused while grad mode is on: out= writes are not differentiable.

The wrapped functions are the ``ember.*`` names (``add_out_argument`` puts them there); the
functions in ``ember.functions`` that the library itself calls keep their plain signatures.

>>> import ember
>>> r = ember.empty(2)
>>> ember.add(ember.ones(2), 1, out=r) is r, r
(True, tensor([2., 2.]))
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Callable

import numpy as np

from .. import dtypes as _dt
from .._config import state
from .._errors import AutogradError, DeviceError, DTypeError, EmberError
from .._tensor import Tensor
from ..amp.autocast_mode import without_autocast
from ..backend import xp_of
from ..backend.cuda import device_context
from ..ops.elementwise import cast
from ..storage import root_array, storage_offset
from .inplace import apply_inplace
from .wrap_each import wrap_each

_CAST = """
    add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow
    float_power square reciprocal maximum minimum atan2 arctan2 xlogy logaddexp logaddexp2
    hypot copysign fmax fmin exp exp2 expm1 log log1p log2 log10 sqrt rsqrt sin cos tan sinh
    cosh asin acos atan arcsin arccos arctan tanh sigmoid erf erfc erfinv logit deg2rad
    rad2deg sinc i0 lgamma digamma addcmul addcdiv lerp kron outer addr diff
    eq ne lt le gt ge greater greater_equal less less_equal not_equal
    logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor
    mean var std logsumexp max min cat concat concatenate stack hstack vstack column_stack
"""
_EXACT = """
    neg negative abs absolute sign sgn floor ceil trunc fix round frac nan_to_num heaviside
    clamp clip clamp_min clamp_max where signbit isposinf isneginf isin bitwise_not
    mm matmul bmm mv dot inner addmm addmv baddbmm tensordot
    amax amin argmax argmin all any norm quantile nanquantile logcumsumexp
    cummax cummin aminmax median nanmedian kthvalue mode sort topk msort softmax log_softmax
    gather scatter scatter_add index_select masked_select take take_along_dim index_add
    index_copy tril triu diag cross histc nonzero searchsorted bucketize multinomial
    chain_matmul renorm histogram
"""
_DTYPE = "sum prod cumsum cumprod nansum nanmean"
_CREATION = "zeros ones empty full arange linspace logspace eye rand randn randint randperm normal"

OUT: dict[str, str] = {
    **dict.fromkeys(_CAST.split(), "cast"),
    **dict.fromkeys(_EXACT.split(), "exact"),
    **dict.fromkeys(_DTYPE.split(), "dtype"),
    **dict.fromkeys(_CREATION.split(), "creation"),
    "bernoulli": "convert",
}
"""The ``ember.*`` functions that take ``out=`` (those PyTorch 2.13's take it for), each with
how PyTorch's kernel meets ``out``'s dtype: ``cast`` (the result is cast when ``can_cast``
allows), ``exact`` (``out`` must have the result's dtype, as must every ``out`` of a
``(values, indices)`` result), ``dtype`` (``out``'s dtype is the ``dtype=`` the function
computes in), ``creation`` (made in ``out``'s dtype and on its device) or ``convert`` (any
dtype: bernoulli's 0/1 draws)."""


def add_out_argument(namespace: dict) -> None:
    """Replace each function of ``OUT`` in ``namespace`` (``ember``'s globals) by one taking
    ``out=``; aliases (``ember.absolute`` and ``ember.abs``) stay one object.

    >>> import ember
    >>> ns = {"neg": ember.functions.elementwise.neg}
    >>> add_out_argument(ns)
    >>> ns["neg"](ember.ones(1), out=ember.empty(0))
    tensor([-1.])
    """
    wrap_each(namespace, OUT, lambda fn, name: _with_out(fn, name, OUT[name]))


def _with_out(fn: Callable, name: str, kind: str) -> Callable:
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        _check_kind(out, name)
        requested = kwargs.get("dtype")
        if kind in ("dtype", "creation") and requested is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype
        if kind == "creation":
            kwargs.setdefault("device", out.device)
        result = without_autocast(fn, *args, **kwargs)  # out= ops are not autocast
        if isinstance(result, tuple):
            if isinstance(out, Tensor) or len(out) != len(result):
                n = 1 if isinstance(out, Tensor) else len(out)
                raise DTypeError(
                    f"{name}(): out= must be a tuple of {len(result)} tensors here, got {n}"
                )
            _check_grad(name, result, tuple(out))
            written = [_write(o, r, name, "exact", requested) for o, r in zip(out, result)]
            return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
        if not isinstance(out, Tensor):
            raise DTypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        _check_grad(name, (result,), (out,))
        return _write(out, result, name, kind, requested)

    params = list(inspect.signature(fn).parameters.values())
    where = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(where, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    call.__signature__ = inspect.Signature(params, return_annotation=inspect.Signature.empty)
    return call


def _check_kind(out, name: str) -> None:
    items = out if isinstance(out, (tuple, list)) else (out,)
    for o in items:
        if not isinstance(o, Tensor):
            raise DTypeError(
                f"{name}(): argument 'out' must be a Tensor or a tuple of Tensors, "
                f"not {type(o).__name__}"
            )


def _check_grad(name: str, results: tuple, outs: tuple) -> None:
    if not state.grad_enabled:
        return
    if any(r._requires_grad for r in results) or any(
        o._requires_grad and r.dtype.is_floating_point for o, r in zip(outs, results)
    ):
        raise AutogradError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def _write(out: Tensor, result: Tensor, name: str, kind: str, requested) -> Tensor:
    if result.device != out.device:
        raise DeviceError(
            f"{name}(): expected out tensor to have device {result.device}, but got "
            f"{out.device} instead (out= can't move the result between devices)"
        )
    if requested is not None and _dt.to_dtype(requested) is not out.dtype:
        raise DTypeError(
            f"{name}(): dtype {_dt.to_dtype(requested)} does not match the dtype of the out "
            f"parameter ({out.dtype})"
        )
    if kind == "exact" and result.dtype is not out.dtype:
        raise DTypeError(
            f"{name}(): expected out tensor to have dtype {result.dtype}, but got {out.dtype} "
            "instead"
        )
    if kind == "convert" and result.dtype is not out.dtype:
        result = cast(result, out.dtype)
    if tuple(out.shape) != tuple(result.shape):
        _resize(out, tuple(result.shape), name)
    return apply_inplace(out, _value_of, result, name=name)


def _value_of(_old: Tensor, result: Tensor) -> Tensor:
    return result


def _resize(out: Tensor, shape: tuple, name: str) -> None:
    """Give ``out`` the result's shape, as PyTorch resizes an out= argument: in place in its
    storage (a view keeps writing into its base) when the new size fits after its offset,
    else in fresh memory."""
    if out.numel():
        warnings.warn(
            f"{name}(): an output with one or more elements was resized since it had shape "
            f"{list(out.shape)}, which does not match the required output shape {list(shape)}. "
            "PyTorch deprecates this: pass an out tensor of the result's shape, or one with zero "
            "elements.",
            UserWarning,
            stacklevel=4,
        )
    data = out._data
    if getattr(data, "is_symbol", False):
        raise EmberError(
            f"{name}(): can't resize the symbolic out tensor of shape {tuple(out.shape)} to "
            f"{shape}: pass an out tensor of the result's shape"
        )
    root = root_array(data)
    start = storage_offset(data) * data.itemsize
    end = start + math.prod(shape) * data.itemsize
    with device_context(data):
        if root.flags.c_contiguous and end <= root.nbytes:
            flat = root.reshape(-1).view(np.uint8)[start:end]
            out._data = flat.view(data.dtype).reshape(shape)
        else:
            out._data = xp_of(data).empty(shape, dtype=data.dtype)
    out._base = None  # the memory stays shared; the view's recipe (shape) no longer holds
    out._view_ops = None
    out._readonly = False
