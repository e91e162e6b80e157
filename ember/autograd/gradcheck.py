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

import warnings

import numpy as np

from .. import backend as _backend
from .. import dtypes as _dt
from .._errors import AutogradError
from .._tensor import Tensor
from .engine import grad as _grad


class GradcheckError(AutogradError):
    """Analytic and numerical gradients disagree (the message shows both)."""


def _outputs(func, inputs) -> tuple:
    out = func(*inputs)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    return tuple(o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point)


def _host64(array) -> np.ndarray:
    """A float64 NumPy copy of an array on any device (the checks compare on the host)."""
    return np.asarray(_backend.to_device(array, _backend.CPU), dtype=np.float64)


def _like(host: np.ndarray, array):
    """``host`` with ``array``'s dtype, on ``array``'s device."""
    return _backend.to_device(np.asarray(host, dtype=array.dtype), _backend.device_of(array))


def _diff_inputs(inputs) -> list:
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]


def _directional_numeric(func, inputs, idx, directions, weights, eps) -> float:
    """d/dh sum_o <w_o, f_o(x + h u)> at h = 0, by central differences."""
    saved = [inputs[i]._data.copy() for i in idx]
    directions = [_like(d, inputs[i]._data) for d, i in zip(directions, idx)]

    def value(sign: float) -> float:
        for k, i in enumerate(idx):
            inputs[i]._data[...] = saved[k] + sign * eps * directions[k]
        outs = _outputs(func, inputs)  # with grad on: func may itself call autograd.grad
        return sum(float(np.sum(_host64(o._data) * w)) for o, w in zip(outs, weights))

    try:
        return (value(1.0) - value(-1.0)) / (2 * eps)
    finally:
        for k, i in enumerate(idx):
            inputs[i]._data[...] = saved[k]


def _analytic_vjp(func, inputs, idx, weights) -> list:
    outs = _outputs(func, inputs)
    gouts = [Tensor._make(_like(w, o._data)) for o, w in zip(outs, weights)]
    pairs = [(o, g) for o, g in zip(outs, gouts) if o._requires_grad]
    if not pairs:
        return [np.zeros(inputs[i]._data.shape) for i in idx]
    grads = _grad(
        [o for o, _ in pairs],
        [inputs[i] for i in idx],
        [g for _, g in pairs],
        allow_unused=True,
        retain_graph=True,
    )
    return [
        np.zeros(inputs[i]._data.shape) if g is None else _host64(g._data)
        for i, g in zip(idx, grads)
    ]


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _numeric_jacobians(func, inputs, idx, eps) -> list:
    """J[k][o]: (numel of output o, numel of input idx[k]) by central differences, one input
    element at a time (two calls of ``func`` per element)."""
    table = []
    for i in idx:
        arr = inputs[i]._data
        flat_in = arr.size
        cols = None
        for j in range(flat_in):
            pos = np.unravel_index(j, arr.shape) if arr.ndim else ()
            orig = arr[pos].copy()
            try:
                arr[pos] = orig + eps
                plus = [_host64(o._data).ravel() for o in _outputs(func, inputs)]
                arr[pos] = orig - eps
                minus = [_host64(o._data).ravel() for o in _outputs(func, inputs)]
            finally:
                arr[pos] = orig
            if cols is None:
                cols = [np.zeros((p.size, flat_in)) for p in plus]
            for o, (p, m) in enumerate(zip(plus, minus)):
                cols[o][:, j] = (p - m) / (2 * eps)
        if cols is None:  # a 0-size input
            cols = [np.zeros((o._data.size, 0)) for o in _outputs(func, inputs)]
        table.append(cols)
    return table


def _analytic_jacobians(func, inputs, idx, outs) -> list:
    """J[k][o] from one vjp per output element (one-hot output weights)."""
    table = [[np.zeros((o._data.size, inputs[i]._data.size)) for o in outs] for i in idx]
    for o_pos, o in enumerate(outs):
        for flat in range(o._data.size):
            weights = [np.zeros(x._data.shape) for x in outs]
            weights[o_pos].reshape(-1)[flat] = 1.0
            grads = _analytic_vjp(func, inputs, idx, weights)
            for k, g in enumerate(grads):
                table[k][o_pos][flat, :] = g.ravel()
    return table


def _show(m: np.ndarray) -> str:
    return np.array2string(m, precision=6, threshold=64, edgeitems=3)


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

    Inputs that require grad are perturbed in place (use float64: float32 is too coarse for
    the default ``eps``). The default compares whole Jacobians; ``fast_mode`` one random
    direction per input and output.

    >>> import ember
    >>> x = ember.rand(4, dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradcheck(lambda t: t.exp(), (x,), fast_mode=True)
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    idx = _diff_inputs(inputs)
    if not idx:
        raise AutogradError("gradcheck: no input requires grad")
    for i in idx:
        if inputs[i].dtype is not _dt.float64:
            warnings.warn(
                f"gradcheck: input {i} requires grad but is {inputs[i].dtype}, not float64; "
                "the check is likely to fail from rounding",
                UserWarning,
                stacklevel=2,
            )
    outs = _outputs(func, inputs)
    if fast_mode:
        rng = np.random.default_rng(seed)
        dirs = [rng.standard_normal(inputs[i]._data.shape) for i in idx]
        weights = [rng.standard_normal(o._data.shape) for o in outs]
        numeric = _directional_numeric(func, inputs, idx, dirs, weights, eps)
        grads = _analytic_vjp(func, inputs, idx, weights)
        analytic = float(sum(np.sum(g * d) for g, d in zip(grads, dirs)))
        if not abs(numeric - analytic) <= atol + rtol * abs(numeric):
            return _fail(
                f"gradcheck (random direction): Jacobian mismatch: numerical {numeric!r} vs "
                f"analytical {analytic!r} (atol={atol}, rtol={rtol})",
                raise_exception,
            )
        return True
    numeric = _numeric_jacobians(func, inputs, idx, eps)
    analytic = _analytic_jacobians(func, inputs, idx, outs)
    for k, i in enumerate(idx):
        for o_pos in range(len(outs)):
            n, a = numeric[k][o_pos], analytic[k][o_pos]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(
                    f"gradcheck: Jacobian mismatch for output {o_pos} with respect to input "
                    f"{i},\nnumerical:\n{_show(n)}\nanalytical:\n{_show(a)}",
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
    >>> ember.autograd.gradgradcheck(lambda t: t.tanh(), (x,), fast_mode=True)
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(func, inputs)
    rng = np.random.default_rng(seed + 1)
    if grad_outputs is None:
        grad_outputs = tuple(
            Tensor._make(_like(rng.standard_normal(o._data.shape), o._data), True) for o in outs
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
            [o for o, _ in pairs],
            [xs[i] for i in idx],
            [g for _, g in pairs],
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_order,
        tuple(inputs) + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        fast_mode=fast_mode,
        seed=seed,
    )
