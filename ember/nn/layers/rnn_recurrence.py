"""The recurrences of the recurrent layers: one direction of one layer, all time steps, for
RNN (tanh or ReLU), LSTM and GRU.

>>> import ember
>>> hs, h = _run_rnn([ember.ones(1, 2)] * 3, ember.zeros(1, 2), ember.zeros(2, 2), ember.relu)
>>> len(hs), h
(3, tensor([[1., 1.]]))
"""

from __future__ import annotations

from ... import dtypes as _dt
from ...functions.elementwise import where
from ...functions.math import sigmoid as _sigmoid
from ...functions.math import tanh as _tanh

# -- one direction of one layer, all time steps --------------------------------------------
#
# ``xs`` are the per-step input projections (W_ih x_t + b_ih, plus b_hh where it may be folded
# in), ``h`` (and ``c``) the initial state, ``w_hh_t`` the transposed recurrent weight. Each
# returns the list of hidden states in time order (of the walk) and the final state(s).


def _step(keep, t, new, old):
    """The new state, or (packed input) the old one for sequences that ended before step t.
    The old one takes the new one's dtype, so that ``where`` does not promote a state that
    autocast computes in bfloat16 back to an initial state's float32 (PyTorch's packed kernel
    concatenates each sequence's last computed state)."""
    if keep is None:
        return new
    return where(keep[t], new, old if old.dtype is new.dtype else old.to(new.dtype))


def _run_rnn(xs, h, w_hh_t, act, keep=None):
    hs = []
    for t, x in enumerate(xs):
        h = _step(keep, t, act(x + h.mm(w_hh_t)), h)
        hs.append(h)
    return hs, h


def _run_lstm(xs, h, c, w_hh_t, w_hr_t, hidden: int, keep=None):
    sigmoid, tanh = _sigmoid, _tanh
    hs = []
    for t, x in enumerate(xs):
        gates = x + h.mm(w_hh_t)
        i, f, g, o = gates.split(hidden, 1)
        c_new = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h_new = sigmoid(o) * tanh(c_new)
        if w_hr_t is not None:
            h_new = h_new.mm(w_hr_t)
        h, c = _step(keep, t, h_new, h), _step(keep, t, c_new, c)
        hs.append(h)
    return hs, h, c


def _fused(mode: str, w_hr, keep, proj, h) -> bool:
    """Whether an LSTM or GRU direction runs as one op (``ember.ops.rnn``): no projection, no
    packed lengths, some steps, float32 or float64 steps and state of one dtype."""
    return (
        mode in ("LSTM", "GRU")
        and w_hr is None
        and keep is None
        and proj.shape[0] > 0
        and proj.dtype in (_dt.float32, _dt.float64)
        and h.dtype == proj.dtype
    )


def _lstm_layer(xs, h, c, w_hh_t, reverse: bool):
    """One LSTM direction as one op: (hidden states (T, B, H), last h, last c)."""
    from ...ops.base import apply
    from ...ops.rnn import LSTMRecurrence, hidden_states, last_cell

    t = xs.shape[0]
    c = c if c.dtype == xs.dtype else c.to(xs.dtype)
    out = apply(LSTMRecurrence(reverse), xs, h, c, w_hh_t)
    hs = hidden_states(out, t)
    return hs, hs[0] if reverse else hs[t - 1], last_cell(out, t)


def _gru_layer(xs, h, w_hh_t, b_hh, reverse: bool):
    """One GRU direction as one op: (hidden states (T, B, H), last h)."""
    from ...functions.creation.filled import zeros
    from ...ops.base import apply
    from ...ops.rnn import GRURecurrence, hidden_states

    t = xs.shape[0]
    if b_hh is None:
        b_hh = zeros(xs.shape[2], dtype=xs.dtype, device=xs.device)
    out = apply(GRURecurrence(reverse), xs, h, w_hh_t, b_hh)
    hs = hidden_states(out, t)
    return hs, hs[0] if reverse else hs[t - 1]


def _run_gru(xs, h, w_hh_t, b_hh, hidden: int, keep=None):
    sigmoid, tanh = _sigmoid, _tanh
    hs = []
    for t, x in enumerate(xs):
        gh = h.mm(w_hh_t)
        if b_hh is not None:
            gh = gh + b_hh
        x_r, x_z, x_n = x.split(hidden, 1)
        h_r, h_z, h_n = gh.split(hidden, 1)
        r = sigmoid(x_r + h_r)
        z = sigmoid(x_z + h_z)
        n = tanh(x_n + r * h_n)
        h = _step(keep, t, n + z * (h - n), h)  # = (1 - z) * n + z * h
        hs.append(h)
    return hs, h
