"""Sampling primitives: Bernoulli, normal, Poisson and multinomial draws, and the distributions
behind the in-place ``uniform_`` / ``normal_`` / ... methods.

Every draw happens where the tensor lives (``ember.random``: NumPy on the CPU, cuRAND on a GPU)
from the default generator or the op's ``generator``. The ops are not differentiable and, like
``DropoutMask``, have side effects, so a compiled graph draws anew on every run. Checks that need
the values (probabilities in [0, 1], non-negative rates) run in ``forward``, so graphs get them too.

>>> import ember
>>> from ember.ops.base import apply
>>> _ = ember.manual_seed(0)
>>> apply(Draw("bernoulli", (1.0,)), ember.zeros(3))
tensor([1., 1., 1.])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .. import random as _random
from .._errors import DeviceError, EmberError
from ..backend import device_of
from .base import Op, Spec, broadcast_shapes


def _compute_dtype(np_dtype) -> np.dtype:
    """float64 stays float64; everything else is computed in float32 and cast at the end."""
    return np.dtype(np.float64) if np.dtype(np_dtype) == np.float64 else np.dtype(np.float32)


class _Source:
    """Uniform / normal / integer draws on one array's device from one generator."""

    def __init__(self, like, generator, op: str) -> None:
        self.device = device_of(like)
        self.generator = generator
        if generator is not None and generator.device.type != self.device.type:
            raise DeviceError(
                f"{op}: expected a '{self.device.type}' device type for generator but found "
                f"'{generator.device.type}'"
            )

    def uniform(self, shape, np_dtype=np.float64):
        return _random.uniform(tuple(shape), np_dtype, self.device, self.generator)

    def normal(self, shape, np_dtype=np.float64):
        return _random.normal(tuple(shape), np_dtype, self.device, self.generator)

    def integers(self, xp, low: int, high: int, shape):
        """int64 integers in [low, high] (both ends included; any int64 range)."""
        if -(2**62) <= low and high < 2**62:
            return _random.integers(low, high + 1, shape, np.int64, self.device, self.generator)
        # wider than cuRAND's randint takes: 64 random bits from two 32-bit halves, reduced
        # modulo the span (PyTorch's way) in uint64 arithmetic, which wraps like int64 does
        halves = [
            _random.integers(0, 2**32, shape, np.int64, self.device, self.generator).astype(
                np.uint64
            )
            for _ in range(2)
        ]
        bits = (halves[0] << np.uint64(32)) | halves[1]
        span = high - low + 1
        if span < 2**64:
            bits = bits % np.uint64(span)
        return (bits + np.uint64(low % 2**64)).view(np.int64)


def _uniform(xp, src, shape, dtype, low, high):
    ct = _compute_dtype(dtype)
    out = (ct.type(low) + ct.type(high - low) * src.uniform(shape, ct)).astype(dtype)
    # rounding (to float16, say) can reach ``high``: PyTorch's GPU kernel maps that to ``low``
    return xp.where(out >= high, out.dtype.type(low), out) if low < high else out


def _normal(xp, src, shape, dtype, mean, std):
    ct = _compute_dtype(dtype)
    return (ct.type(mean) + ct.type(std) * src.normal(shape, ct)).astype(dtype)


def _bernoulli(xp, src, shape, dtype, p):
    return (src.uniform(shape) < p).astype(dtype)


def _exponential(xp, src, shape, dtype, lambd):
    ct = _compute_dtype(dtype)
    return (-xp.log1p(-src.uniform(shape, ct)) / ct.type(lambd)).astype(dtype)


def _geometric(xp, src, shape, dtype, p):
    # the number of trials up to the first success: ceil(log(1 - u) / log(1 - p)), at least 1
    k = xp.ceil(xp.log1p(-src.uniform(shape)) / math.log1p(-p))
    return xp.maximum(k, 1.0).astype(dtype)


def _log_normal(xp, src, shape, dtype, mean, std):
    ct = _compute_dtype(dtype)
    return xp.exp(ct.type(mean) + ct.type(std) * src.normal(shape, ct)).astype(dtype)


def _cauchy(xp, src, shape, dtype, median, sigma):
    ct = _compute_dtype(dtype)
    u = src.uniform(shape, ct)
    return (ct.type(median) + ct.type(sigma) * xp.tan(ct.type(math.pi) * (u - 0.5))).astype(dtype)


def _random_ints(xp, src, shape, dtype, low, high):
    return src.integers(xp, low, high, shape).astype(dtype)


_SAMPLERS = {
    "uniform": _uniform,
    "normal": _normal,
    "bernoulli": _bernoulli,
    "exponential": _exponential,
    "geometric": _geometric,
    "log_normal": _log_normal,
    "cauchy": _cauchy,
    "random": _random_ints,
}


@dataclass(frozen=True)
class Draw(Op):
    """Fresh numbers of ``like``'s shape, dtype and device from distribution ``dist`` with the
    scalar parameters ``params`` (checked by the caller); ``like``'s values are not read."""

    dist: str
    params: tuple = ()
    generator: object = None
    differentiable = False
    has_side_effects = True

    def forward(self, xp, like):
        src = _Source(like, self.generator, self.dist)
        return _SAMPLERS[self.dist](xp, src, like.shape, like.dtype, *self.params)

    def infer(self, like):
        return Spec(tuple(like.shape), like.dtype)


@dataclass(frozen=True)
class Bernoulli(Op):
    """1 with probability ``p`` (elementwise), else 0, in ``p``'s dtype."""

    generator: object = None
    differentiable = False
    has_side_effects = True

    def forward(self, xp, p):
        if not bool(xp.all((p >= 0) & (p <= 1))):
            raise EmberError(
                f"bernoulli: expected all probabilities in [0, 1], but the tensor of shape "
                f"{tuple(p.shape)} has values outside it (or NaN)"
            )
        src = _Source(p, self.generator, "bernoulli")
        return (src.uniform(p.shape) < p).astype(p.dtype)

    def infer(self, p):
        return Spec(tuple(p.shape), p.dtype)


@dataclass(frozen=True)
class Normal(Op):
    """``mean + std * N(0, 1)``, broadcast, in ``mean``'s dtype (both share it)."""

    generator: object = None
    differentiable = False
    has_side_effects = True

    def forward(self, xp, mean, std):
        if not bool(xp.all(std >= 0)):
            raise EmberError(
                f"normal: expects all elements of std >= 0.0 (std of shape {tuple(std.shape)} "
                "has negative or NaN values)"
            )
        shape = broadcast_shapes("normal", tuple(mean.shape), tuple(std.shape))
        src = _Source(mean, self.generator, "normal")
        ct = _compute_dtype(mean.dtype)
        z = src.normal(shape, ct)
        return (mean.astype(ct) + std.astype(ct) * z).astype(mean.dtype)

    def infer(self, mean, std):
        shape = broadcast_shapes("normal", tuple(mean.shape), tuple(std.shape))
        return Spec(shape, mean.dtype)


_LOG_FACTORIAL_SMALL = 10  # PTRS (below) is for rates of 10 and more; inversion under that


def _log_factorial(xp, k):
    """log(k!) for float64 k >= 0: Stirling's series at k + 7, shifted down by recurrence."""
    z = k + 7.0
    series = (
        (z - 0.5) * xp.log(z) - z + 0.5 * math.log(2 * math.pi) + 1 / (12 * z) - 1 / (360 * z**3)
    )
    series = series + 1 / (1260 * z**5)
    for j in range(1, 7):
        series = series - xp.log(k + j)
    return series


def _poisson_small(xp, src, lam):
    """Inversion: count how far a uniform draw climbs the cumulative distribution."""
    u = src.uniform(lam.shape)
    p = xp.exp(-lam)
    cdf = p
    k = xp.zeros(lam.shape, np.float64)
    active = u > cdf
    for j in range(1, 200):  # P(k >= 200) for a rate under 10 is far below float64's reach
        if not bool(active.any()):
            break
        p = p * lam / j
        cdf = cdf + p
        k = k + active
        active = active & (u > cdf)
    return k


def _poisson_ptrs(xp, src, lam):
    """Hörmann's transformed rejection (PTRS, 1993), as NumPy draws rates >= 10."""
    slam, loglam = xp.sqrt(lam), xp.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = xp.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2)
    k = xp.zeros(lam.shape, np.float64)
    todo = xp.arange(lam.shape[0])
    while todo.shape[0]:
        la, aa, bb = lam[todo], a[todo], b[todo]
        u = src.uniform(todo.shape) - 0.5
        v = src.uniform(todo.shape)
        us = 0.5 - xp.abs(u)
        kk = xp.floor((2 * aa / us + bb) * u + la + 0.43)
        quick = (us >= 0.07) & (v <= vr[todo])
        valid = (kk >= 0) & ~((us < 0.013) & (v > us))
        kk_safe = xp.maximum(kk, 0.0)
        lhs = xp.log(v) + log_invalpha[todo] - xp.log(aa / (us * us) + bb)
        rhs = -la + kk_safe * loglam[todo] - _log_factorial(xp, kk_safe)
        ok = quick | (valid & (lhs <= rhs))
        k[todo[ok]] = kk[ok]
        todo = todo[~ok]
    return k


@dataclass(frozen=True)
class Poisson(Op):
    """Poisson counts with the rates in ``rate``, in its dtype."""

    generator: object = None
    differentiable = False
    has_side_effects = True

    def forward(self, xp, rate):
        lam = rate.astype(np.float64).reshape(-1)
        if not bool(xp.all(lam >= 0)):
            raise EmberError(
                f"poisson: invalid Poisson rate, expected rate to be non-negative (the rates of "
                f"shape {tuple(rate.shape)} have negative or NaN values)"
            )
        if not bool(xp.all(xp.isfinite(lam))):
            raise EmberError(f"poisson: expected finite rates, got inf (shape {tuple(rate.shape)})")
        src = _Source(rate, self.generator, "poisson")
        out = xp.zeros(lam.shape, np.float64)
        small = (lam > 0) & (lam < _LOG_FACTORIAL_SMALL)
        large = lam >= _LOG_FACTORIAL_SMALL
        if bool(small.any()):
            out[small] = _poisson_small(xp, src, lam[small])
        if bool(large.any()):
            out[large] = _poisson_ptrs(xp, src, lam[large])
        return out.reshape(rate.shape).astype(rate.dtype)

    def infer(self, rate):
        return Spec(tuple(rate.shape), rate.dtype)


@dataclass(frozen=True)
class Multinomial(Op):
    """``num_samples`` category indices per row of the (1-D or 2-D) weights ``w``: with
    replacement by inverting the cumulative sums, without by an exponential race (each category
    draws an Exp(w) arrival time; the first ``num_samples`` to arrive win, in arrival order,
    which is sequential sampling without replacement)."""

    num_samples: int
    replacement: bool = False
    generator: object = None
    differentiable = False
    has_side_effects = True

    def forward(self, xp, w):
        w2 = w.reshape(-1, w.shape[-1]).astype(np.float64)
        self._check(xp, w2)
        src = _Source(w, self.generator, "multinomial")
        rows, n = w2.shape[0], self.num_samples
        if self.replacement:
            idx = self._with_replacement(xp, src, w2, rows, n)
        else:
            positive = w2 > 0
            arrival = -xp.log1p(-src.uniform(w2.shape)) / xp.where(positive, w2, 1.0)
            arrival = xp.where(positive, arrival, np.inf)
            idx = xp.argsort(arrival, axis=1, kind="stable")[:, :n]
        return idx.astype(np.int64).reshape(tuple(w.shape[:-1]) + (n,))

    def _check(self, xp, w2) -> None:
        if w2.shape[0] == 0:
            return
        if not bool(xp.all(xp.isfinite(w2) & (w2 >= 0))):
            raise EmberError(
                "multinomial: probability tensor contains either `inf`, `nan` or element < 0"
            )
        if not bool(xp.all(w2.sum(axis=1) > 0)):
            raise EmberError(
                "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"
            )
        if not self.replacement and not bool(xp.all((w2 > 0).sum(axis=1) >= self.num_samples)):
            raise EmberError(
                "multinomial: invalid multinomial distribution (with replacement=False, not enough "
                f"non-zero categories to draw {self.num_samples} samples)"
            )

    def _with_replacement(self, xp, src, w2, rows, n):
        cdf = xp.cumsum(w2, axis=1)
        total = cdf[:, -1:]
        # cdf >= total from the last non-zero weight on: pin those to exactly 1 so every draw
        # in [0, 1) lands on a category of non-zero weight
        cdf = xp.where(cdf >= total, 1.0, cdf / total)
        # one searchsorted for all rows: row r's cdf and draws are shifted up by r
        offset = xp.arange(rows, dtype=np.float64)[:, None]
        keys = (cdf + offset).reshape(-1)
        draws = (src.uniform((rows, n)) + offset).reshape(-1)
        c = w2.shape[1]
        idx = xp.searchsorted(keys, draws, side="right").reshape(rows, n) - (offset * c).astype(
            np.int64
        )
        last = c - 1 - xp.argmax((w2 > 0)[:, ::-1], axis=1)[:, None]
        return xp.minimum(idx, last)

    def infer(self, w):
        return Spec(tuple(w.shape[:-1]) + (self.num_samples,), _dt.int64)
