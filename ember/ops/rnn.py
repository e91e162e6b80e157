"""One direction of one LSTM layer over all its time steps as one op, and its gradient as one.

Written with ember's elementwise ops, a step is about fifteen ops forward and twenty-five
backward, each dispatched from Python, and the recurrent weight's gradient is T small products
summed one by one (a 2-layer, 256-wide LSTM on 35 steps of 20 sequences: 65 ms a training step
on the 2-core CPU, PyTorch's oneDNN layer 22). ``LSTMRecurrence`` runs the steps as a loop over
arrays (one product and the gate activations a step); ``LSTMRecurrenceGrad`` runs the steps back
(one product a step) and the recurrent weight's gradient as one product over all steps, as
PyTorch's fused layers do.

``LSTMRecurrence(reverse)`` takes ``xs`` (T, B, 4H): each step's input projection with both
biases, gates in PyTorch's order (input, forget, cell, output); the initial ``h0`` and ``c0``
(B, H); and ``w`` (H, 4H), the recurrent weight transposed. It returns one (6T + 1, B, H) array:
the hidden states (rows 0 to T - 1, in time order whichever way the layer runs), the last cell
state (row T), each step's cell state (the next T rows) and the activated gates (4T rows, four a
step), which its gradient reads. ``hidden_states`` and ``last_cell`` are views of the first two
parts. Its vjp gives the gradients of all four inputs from ``LSTMRecurrenceGrad``; with
``create_graph`` it differentiates the composite steps instead (ember's elementwise ops), so
gradients of gradients stay exact.

>>> import ember
>>> from ember.ops.base import apply
>>> xs, h0 = ember.zeros(3, 2, 8), ember.zeros(2, 2)
>>> out = apply(LSTMRecurrence(False), xs, h0, h0, ember.zeros(2, 8))
>>> out.shape, hidden_states(out, 3).shape
(ember.Size([19, 2, 2]), ember.Size([3, 2, 2]))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._config import state
from .._errors import AutogradError
from ..backend import blas as _blas
from ..backend.arrays import errstate
from .base import Op, Spec, apply
from .elementwise.activations import Sigmoid

_SIGMOID = Sigmoid()


def _parts(out, t: int):
    """(hidden states, last cell, cell states, gates (T, 4, B, H)) of a packed output."""
    b, h = out.shape[1:]
    return out[:t], out[t], out[t + 1 : 2 * t + 1], out[2 * t + 1 :].reshape(t, 4, b, h)


def _matmul(xp, a, b, out):
    """``xp.matmul`` into ``out``; on the host split over numba's threads (``backend.blas``)."""
    return _blas.matmul(a, b, out) if xp is np else xp.matmul(a, b, out=out)


def _order(t: int, reverse: bool):
    return range(t - 1, -1, -1) if reverse else range(t)


@dataclass(frozen=True)
class LSTMRecurrence(Op):
    """The steps of one LSTM direction: (xs, h0, c0, w) -> the packed (6T + 1, B, H) array."""

    reverse: bool = False
    saves_inputs = True
    saves_output = True

    def forward(self, xp, xs, h0, c0, w):
        t, b, g4 = xs.shape
        n = g4 // 4
        out = xp.empty((6 * t + 1, b, n), dtype=xs.dtype)
        hs, last_c, cs, gates = _parts(out, t)
        pre = xp.empty((b, g4), dtype=xs.dtype)
        h, c = h0, c0
        with errstate(xp, over="ignore"):
            for k in _order(t, self.reverse):
                _matmul(xp, h, w, pre)
                pre += xs[k]
                i, f, gg, o = (gates[k, j] for j in range(4))
                i[...] = pre[:, :n]
                f[...] = pre[:, n : 2 * n]
                gg[...] = pre[:, 2 * n : 3 * n]
                o[...] = pre[:, 3 * n :]
                _SIGMOID.forward(xp, i, out=i)
                _SIGMOID.forward(xp, f, out=f)
                xp.tanh(gg, out=gg)
                _SIGMOID.forward(xp, o, out=o)
                c_new = cs[k]
                xp.multiply(f, c, out=c_new)
                c_new += i * gg
                xp.tanh(c_new, out=hs[k])
                hs[k] *= o
                h, c = hs[k], c_new
        last_c[...] = c
        return out

    def infer(self, xs, h0, c0, w):
        t, b, g4 = xs.shape
        return Spec((6 * t + 1, b, g4 // 4), xs.dtype)

    def vjp(self, g, out, xs, h0, c0, w):
        t = xs.shape[0]
        if state.grad_enabled:  # create_graph: the composite steps, differentiable again
            return _composite_grads(self.reverse, g, xs, h0, c0, w)
        packed = apply(LSTMRecurrenceGrad(self.reverse), g, out, h0, c0, w)
        return _unpacked(packed, t, xs.shape, h0.shape, w.shape)


@dataclass(frozen=True)
class LSTMRecurrenceGrad(Op):
    """``LSTMRecurrence``'s gradient: (g, out, h0, c0, w) -> (T * B * 4H + 2 * B * H + H * 4H,)
    holding the gradients of xs, h0, c0 and w in that order (``_unpacked`` views them)."""

    reverse: bool = False

    def forward(self, xp, g, out, h0, c0, w):
        b, n = h0.shape
        t = (out.shape[0] - 1) // 6
        hs, _, cs, gates = _parts(out, t)
        g_hs, g_last = g[:t], g[t]
        size = t * b * 4 * n
        packed = xp.empty(size + 2 * b * n + w.size, dtype=g.dtype)
        dxs = packed[:size].reshape(t, b, 4 * n)
        w_t = xp.ascontiguousarray(w.T)  # (a transposed view multiplies 1.6x slower on the CPU)
        dh = xp.zeros((b, n), dtype=g.dtype)
        dc = g_last.astype(g.dtype, copy=True)
        order = list(_order(t, self.reverse))
        for pos in range(t - 1, -1, -1):
            k = order[pos]
            prev_c = c0 if pos == 0 else cs[order[pos - 1]]
            i, f, gg, o = (gates[k, j] for j in range(4))
            dh += g_hs[k]
            tc = xp.tanh(cs[k])
            d = dxs[k]
            xp.multiply(dh, tc, out=d[:, 3 * n :])  # d o
            dc += dh * o * (1 - tc * tc)
            xp.multiply(dc, gg, out=d[:, :n])  # d i
            xp.multiply(dc, prev_c, out=d[:, n : 2 * n])  # d f
            xp.multiply(dc, i, out=d[:, 2 * n : 3 * n])  # d g
            d[:, :n] *= i * (1 - i)
            d[:, n : 2 * n] *= f * (1 - f)
            d[:, 2 * n : 3 * n] *= 1 - gg * gg
            d[:, 3 * n :] *= o * (1 - o)
            dc *= f
            _matmul(xp, d, w_t, dh)
        packed[size : size + b * n] = dh.reshape(-1)
        packed[size + b * n : size + 2 * b * n] = dc.reshape(-1)
        # the recurrent weight: one product of every step's previous hidden state and gates
        prev = xp.empty((t, b, n), dtype=g.dtype)
        for pos, k in enumerate(order):
            prev[k] = h0 if pos == 0 else hs[order[pos - 1]]
        dw = packed[size + 2 * b * n :].reshape(w.shape)
        _matmul(xp, prev.reshape(-1, n).T, dxs.reshape(-1, 4 * n), dw)
        return packed

    def infer(self, g, out, h0, c0, w):
        b, n = h0.shape
        t = (out.shape[0] - 1) // 6
        return Spec((t * b * 4 * n + 2 * b * n + w.shape[0] * w.shape[1],), g.dtype)

    def vjp(self, h, out, g, lstm_out, h0, c0, w):
        raise AutogradError(
            "LSTMRecurrenceGrad: runs only without create_graph; a second derivative goes "
            "through the composite steps (LSTMRecurrence.vjp)"
        )


def _unpacked(packed, t: int, xs_shape, h_shape, w_shape) -> tuple:
    """Views of ``LSTMRecurrenceGrad``'s packed result: the gradients of xs, h0, c0 and w."""
    from .indexing import slice_dim
    from .movement import reshape

    b, n = h_shape
    size = t * b * 4 * n
    cuts = [(0, size, xs_shape), (size, size + b * n, h_shape)]
    cuts += [(size + b * n, size + 2 * b * n, h_shape), (size + 2 * b * n, None, w_shape)]
    total = packed.shape[0]
    return tuple(
        reshape(slice_dim(packed, 0, a, total if z is None else z), tuple(s)) for a, z, s in cuts
    )


def _composite_grads(reverse: bool, g, xs, h0, c0, w) -> tuple:
    """The gradients of the packed output's hidden states and last cell state with respect to
    the four inputs, through the steps written in ember ops (differentiable again)."""
    from ..autograd.engine import grad as _grad
    from ..functions.shape.joining import stack

    t, n = xs.shape[0], h0.shape[1]
    h, c = h0, c0
    hs = [None] * t
    for k in _order(t, reverse):
        i, f, gg, o = (xs[k] + h.mm(w)).split(n, 1)
        c = f.sigmoid() * c + i.sigmoid() * gg.tanh()
        h = o.sigmoid() * c.tanh()
        hs[k] = h
    inputs = [xs, h0, c0, w]
    want = [x.requires_grad for x in inputs]
    grads = _grad(
        [stack(hs, 0), c],
        [x for x, wanted in zip(inputs, want) if wanted],
        [g[:t], g[t]],
        create_graph=True,
        allow_unused=True,
    )
    it = iter(grads)
    return tuple(next(it) if wanted else None for wanted in want)


def hidden_states(out, t: int):
    """The (T, B, H) hidden states of a packed ``LSTMRecurrence`` output (a view)."""
    from .indexing import slice_dim

    return slice_dim(out, 0, 0, t)


def last_cell(out, t: int):
    """The (B, H) last cell state of a packed ``LSTMRecurrence`` output (a view)."""
    from .indexing import basic_index

    return apply(basic_index((t,)), out)


__all__ = ["LSTMRecurrence", "LSTMRecurrenceGrad", "hidden_states", "last_cell"]
