"""Random sampling: ``bernoulli``, ``multinomial``, ``normal``, ``poisson`` and the in-place
fills ``uniform_``, ``normal_``, ``bernoulli_``, ``exponential_``, ``geometric_``,
``log_normal_``, ``cauchy_`` and ``random_``, with PyTorch's signatures and checks.

Numbers are drawn on the tensor's device (cuRAND on a GPU) from the default generator, or from
``generator=``; ``ember.manual_seed`` makes them reproducible. Samples carry no gradient.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> ember.bernoulli(ember.tensor([0.0, 1.0]))
tensor([0., 1.])
>>> ember.zeros(2, 3).uniform_(-1, 1).shape
ember.Size([2, 3])
"""

from __future__ import annotations

import math
import operator

from .. import dtypes as _dt
from .._config import state
from .._errors import DeviceError, DTypeError, EmberError
from .._tensor import Tensor
from ..ops.base import apply
from ..ops.sampling import Bernoulli, Draw, Multinomial, Normal, Poisson
from .inplace import apply_inplace


def _need_float(x: Tensor, name: str, what: str = "input") -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{name}: expected a floating-point {what}, got {x.dtype}")


# -- functions ------------------------------------------------------------------------------------


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (elementwise), else 0; ``p=`` gives one probability for all.

    The result has ``input``'s shape, dtype and device.

    >>> import ember
    >>> ember.bernoulli(ember.tensor([[1.0, 0.0]]))
    tensor([[1., 0.]])
    >>> ember.bernoulli(ember.zeros(3, dtype=ember.int64), p=1.0)
    tensor([1, 1, 1])
    """
    if p is not None:
        return apply(Draw("bernoulli", (_probability(p, "bernoulli"),), generator), input)
    _need_float(input, "bernoulli", "tensor of probabilities")
    return apply(Bernoulli(generator), input)


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator=None
) -> Tensor:
    """``num_samples`` category indices drawn from each row of the non-negative weights
    ``input`` (1-D or 2-D, not necessarily normalized). Without ``replacement`` the indices of a
    row are distinct, in the order drawn. Returns int64 of shape ``input.shape[:-1] +
    (num_samples,)``.

    >>> import ember
    >>> ember.multinomial(ember.tensor([0.0, 3.0, 0.0]), 1)
    tensor([1])
    >>> sorted(ember.tensor([1.0, 2.0, 0.0, 4.0]).multinomial(3).tolist())
    [0, 1, 3]
    """
    try:
        if isinstance(num_samples, bool):
            raise TypeError
        num_samples = operator.index(num_samples)
    except TypeError:
        raise TypeError(
            f"multinomial: num_samples must be an int, got {type(num_samples).__name__}"
        ) from None
    if input.ndim not in (1, 2):
        raise EmberError(
            f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}"
        )
    if not input.dtype.is_floating_point:
        raise DTypeError(
            f"multinomial: only supports floating-point dtypes for input, got {input.dtype}"
        )
    if num_samples <= 0:
        raise EmberError(f"multinomial: cannot sample n_sample <= 0 samples (got {num_samples})")
    if not replacement and num_samples > input.shape[-1]:
        raise EmberError(
            f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
            f"replacement ({num_samples} > {input.shape[-1]})"
        )
    return apply(Multinomial(num_samples, bool(replacement), generator), input)


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples with the given ``mean`` and ``std``, as PyTorch's overloads:

    - ``normal(mean: Tensor, std: Tensor)``: elementwise, broadcast, in ``mean``'s dtype;
    - ``normal(mean: Tensor, std=1.0)`` and ``normal(mean: float, std: Tensor)``: the tensor's
      shape, dtype and device;
    - ``normal(mean: float, std: float, size)``: a new tensor (``dtype=``, ``device=``,
      ``requires_grad=`` as in ``randn``; the same op, ``ember.ops.random.Random``).

    >>> import ember
    >>> ember.normal(ember.tensor([1.0, 5.0]), 0.0)
    tensor([1., 5.])
    >>> ember.normal(2.0, 0.5, (2, 3)).shape
    ember.Size([2, 3])
    """
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError(
                "normal: with a number for both mean and std, size is required, e.g. "
                "ember.normal(0.0, 1.0, (2, 3))"
            )
        from .creation import _anchor, _drawn, _random_float, _random_op, _size

        std = _std(std, "normal", ">=")
        dt = _random_float(dtype, "normal")
        anchor = _anchor(dt, device)
        if generator is not None and generator.device.type != anchor.device.type:
            raise DeviceError(
                f"normal: expected a '{anchor.device.type}' device type for generator but found "
                f"'{generator.device.type}'"
            )
        op = _random_op("normal", _size((size,), "normal"), (float(mean), std), generator)
        return _drawn(op, anchor, requires_grad)
    if size is not None:
        raise TypeError("normal: size is only taken when mean and std are both numbers")
    if mean_t:
        _need_float(mean, "normal", "mean")
    if std_t:
        _need_float(std, "normal", "std")
    if not std_t:
        std = _scalar_like(_std(std, "normal", ">="), mean)
    elif not mean_t:
        mean = _scalar_like(float(mean), std)
    return apply(Normal(generator), mean, std.to(mean.dtype))


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson counts with the rates in ``input`` (non-negative), in its dtype and device.

    >>> import ember
    >>> ember.poisson(ember.zeros(3))
    tensor([0., 0., 0.])
    >>> ember.poisson(ember.full((2,), 4.0)).dtype
    ember.float32
    """
    _need_float(input, "poisson", "tensor of rates")
    return apply(Poisson(generator), input)


def _scalar_like(value: float, t: Tensor) -> Tensor:
    from .creation import full

    return full((), value, dtype=t.dtype, device=t.device)


def _std(std, name: str, rule: str) -> float:
    std = float(std)
    if not (std >= 0 if rule == ">=" else std > 0):
        raise EmberError(f"{name}: expects std {rule} 0.0, but found std={std}")
    return std


def _probability(p, name: str) -> float:
    p = float(p)
    if not 0 <= p <= 1:
        raise EmberError(f"{name}: expects p to be in [0, 1], but got p={p}")
    return p


# -- in-place fills -------------------------------------------------------------------------------


def _refill(self: Tensor, new, name: str) -> Tensor:
    """Overwrite ``self`` with ``new(src)`` (a tensor of fresh samples) by the in-place rules."""

    def drawn(src: Tensor) -> Tensor:
        out = new(src)
        if src._requires_grad and state.grad_enabled:
            # a non-leaf: the old value is gone, so it gets a zero gradient (as in PyTorch)
            from .creation import ones_like
            from .elementwise import where

            out = where(ones_like(src, dtype=_dt.bool_), out, src)
        return out

    return apply_inplace(self, drawn, name=name)


def _fill(self: Tensor, dist: str, params: tuple, generator, name: str) -> Tensor:
    return _refill(self, lambda src: apply(Draw(dist, params, generator), src), name)


def _need_float_self(self: Tensor, name: str) -> None:
    if not self.dtype.is_floating_point:
        raise DTypeError(f"{name}: needs a floating-point tensor, got {self.dtype}")


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Fill with uniform numbers in [from, to), in place.

    >>> import ember
    >>> x = ember.zeros(1000).uniform_(2, 3)
    >>> bool((x >= 2).all() and (x < 3).all())
    True
    """
    _need_float_self(self, "uniform_")
    a, b = float(from_), float(to)
    if a > b:
        raise EmberError(
            f"uniform_: expects to return a [from, to) range, but found from={a} > to={b}"
        )
    top = float(_dt.finfo(self.dtype).max)
    for what, v in (("from", a), ("to", b)):
        if not -top <= v <= top:
            raise EmberError(f"uniform_: {what}={v} is out of bounds for {self.dtype}")
    if b - a > top:
        raise EmberError(
            f"uniform_: expects to-from <= the largest {self.dtype} ({top}), but found to={b} "
            f"and from={a}"
        )
    return _fill(self, "uniform", (a, b), generator, "uniform_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with normal numbers of the given ``mean`` and ``std``, in place.

    >>> import ember
    >>> ember.zeros(3).normal_(mean=4.0, std=0.0)
    tensor([4., 4., 4.])
    """
    _need_float_self(self, "normal_")
    return _fill(self, "normal", (float(mean), _std(std, "normal_", ">=")), generator, "normal_")


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcastable to this one's
    shape), else 0, in place. Works for every dtype.

    >>> import ember
    >>> ember.zeros(2, dtype=ember.int64).bernoulli_(1.0)
    tensor([1, 1])
    >>> ember.zeros(2).bernoulli_(ember.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    if not isinstance(p, Tensor):
        return _fill(self, "bernoulli", (_probability(p, "bernoulli_"),), generator, "bernoulli_")
    _need_float(p, "bernoulli_", "p")
    probs = p.expand(tuple(self.shape))
    return _refill(
        self, lambda src: apply(Bernoulli(generator), probs).to(self.dtype), "bernoulli_"
    )


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with exponential numbers of rate ``lambd`` (density ``lambd * exp(-lambd * x)``).

    >>> import ember
    >>> bool((ember.zeros(100).exponential_(2.0) >= 0).all())
    True
    """
    _need_float_self(self, "exponential_")
    lambd = float(lambd)
    if not lambd > 0:
        raise EmberError(f"exponential_: expects lambda > 0.0, but found lambda={lambd}")
    return _fill(self, "exponential", (lambd,), generator, "exponential_")


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...).
    Floating and integer tensors.

    >>> import ember
    >>> bool((ember.zeros(100, dtype=ember.int32).geometric_(0.3) >= 1).all())
    True
    """
    if self.dtype is _dt.bool_:
        raise DTypeError("geometric_: not implemented for bool tensors")
    p = float(p)
    if not 0 < p < 1:
        raise EmberError(f"geometric_: expects p to be in (0, 1), but got p={p}")
    return _fill(self, "geometric", (p,), generator, "geometric_")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with ``exp(N(mean, std))`` samples, in place.

    >>> import ember
    >>> bool((ember.zeros(100).log_normal_(0.0, 0.5) > 0).all())
    True
    """
    _need_float_self(self, "log_normal_")
    std = _std(std, "log_normal_", ">")
    return _fill(self, "log_normal", (float(mean), std), generator, "log_normal_")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Cauchy samples ``median + sigma * tan(pi * (u - 1/2))``, in place.

    >>> import ember
    >>> ember.zeros(2, 2).cauchy_().shape
    ember.Size([2, 2])
    """
    _need_float_self(self, "cauchy_")
    sigma = float(sigma)
    if not sigma > 0:
        raise EmberError(f"cauchy_: expects sigma > 0.0, but found sigma={sigma}")
    return _fill(self, "cauchy", (float(median), sigma), generator, "cauchy_")


_UNSET = object()


def _random_bounds(dt: _dt.DType) -> tuple[int, int, int]:
    """(lowest, highest value random_ may write, highest default) for dtype ``dt``."""
    if dt is _dt.bool_:
        return 0, 1, 1
    if dt.is_floating_point:
        digits = 1 - round(math.log2(float(_dt.finfo(dt).eps)))  # 2**digits: the last exact int
        top = min(int(_dt.finfo(dt).max), 2**63 - 1)
        return -top, top, 2**digits
    info = _dt.iinfo(dt)
    return int(info.min), int(info.max), int(info.max)


def random_(self: Tensor, from_=_UNSET, to=_UNSET, *, generator=None) -> Tensor:
    """Fill with random integers, in place, as PyTorch's three forms:

    - ``random_()``: [0, 2**mantissa] for floating dtypes (every value exact), [0, max] for
      integer dtypes, {0, 1} for bool;
    - ``random_(to)``: [0, to);
    - ``random_(from, to)``: [from, to), or [from, that default top] when ``to`` is None.

    >>> import ember
    >>> x = ember.zeros(100, dtype=ember.int8).random_(-3, 3)
    >>> bool((x >= -3).all() and (x < 3).all())
    True
    """
    if from_ is _UNSET:  # random_() or random_(to=...)
        from_, to = 0, None if to is _UNSET else to
    elif to is _UNSET:  # random_(to)
        from_, to = 0, from_
    try:
        low = operator.index(from_)
        high = None if to is None else operator.index(to)
    except TypeError:
        raise TypeError(
            f"random_: from and to must be integers, got from={from_!r}, to={to!r}"
        ) from None
    lowest, highest, default_top = _random_bounds(self.dtype)
    if high is None:
        high = default_top
        if low > high:
            raise EmberError(
                f"random_: expects 'from' <= {high} (the top for {self.dtype}), got from={low}"
            )
    else:
        if low >= high:
            raise EmberError(
                f"random_: expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        high -= 1
    if not lowest <= low <= highest:
        raise EmberError(f"random_: from={low} is out of bounds for {self.dtype}")
    if not lowest <= high <= highest:
        raise EmberError(f"random_: to - 1 = {high} is out of bounds for {self.dtype}")
    return _fill(self, "random", (low, high), generator, "random_")


__all__ = ["bernoulli", "multinomial", "normal", "poisson"]

TENSOR_METHODS = {
    "bernoulli": bernoulli,
    "multinomial": multinomial,
    "uniform_": uniform_,
    "normal_": normal_,
    "bernoulli_": bernoulli_,
    "exponential_": exponential_,
    "geometric_": geometric_,
    "log_normal_": log_normal_,
    "cauchy_": cauchy_,
    "random_": random_,
}
