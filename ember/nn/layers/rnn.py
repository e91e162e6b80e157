"""Recurrent layers: RNN, LSTM, GRU and their one-step forms RNNCell, LSTMCell, GRUCell.

Parameters, their names, shapes, order and initialization follow PyTorch, so state dicts
load both ways. The input projection of a whole sequence is one matrix product per layer and
direction; only the recurrent part loops over time in Python.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> lstm = ember.nn.LSTM(10, 20, num_layers=2)
>>> output, (h_n, c_n) = lstm(ember.randn(5, 3, 10))
>>> output.shape, h_n.shape, c_n.shape
(ember.Size([5, 3, 20]), ember.Size([2, 3, 20]), ember.Size([2, 3, 20]))
>>> [name for name, _ in lstm.named_parameters()][:4]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']

The layers' shared part is ``rnn_base`` (RNNBase), their recurrences over time
``rnn_recurrence``, the one-step cells ``rnn_cells``; this module holds RNN, LSTM and GRU and
gathers every name under its old place.
"""

from __future__ import annotations

from ..._tensor import Tensor
from .rnn_base import RNNBase, RNNDTypeError, _empty, _zeros  # noqa: F401
from .rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase
from .rnn_recurrence import _run_gru, _run_lstm, _run_rnn, _step  # noqa: F401

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNN(RNNBase):
    r"""Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``.
    Input (L, N, H_in) (or (N, L, H_in) with ``batch_first``, or unbatched (L, H_in)), optional
    h_0 (D * num_layers, N, H_out); returns ``(output, h_n)``.

    >>> import ember
    >>> rnn = ember.nn.RNN(4, 3, nonlinearity="relu", batch_first=True)
    >>> out, h = rnn(ember.randn(2, 5, 4))
    >>> out.shape, h.shape
    (ember.Size([2, 5, 3]), ember.Size([1, 2, 3]))
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("RNN: proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, h_n, _ = self._forward(input, hx, False)
        return output, h_n


class LSTM(RNNBase):
    r"""Long short-term memory, gates in PyTorch's order (i, f, g, o)::

        i = σ(W_ii x + b_ii + W_hi h + b_hi)    f = σ(W_if x + b_if + W_hf h + b_hf)
        g = tanh(W_ig x + b_ig + W_hg h + b_hg)  o = σ(W_io x + b_io + W_ho h + b_ho)
        c' = f * c + i * g                       h' = o * tanh(c')   (then W_hr h' if proj_size)

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)``; returns
    ``(output, (h_n, c_n))``.

    >>> import ember
    >>> lstm = ember.nn.LSTM(4, 6, bidirectional=True, proj_size=2)
    >>> out, (h, c) = lstm(ember.randn(5, 4))
    >>> out.shape, h.shape, c.shape
    (ember.Size([5, 4]), ember.Size([2, 2]), ember.Size([2, 6]))
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes=None) -> tuple:
        return self._expected_cell_size(input)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        output, h_n, c_n = self._forward(input, hx, True)
        return output, (h_n, c_n)


class GRU(RNNBase):
    r"""Gated recurrent unit, gates in PyTorch's order (r, z, n)::

        r = σ(W_ir x + b_ir + W_hr h + b_hr)     z = σ(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    Same arguments as :class:`RNN` (without ``nonlinearity``); returns ``(output, h_n)``.

    >>> import ember
    >>> gru = ember.nn.GRU(4, 3, num_layers=2)
    >>> out, h = gru(ember.randn(5, 2, 4), ember.zeros(2, 2, 3))
    >>> out.shape, h.shape
    (ember.Size([5, 2, 3]), ember.Size([2, 2, 3]))
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("GRU: proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, h_n, _ = self._forward(input, hx, False)
        return output, h_n
