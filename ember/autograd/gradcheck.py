"""Numerical gradient checks: ``gradcheck`` (first order) and ``gradgradcheck`` (second).

Both compare autograd's vector-Jacobian products with central finite differences, in
float64. The default compares whole Jacobians, as PyTorch does; ``fast_mode=True`` compares
one random direction per input and output (what the op-table tests use).

>>> import ember
>>> x = ember.randn(3, dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
True
>>> ember.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
True
"""

from __future__ import annotations

import numpy as np

from .._errors import AutogradError
from .._tensor import Tensor
from .engine import grad as _grad


class GradcheckError(AutogradError):
    """Analytic and numerical gradients disagree (the message shows both)."""


def _outputs(func, inputs) -> tuple:
    out = func(*inputs)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    return tuple(o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point)


def _diff_inputs(inputs) -> list:
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]


def _directional_numeric(func, inputs, idx, directions, weights, eps) -> float:
    """d/dh sum_o <w_o, f_o(x + h u)> at h = 0, by central differences."""
    saved = [inputs[i]._data.copy() for i in idx]

    def value(sign: float) -> float:
        for k, i in enumerate(idx):
            inputs[i]._data[...] = saved[k] + sign * eps * directions[k]
        outs = _outputs(func, inputs)  # with grad on: func may itself call autograd.grad
        return sum(float(np.sum(np.asarray(o._data, dtype=np.float64) * w)) for o, w in zip(outs, weights))

    try:
        return (value(1.0) - value(-1.0)) / (2 * eps)
    finally:
        for k, i in enumerate(idx):
            inputs[i]._data[...] = saved[k]


def _analytic_vjp(func, inputs, idx, weights) -> list:
    outs = _outputs(func, inputs)
    gouts = [Tensor._make(np.asarray(w, dtype=o._data.dtype)) for o, w in zip(outs, weights)]
    pairs = [(o, g) for o, g in zip(outs, gouts) if o._requires_grad]
    if not pairs:
        return [np.zeros(inputs[i]._data.shape) for i in idx]
    grads = _grad(
        [o for o, _ in pairs], [inputs[i] for i in idx], [g for _, g in pairs],
        allow_unused=True, retain_graph=True,
    )
    return [
        np.zeros(inputs[i]._data.shape) if g is None else np.asarray(g._data, dtype=np.float64)
        for i, g in zip(idx, grads)
    ]


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    fast_mode: bool = False,
    seed: int = 0,
    **_ignored,
) -> bool:
    """Check ``func``'s gradients against finite differences; True, or GradcheckError.

    >>> import ember
    >>> x = ember.rand(4, dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradcheck(ember.exp, (x,), fast_mode=True)
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    idx = _diff_inputs(inputs)
    if not idx:
        raise AutogradError("gradcheck: no input requires grad")
    outs = _outputs(func, inputs)
    rng = np.random.default_rng(seed)
    if fast_mode:
        dirs = [rng.standard_normal(inputs[i]._data.shape) for i in idx]
        weights = [rng.standard_normal(o._data.shape) for o in outs]
        numeric = _directional_numeric(func, inputs, idx, dirs, weights, eps)
        grads = _analytic_vjp(func, inputs, idx, weights)
        analytic = float(sum(np.sum(g * d) for g, d in zip(grads, dirs)))
        if not abs(numeric - analytic) <= atol + rtol * abs(numeric):
            return _fail(
                f"gradcheck (random direction): numerical {numeric!r} vs analytical {analytic!r}",
                raise_exception,
            )
        return True
    for o_pos, o in enumerate(outs):
        for flat in range(o._data.size):
            weights = [np.zeros(x._data.shape) for x in outs]
            weights[o_pos].reshape(-1)[flat] = 1.0
            grads = _analytic_vjp(func, inputs, idx, weights)
            for k, i in enumerate(idx):
                for j in range(inputs[i]._data.size):
                    d = [np.zeros(inputs[m]._data.shape) for m in idx]
                    d[k].reshape(-1)[j] = 1.0
                    num = _directional_numeric(func, inputs, idx, d, weights, eps)
                    ana = float(grads[k].reshape(-1)[j])
                    if not abs(num - ana) <= atol + rtol * abs(num):
                        return _fail(
                            f"gradcheck: Jacobian mismatch for output {o_pos} element {flat} and "
                            f"input {i} element {j}: numerical {num!r} vs analytical {ana!r}",
                            raise_exception,
                        )
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    fast_mode: bool = False,
    seed: int = 0,
    **_ignored,
) -> bool:
    """Check second derivatives: gradcheck of the vjp (built with ``create_graph=True``).

    >>> import ember
    >>> x = ember.rand(3, dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradgradcheck(ember.tanh, (x,), fast_mode=True)
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(func, inputs)
    rng = np.random.default_rng(seed + 1)
    if grad_outputs is None:
        grad_outputs = tuple(
            Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype), True)
            for o in outs
        )
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    n = len(inputs)
    idx = _diff_inputs(inputs)

    def first_order(*args):
        xs, gs = args[:n], args[n:]
        os = _outputs(func, xs)
        pairs = [(o, g) for o, g in zip(os, gs) if o._requires_grad]
        grads = _grad(
            [o for o, _ in pairs], [xs[i] for i in idx], [g for _, g in pairs],
            create_graph=True, allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_order, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, fast_mode=fast_mode, seed=seed,
    )
