"""Sampling: bernoulli, multinomial, normal, poisson, and the in-place fills ``uniform_``,
``normal_``, ``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``,
``random_``.

Draws come from ``ember.random`` on the tensor's device (cuRAND on a GPU, never drawn on the
host and copied, except ``poisson``), follow ``ember.manual_seed`` and take ``generator=``.
Results carry no gradient, as in PyTorch.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> ember.empty(3).uniform_(-1, 1).abs().max().item() <= 1
True
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from .. import random as _random
from .._config import no_grad
from .._errors import DTypeError, ShapeError
from .._tensor import Tensor
from . import creation as C
from .inplace import check_inplace_allowed


def _uniform(shape, dtype: _dt.DType, device, generator) -> Tensor:
    return Tensor._make(_random.uniform(tuple(shape), dtype.np, device, generator))


def _normal(shape, dtype: _dt.DType, device, generator) -> Tensor:
    return Tensor._make(_random.normal(tuple(shape), dtype.np, device, generator))


def _float_dtype(t: Tensor, name: str) -> _dt.DType:
    if not t.dtype.is_floating_point:
        raise DTypeError(f"{name}: expected a floating tensor, got {t.dtype}")
    return t.dtype


def _fill(self: Tensor, values: Tensor, name: str) -> Tensor:
    check_inplace_allowed(self, name)
    with no_grad():
        self.copy_(values)
    return self


def _draw_like(self: Tensor, name: str, generator, compute) -> Tensor:
    """Fill ``self`` with ``compute(u)`` of uniform [0, 1) draws (in float64 for accuracy on
    the CPU, float32 on a GPU) cast to its dtype."""
    dt = _float_dtype(self, name)
    work = _dt.float64 if self.device.type == "cpu" or dt is _dt.float64 else _dt.float32
    with no_grad():
        values = compute(_uniform(self.shape, work, self.device, generator))
    return _fill(self, values.to(dt), name)


# -- in-place fills ----------------------------------------------------------------------------


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None, **kwargs):
    """Fill with numbers drawn uniformly from [from, to).

    >>> import ember
    >>> w = ember.empty(1000).uniform_(2, 3)
    >>> bool((w >= 2).all() and (w < 3).all())
    True
    """
    from_ = kwargs.pop("from", from_)
    dt = _float_dtype(self, "uniform_")
    if from_ > to:
        raise ShapeError(f"uniform_: expects from <= to, got from={from_} and to={to}")
    with no_grad():
        u = _uniform(self.shape, dt, self.device, generator)
        values = u * (to - from_) + from_
    return _fill(self, values, "uniform_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with numbers drawn from N(mean, std²).

    >>> import ember
    >>> ember.empty(2, 3).normal_(0, 0.02).shape
    ember.Size([2, 3])
    """
    dt = _float_dtype(self, "normal_")
    if std < 0:
        raise ShapeError(f"normal_: expects std >= 0.0, got std={std}")
    with no_grad():
        values = _normal(self.shape, dt, self.device, generator) * std + mean
    return _fill(self, values, "normal_")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std²)) draws.

    >>> import ember
    >>> bool((ember.empty(5).log_normal_() > 0).all())
    True
    """
    dt = _float_dtype(self, "log_normal_")
    if std <= 0:
        raise ShapeError(f"log_normal_: expects std > 0.0, got std={std}")
    with no_grad():
        values = (_normal(self.shape, dt, self.device, generator) * std + mean).exp()
    return _fill(self, values, "log_normal_")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with draws from the exponential distribution of rate ``lambd``.

    >>> import ember
    >>> bool((ember.empty(5).exponential_(2.0) >= 0).all())
    True
    """
    if lambd <= 0:
        raise ShapeError(f"exponential_: expects lambd > 0.0, got lambd={lambd}")
    return _draw_like(self, "exponential_", generator, lambda u: -(-u).log1p() / lambd)


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...).

    >>> import ember
    >>> bool((ember.empty(5).geometric_(0.5) >= 1).all())
    True
    """
    if not 0 < p < 1:
        raise ShapeError(f"geometric_: expects p in (0, 1), got p={p}")
    scale = 1.0 / math.log1p(-p)
    return _draw_like(
        self, "geometric_", generator, lambda u: ((-u).log1p() * scale).ceil().clamp(min=1)
    )


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with draws from the Cauchy distribution.

    >>> import ember
    >>> ember.empty(4).cauchy_().shape
    ember.Size([4])
    """
    if sigma <= 0:
        raise ShapeError(f"cauchy_: expects sigma > 0.0, got sigma={sigma}")
    return _draw_like(
        self, "cauchy_", generator, lambda u: ((u - 0.5) * math.pi).tan() * sigma + median
    )


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number or a tensor of probabilities), else 0.

    >>> import ember
    >>> ember.empty(3).bernoulli_(1.0)
    tensor([1., 1., 1.])
    """
    probs = p if isinstance(p, Tensor) else None
    if probs is None and not 0 <= p <= 1:
        raise ShapeError(f"bernoulli_: expects 0 <= p <= 1, got p={p}")
    with no_grad():
        u = _uniform(self.shape, _dt.float64 if self.device.type == "cpu" else _dt.float32,
                     self.device, generator)  # fmt: skip
        values = u < (probs.to(u.dtype) if probs is not None else p)
    return _fill(self, values.to(self.dtype), "bernoulli_")


def random_(self: Tensor, from_=0, to=None, *, generator=None, **kwargs) -> Tensor:
    """Fill with integers drawn uniformly from [from, to); ``random_(to)`` means [0, to), and
    without ``to`` the range ends at the largest integer the dtype holds exactly.

    >>> import ember
    >>> bool((ember.empty(10).random_(3) < 3).all())
    True
    """
    from_ = kwargs.pop("from", from_)
    if to is None and from_ != 0 and "from" not in kwargs:
        from_, to = 0, from_
    dt = self.dtype
    if to is None:
        if dt.is_floating_point:
            to = 2 ** (np.finfo(np.float32 if dt is _dt.bfloat16 else dt.np).nmant + 1) + 1
            if dt is _dt.bfloat16:
                to = 2**8 + 1
        elif dt is _dt.bool_:
            to = 2
        else:
            to = int(np.iinfo(dt.np).max) + 1
    if from_ >= to:
        raise ShapeError(f"random_: expects from < to, got from={from_} and to={to}")
    arr = _random.integers(int(from_), int(to), tuple(self.shape), np.int64, self.device, generator)
    return _fill(self, Tensor._make(arr).to(dt), "random_")


# -- functions ---------------------------------------------------------------------------------


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """1 with the probability in each element of ``input`` (or ``p``), else 0.

    >>> import ember
    >>> ember.bernoulli(ember.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    if p is None:
        if not input.dtype.is_floating_point:
            raise DTypeError(
                f"bernoulli: expected a floating tensor of probabilities, got {input.dtype}"
            )
        with no_grad():
            bad = bool(((input < 0) | (input > 1)).any().item())
        if bad:
            raise ShapeError("bernoulli: all probabilities must be in [0, 1]")
        return bernoulli_(C.empty_like(input.detach()), input.detach(), generator=generator)
    return bernoulli_(C.empty_like(input.detach()), p, generator=generator)


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator=None
) -> Tensor:
    """``num_samples`` category indices per row, drawn with probability proportional to the
    (non-negative) weights in ``input`` (1-D or 2-D); without replacement they are distinct.

    >>> import ember
    >>> ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
    tensor([1, 1])
    """
    if input.ndim not in (1, 2):
        raise ShapeError(
            f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}"
        )
    if not input.dtype.is_floating_point:
        raise DTypeError(
            f"multinomial: only supports floating-point dtypes for input, got {input.dtype}"
        )
    if num_samples <= 0:
        raise ShapeError(f"multinomial: cannot sample n_sample <= 0 samples, got {num_samples}")
    with no_grad():
        w = (
            input.detach()
            .reshape(-1, input.shape[-1])
            .to(_dt.float64 if input.device.type == "cpu" else _dt.float32)
        )
        if not bool(w.isfinite().all().item()) or bool((w < 0).any().item()):
            raise ShapeError(
                "multinomial: probability tensor contains either inf, nan or element < 0"
            )
        total = w.sum(1, keepdim=True)
        if bool((total <= 0).any().item()):
            raise ShapeError(
                "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"
            )
        rows, k = w.shape
        if not replacement:
            nonzero = int((w > 0).sum(1).min().item())
            if num_samples > nonzero:
                raise ShapeError(
                    f"multinomial: cannot sample {num_samples} > prob_dist.size(-1) samples "
                    f"without replacement (only {nonzero} categories have non-zero weight)"
                )
            u = _uniform((rows, k), w.dtype, input.device, generator).clamp(min=1e-30)
            keys = u.log() / w  # Efraimidis-Spirakis: the largest u ** (1 / w) win
            out = keys.topk(num_samples, dim=1).indices
        else:
            cdf = (w / total).cumsum(1)
            u = _uniform((rows, num_samples), w.dtype, input.device, generator)
            out = (cdf.unsqueeze(1) <= u.unsqueeze(2)).sum(2).clamp(max=k - 1)
    out = out.to(_dt.int64)
    return out.reshape(-1) if input.ndim == 1 else out


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None) -> Tensor:
    """Draws from N(mean, std²): ``mean`` and ``std`` tensors (broadcast) or numbers (then
    ``size`` gives the shape).

    >>> import ember
    >>> ember.normal(ember.zeros(3), 1.0).shape, ember.normal(0.0, 1.0, size=(2,)).shape
    (ember.Size([3]), ember.Size([2]))
    """
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise ShapeError("normal: give mean or std as a tensor, or a size")
        if std < 0:
            raise ShapeError(f"normal: expects std >= 0.0, got std={std}")
        out = C.empty(*size, dtype=dtype, device=device)
        return normal_(out, float(mean), float(std), generator=generator)
    with no_grad():
        if isinstance(std, Tensor) and bool((std < 0).any().item()):
            raise ShapeError("normal: expects all elements of std >= 0.0")
        ref = tensors[0]
        dt = _dt.result_type(*tensors) if len(tensors) == 2 else ref.dtype
        shape = _backend_shape(mean, std)
        z = _normal(shape, dt, ref.device, generator)
        m = mean.detach() if isinstance(mean, Tensor) else mean
        s = std.detach() if isinstance(std, Tensor) else std
        return z * s + m


def _backend_shape(a, b) -> tuple:
    from .._shape import broadcast_shapes

    shapes = [tuple(t.shape) for t in (a, b) if isinstance(t, Tensor)]
    return broadcast_shapes("normal", *shapes)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Draws from Poisson distributions with the rates in ``input`` (drawn on the host).

    >>> import ember
    >>> ember.poisson(ember.zeros(3))
    tensor([0., 0., 0.])
    """
    if not input.dtype.is_floating_point:
        raise DTypeError(f"poisson: expected a floating tensor of rates, got {input.dtype}")
    rates = _backend.to_device(input.detach()._data, _backend.CPU).astype(np.float64)
    if (rates < 0).any() or not np.isfinite(rates).all():
        raise ShapeError("poisson: rates must be finite and non-negative")
    draws = _random.rng(generator).poisson(rates).astype(input._data.dtype)
    return Tensor._make(_backend.to_device(draws, input.device))


__all__ = ["bernoulli", "multinomial", "normal", "poisson"]

TENSOR_METHODS = {
    "bernoulli": bernoulli,
    "multinomial": multinomial,
    "uniform_": uniform_,
    "normal_": normal_,
    "log_normal_": log_normal_,
    "exponential_": exponential_,
    "geometric_": geometric_,
    "cauchy_": cauchy_,
    "bernoulli_": bernoulli_,
    "random_": random_,
}
