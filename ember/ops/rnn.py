"""One direction of one LSTM or GRU layer over all its time steps as one op, its gradient as one.

Written with ember's elementwise ops, a step is about fifteen ops forward and twenty-five
backward, each dispatched from Python, and the recurrent weight's gradient is T small products
summed one by one (a 2-layer, 256-wide LSTM on 35 steps of 20 sequences: 65 ms a training step
on the 2-core CPU, PyTorch's oneDNN layer 22). ``LSTMRecurrence`` runs the steps as a loop over
arrays (one product and the gate activations a step); ``LSTMRecurrenceGrad`` runs the steps back
(one product a step) and the recurrent weight's gradient as one product over all steps, as
PyTorch's fused layers do (that LSTM step: 38-49 ms; a GRU's 61 -> 32-36, PyTorch's 33).

``LSTMRecurrence(reverse)`` takes ``xs`` (T, B, 4H): each step's input projection with both
biases, gates in PyTorch's order (input, forget, cell, output); the initial ``h0`` and ``c0``
(B, H); and ``w`` (H, 4H), the recurrent weight transposed. It returns one (6T + 1, B, H) array:
the hidden states (rows 0 to T - 1, in time order whichever way the layer runs), the last cell
state (row T), each step's cell state (the next T rows) and the activated gates (4T rows, four a
step), which its gradient reads. ``hidden_states`` and ``last_cell`` are views of the first two
parts. Its vjp gives the gradients of all four inputs from ``LSTMRecurrenceGrad``, for a
gradient over every row (the saved ones get one when a gradient is differentiated again). The
steps back are written once with operators only (``_lstm_grads``, ``_gru_grads``): the gradient
op runs them on arrays, and with ``create_graph`` the vjp runs them on Tensors, ember ops that
are differentiable again.

``GRURecurrence(reverse)`` is the same for a GRU: ``xs`` (T, B, 3H) with the input bias, ``h0``,
``w`` (H, 3H) and the recurrent bias ``b`` (3H,) (PyTorch keeps it apart: the reset gate
multiplies the hidden state's candidate term with its bias), into (5T, B, H): the hidden states,
then each step's reset and update gates, candidate and recurrent candidate term.

>>> import ember
>>> from ember.ops.base import apply
>>> xs, h0 = ember.zeros(3, 2, 8), ember.zeros(2, 2)
>>> out = apply(LSTMRecurrence(False), xs, h0, h0, ember.zeros(2, 8))
>>> out.shape, hidden_states(out, 3).shape
(ember.Size([19, 2, 2]), ember.Size([3, 2, 2]))
"""

from __future__ import annotations

from dataclasses import dataclass

from .._config import state
from .._errors import AutogradError
from ..backend import blas as _blas
from .base import Op, Spec, apply
from .elementwise.activations import Sigmoid
from .indexing import cut

_SIGMOID = Sigmoid()


def _parts(out, t: int):
    """(hidden states, last cell, cell states, gates (T, 4, B, H)) of a packed output."""
    b, h = out.shape[1:]
    return out[:t], out[t], out[t + 1 : 2 * t + 1], out[2 * t + 1 :].reshape(t, 4, b, h)


_matmul = _blas.matmul_on


def _order(t: int, reverse: bool):
    return range(t - 1, -1, -1) if reverse else range(t)


@dataclass(frozen=True)
class _Steps(Op):
    """A recurrence's steps, walked backwards in time where ``reverse``; its vjp reads its
    inputs and its packed output."""

    reverse: bool = False
    saves_inputs = True
    saves_output = True


@dataclass(frozen=True)
class LSTMRecurrence(_Steps):
    """The steps of one LSTM direction: (xs, h0, c0, w) -> the packed (6T + 1, B, H) array."""

    def forward(self, xp, xs, h0, c0, w):
        t, b, g4 = xs.shape
        n = g4 // 4
        out = xp.empty((6 * t + 1, b, n), dtype=xs.dtype)
        hs, last_c, cs, gates = _parts(out, t)
        pre = xp.empty((b, g4), dtype=xs.dtype)
        h, c = h0, c0
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
        if state.grad_enabled:  # create_graph: the steps back in ember ops
            return _lstm_grads(_TensorKit(), g, out, h0, c0, w, self.reverse)
        packed = apply(LSTMRecurrenceGrad(self.reverse), g, out, h0, c0, w)
        return cut(packed, [tuple(xs.shape), tuple(h0.shape), tuple(h0.shape), tuple(w.shape)])


@dataclass(frozen=True)
class _StepsBack(Op):
    """A recurrence's steps back on arrays: the gradients ``grads`` gives (the same function the
    vjp runs on Tensors under ``create_graph``), packed one after another (``indexing.cut``
    views them). Never differentiated: with ``create_graph`` the vjp does not use it."""

    reverse: bool = False

    def forward(self, xp, g, out, *inputs):
        grads = self.grads(_ArrayKit(xp), g, out, *inputs, self.reverse)
        return xp.concatenate([a.reshape(-1) for a in grads])

    def vjp(self, h, out, *inputs):
        name = type(self).__name__
        raise AutogradError(
            f"{name}: runs only without create_graph; with it the vjp of "
            f"{name.removesuffix('Grad')} writes its steps back in ember ops"
        )


@dataclass(frozen=True)
class LSTMRecurrenceGrad(_StepsBack):
    """``LSTMRecurrence``'s gradient: (g, out, h0, c0, w) -> (T * B * 4H + 2 * B * H + H * 4H,):
    the gradients of xs, h0, c0 and w."""

    @staticmethod
    def grads(kit, *args):
        return _lstm_grads(kit, *args)

    def infer(self, g, out, h0, c0, w):
        b, n = h0.shape
        t = (out.shape[0] - 1) // 6
        return Spec((t * b * 4 * n + 2 * b * n + w.shape[0] * w.shape[1],), g.dtype)


def _lstm_grads(kit, g, out, h0, c0, w, reverse: bool):
    """(d xs, d h0, d c0, d w) of the packed output's gradient ``g`` (every row of it)."""
    t = (out.shape[0] - 1) // 6
    n = h0.shape[1]
    order = list(_order(t, reverse))
    w_t = kit.transposed(w)
    dpre = [None] * t
    dh = None
    dc = g[t]
    for pos in range(t - 1, -1, -1):
        k = order[pos]
        prev_c = c0 if pos == 0 else out[t + 1 + order[pos - 1]]
        at = 2 * t + 1 + 4 * k
        i, f, gg, o = out[at], out[at + 1], out[at + 2], out[at + 3]
        dh = g[k] if dh is None else dh + g[k]
        tc = kit.tanh(out[t + 1 + k])
        dc = dc + g[t + 1 + k] + dh * o * (1 - tc * tc)
        d = kit.cat(
            [
                (dc * gg + g[at]) * i * (1 - i),
                (dc * prev_c + g[at + 1]) * f * (1 - f),
                (dc * i + g[at + 2]) * (1 - gg * gg),
                (dh * tc + g[at + 3]) * o * (1 - o),
            ],
            1,
        )
        dpre[k] = d
        dc = dc * f
        dh = kit.mm(d, w_t)
    dxs = kit.stack(dpre)
    dw = kit.mm(kit.transposed(kit.rows(_previous(kit, out, h0, order), n)), kit.rows(dxs, 4 * n))
    return dxs, dh, dc, dw


def _previous(kit, out, h0, order):
    """Each step's previous hidden state (``h0`` for the walk's first), in time order."""
    prev = [None] * len(order)
    for pos, k in enumerate(order):
        prev[k] = h0 if pos == 0 else out[order[pos - 1]]
    return kit.stack(prev)


def _gru_parts(out, t: int):
    """(hidden states, reset gates, update gates, candidates, h's candidate products)."""
    return out[:t], out[t : 2 * t], out[2 * t : 3 * t], out[3 * t : 4 * t], out[4 * t :]


@dataclass(frozen=True)
class GRURecurrence(_Steps):
    """The steps of one GRU direction: (xs (T, B, 3H) with the input bias, h0 (B, H), w (H, 3H)
    the recurrent weight transposed, b (3H,) its bias) -> (5T, B, H): the hidden states, then
    each step's reset and update gates, candidate and recurrent candidate term (h @ W_hn +
    b_hn, which the reset gate multiplies), which the gradient reads."""

    def forward(self, xp, xs, h0, w, b):
        t, bs, g3 = xs.shape
        n = g3 // 3
        out = xp.empty((5 * t, bs, n), dtype=xs.dtype)
        hs, rs, zs, ns, hn = _gru_parts(out, t)
        gh = xp.empty((bs, g3), dtype=xs.dtype)
        h = h0
        for k in _order(t, self.reverse):
            _matmul(xp, h, w, gh)
            gh += b
            x = xs[k]
            r, z, c = rs[k], zs[k], ns[k]
            xp.add(x[:, :n], gh[:, :n], out=r)
            _SIGMOID.forward(xp, r, out=r)
            xp.add(x[:, n : 2 * n], gh[:, n : 2 * n], out=z)
            _SIGMOID.forward(xp, z, out=z)
            hn[k] = gh[:, 2 * n :]
            xp.multiply(r, hn[k], out=c)
            c += x[:, 2 * n :]
            xp.tanh(c, out=c)
            new = hs[k]
            xp.subtract(h, c, out=new)  # n + z * (h - n)
            new *= z
            new += c
            h = new
        return out

    def infer(self, xs, h0, w, b):
        t, bs, g3 = xs.shape
        return Spec((5 * t, bs, g3 // 3), xs.dtype)

    def vjp(self, g, out, xs, h0, w, b):
        if state.grad_enabled:  # create_graph: the steps back in ember ops
            return _gru_grads(_TensorKit(), g, out, h0, w, self.reverse)
        packed = apply(GRURecurrenceGrad(self.reverse), g, out, h0, w)
        bs, n = h0.shape
        return cut(packed, [tuple(xs.shape), (bs, n), tuple(w.shape), (3 * n,)])


@dataclass(frozen=True)
class GRURecurrenceGrad(_StepsBack):
    """``GRURecurrence``'s gradient: (g, out, h0, w) -> the gradients of xs, h0, w and b."""

    @staticmethod
    def grads(kit, *args):
        return _gru_grads(kit, *args)

    def infer(self, g, out, h0, w):
        bs, n = h0.shape
        t = out.shape[0] // 5
        return Spec((t * bs * 3 * n + bs * n + w.shape[0] * w.shape[1] + 3 * n,), g.dtype)


def _gru_grads(kit, g, out, h0, w, reverse: bool):
    """(d xs, d h0, d w, d b) of the packed output's gradient ``g`` (every row of it)."""
    t = out.shape[0] // 5
    n = h0.shape[1]
    order = list(_order(t, reverse))
    w_t = kit.transposed(w)
    dxs, dgh = [None] * t, [None] * t
    dh = None
    for pos in range(t - 1, -1, -1):
        k = order[pos]
        prev = h0 if pos == 0 else out[order[pos - 1]]
        r, z, c, hn = out[t + k], out[2 * t + k], out[3 * t + k], out[4 * t + k]
        dh = g[k] if dh is None else dh + g[k]
        dc = (dh * (1 - z) + g[3 * t + k]) * (1 - c * c)
        dr = (dc * hn + g[t + k]) * r * (1 - r)
        dz = (dh * (prev - c) + g[2 * t + k]) * z * (1 - z)
        dxs[k] = kit.cat([dr, dz, dc], 1)
        dgh[k] = kit.cat([dr, dz, dc * r + g[4 * t + k]], 1)
        dh = dh * z + kit.mm(dgh[k], w_t)
    dgh_rows = kit.rows(kit.stack(dgh), 3 * n)
    dw = kit.mm(kit.transposed(kit.rows(_previous(kit, out, h0, order), n)), dgh_rows)
    return kit.stack(dxs), dh, dw, kit.sum_rows(dgh_rows)


class _ArrayKit:
    """What the steps back need beyond operators, on arrays (the gradient ops' bodies)."""

    def __init__(self, xp) -> None:
        self.xp = xp

    def tanh(self, x):
        return self.xp.tanh(x)

    def mm(self, a, b):
        return _matmul(self.xp, a, b, None)  # split over numba's threads on the host

    def cat(self, parts, axis: int):
        return self.xp.concatenate(parts, axis=axis)

    def stack(self, steps):
        return self.xp.stack(steps)

    def transposed(self, x):
        return self.xp.ascontiguousarray(x.T)  # a transposed view multiplies 1.6x slower

    def rows(self, x, width: int):
        return x.reshape(-1, width)

    def sum_rows(self, x):
        return x.sum(axis=0)


class _TensorKit:
    """The same on ember Tensors: ops recorded while ``create_graph`` runs the vjp."""

    def __init__(self) -> None:
        from .elementwise import Tanh
        from .movement import Cat, Permute, reshape
        from .reduce import Sum

        self._tanh, self._cat, self._t, self._reshape = Tanh(), Cat, Permute((1, 0)), reshape
        self._sum = Sum((0,), False)

    def tanh(self, x):
        return apply(self._tanh, x)

    def mm(self, a, b):
        return a @ b

    def cat(self, parts, axis: int):
        return apply(self._cat(axis), *parts)

    def stack(self, steps):
        return apply(self._cat(0), *[self._reshape(s, (1, *s.shape)) for s in steps])

    def transposed(self, x):
        return apply(self._t, x)

    def rows(self, x, width: int):
        return self._reshape(x, (x.shape[0] * x.shape[1], width))

    def sum_rows(self, x):
        return apply(self._sum, x)


def hidden_states(out, t: int):
    """The (T, B, H) hidden states of a packed ``LSTMRecurrence`` output (a view)."""
    from .indexing import slice_dim

    return slice_dim(out, 0, 0, t)


def last_cell(out, t: int):
    """The (B, H) last cell state of a packed ``LSTMRecurrence`` output (a view)."""
    from .indexing import basic_index

    return apply(basic_index((t,)), out)


__all__ = [
    "GRURecurrence",
    "GRURecurrenceGrad",
    "LSTMRecurrence",
    "LSTMRecurrenceGrad",
    "hidden_states",
    "last_cell",
]
