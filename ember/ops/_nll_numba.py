"""numba kernels for ``NllLoss`` and ``NllLossGrad`` on the CPU (the ops' overrides in
``ember.ops.loss``): one pass over the targets each.

The ops' NumPy bodies make about ten calls each (a mask, ``where``, ``clip``,
``take_along_axis``, a sum, a division under ``errstate``; the gradient a one-hot comparison),
which took 20 and 22 us on a 64 x 10 batch, and 67 and 46 us inside a training step, where the
convolutions around them leave NumPy's code paths out of the cache. The kernels take about 1.
The reductions add in float64 and round once (the NumPy body adds the float32 losses
pairwise): results agree to float32 rounding.

The layout: log-probabilities (N, C, S) and targets (N, S), S the product of the spatial sizes
(1 for plain classification), both C-contiguous; anything else runs the NumPy body.

>>> import numpy as np
>>> logp = np.log(np.full((2, 4), 0.25, np.float32))
>>> r = nll_loss(logp, np.array([1, -100]), "mean", -100)
>>> r is None or round(float(r), 4) == 1.3863
True
"""

from __future__ import annotations

import numpy as np

from ..backend import jit as _jit

SOURCE = (
    _jit.HEADER
    + """OPTS = dict(cache=True, nogil=True, error_model="numpy")
FLOATS = ("float32", "float64")
I = types.int64
B = types.boolean


@njit(inline="always")
def _class(target, i, j, c, ignore, has_ignore):
    # the class of target (i, j), clamped to [0, c) (a check reports those outside), or -1
    # where it is ignored
    k = target[i, j]
    if has_ignore and k == ignore:
        return -1
    return min(max(k, 0), c - 1)


@njit([types.int64(ro(t, 3), ro("int64", 2), I, B, rw(t, 2)) for t in FLOATS], **OPTS)
def picked(logp, target, ignore, has_ignore, out):
    # out (N, S) = -logp at each target's class, 0 where ignored; returns the targets not ignored
    n, c, s = logp.shape
    count = 0
    for i in range(n):
        for j in range(s):
            k = _class(target, i, j, c, ignore, has_ignore)
            if k < 0:
                out[i, j] = 0
            else:
                out[i, j] = -logp[i, k, j]
                count += 1
    return count


@njit(
    [types.Tuple((types.float64, I))(ro(t, 3), ro("int64", 2), I, B) for t in FLOATS],
    **OPTS,
)
def total(logp, target, ignore, has_ignore):
    # (the sum of -logp at the targets' classes, in float64; the targets not ignored)
    n, c, s = logp.shape
    acc = 0.0
    count = 0
    for i in range(n):
        for j in range(s):
            k = _class(target, i, j, c, ignore, has_ignore)
            if k >= 0:
                acc -= logp[i, k, j]
                count += 1
    return acc, count


@njit(
    [types.void(ro(t, 2), ro("int64", 2), I, B, B, rw(t, 3)) for t in FLOATS],
    **OPTS,
)
def grad(g, target, ignore, has_ignore, mean, out):
    # out (N, C, S) = -g (g (N, S), or (1, 1) for a reduced loss; divided by the count of
    # targets not ignored when ``mean``) at each target's class, 0 elsewhere
    n, c, s = out.shape
    zero = out.dtype.type(0)
    count = 1
    if mean:
        count = 0
        for i in range(n):
            for j in range(s):
                if _class(target, i, j, c, ignore, has_ignore) >= 0:
                    count += 1
    scale = out.dtype.type(count)
    whole = g.shape[0] == 1 and g.shape[1] == 1
    flat = out.reshape(-1)
    for q in range(flat.size):
        flat[q] = zero
    for i in range(n):
        for j in range(s):
            k = _class(target, i, j, c, ignore, has_ignore)
            if k >= 0:
                v = g[0, 0] if whole else g[i, j]
                out[i, k, j] = -v / scale if mean else -v


kernel = picked
"""
)


def kernels(dtype):
    """The compiled module when numba serves ``dtype`` and it is ready, else None.

    >>> kernels(np.dtype(np.int64)) is None
    True
    """
    return _jit.float_module("nll", SOURCE, dtype)


def _layout(logp, target):
    """``(module, logp (N, C, S), target (N, S))`` where the kernels serve, else None."""
    if type(logp) is not np.ndarray or type(target) is not np.ndarray or logp.ndim < 2:
        return None
    if target.dtype != np.int64 or not (logp.flags.c_contiguous and target.flags.c_contiguous):
        return None
    n, c = logp.shape[0], logp.shape[1]
    mod = kernels(logp.dtype) if n and c else None  # empty: the body
    if mod is None:
        return None
    s = logp.size // (n * c)
    return mod, logp.reshape(n, c, s), target.reshape(n, s)


def nll_loss(logp, target, reduction: str, ignore):
    """``NllLoss(reduction, ignore)``'s result, or None where the kernels do not serve."""
    found = _layout(logp, target)
    if found is None:
        return None
    mod, lp, t = found
    flag, value = ignore is not None, 0 if ignore is None else ignore
    if reduction == "none":
        out = np.empty(target.shape, logp.dtype)
        mod.picked(lp, t, value, flag, out.reshape(t.shape))
        return out
    acc, count = mod.total(lp, t, value, flag)
    dt = logp.dtype.type
    if reduction == "sum":
        return np.asarray(dt(acc))
    return np.asarray(dt(acc / count) if count else dt(np.nan))


def nll_loss_grad(g, logp, target, reduction: str, ignore):
    """``NllLossGrad(reduction, ignore)``'s result, or None where the kernels do not serve."""
    found = _layout(logp, target)
    if found is None or type(g) is not np.ndarray or g.dtype != logp.dtype:
        return None
    mod, lp, t = found
    if reduction == "none":
        if g.shape != target.shape:
            return None
        g2 = np.ascontiguousarray(g).reshape(t.shape)
    elif g.size == 1:
        g2 = g.reshape(1, 1)
    else:
        return None
    out = np.empty(logp.shape, logp.dtype)
    flag, value = ignore is not None, 0 if ignore is None else ignore
    mod.grad(g2, t, value, flag, reduction == "mean", out.reshape(lp.shape))
    return out
