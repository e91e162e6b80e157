"""Recurrent cells, one time step each: RNNCell, LSTMCell, GRUCell and their base
RNNCellBase (parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` as in PyTorch).

>>> import ember
>>> [name for name, _ in ember.nn.LSTMCell(4, 3).named_parameters()]
['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
"""

from __future__ import annotations

import math

from ..._config import state as _autocast_state
from ..._errors import ShapeError
from ..._tensor import Tensor
from ...functions.math import relu
from ...functions.math import sigmoid as _sigmoid
from ...functions.math import tanh as _tanh
from .. import init
from .._functional.linear import linear
from ..module import Module
from ..parameter import Parameter
from .rnn_base import RNNDTypeError, _empty, _zeros

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    """Parameters ``weight_ih`` (G*H, I), ``weight_hh`` (G*H, H), ``bias_ih``, ``bias_hh``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(_empty(g, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(_empty(g, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_empty(g, device=device, dtype=dtype))
            self.bias_hh = Parameter(_empty(g, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, states: tuple, names: tuple):
        """Check ranks, sizes and dtypes; return batched input and states (zeros if None)."""
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected input to be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2):
            raise ShapeError(
                f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead "
                f"(shape {tuple(input.shape)})"
            )
        if input.shape[-1] != self.input_size:
            raise ShapeError(
                f"{name}: input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]} (input shape {tuple(input.shape)})"
            )
        if input.dtype != self.weight_ih.dtype and _autocast_state.autocast is None:
            raise RNNDTypeError(
                f"{name}: input dtype ({input.dtype}) does not match weight dtype "
                f"({self.weight_ih.dtype})"
            )
        is_batched = input.ndim == 2
        if not is_batched:
            input = input.unsqueeze(0)
        batch = input.shape[0]
        out = []
        for s, sname in zip(states, names):
            if s is None:
                out.append(_zeros((batch, self.hidden_size), input))
                continue
            if s.ndim not in (1, 2):
                raise ShapeError(f"{name}: Expected {sname} to be 1D or 2D, got {s.ndim}D instead")
            if not is_batched:
                s = s.unsqueeze(0)
            if tuple(s.shape) != (batch, self.hidden_size):
                raise ShapeError(
                    f"{name}: Expected {sname} size {(batch, self.hidden_size)}, got "
                    f"{list(s.shape)} (input shape {tuple(input.shape)})"
                )
            if s.dtype != input.dtype and _autocast_state.autocast is None:
                raise RNNDTypeError(
                    f"{name}: {sname} dtype ({s.dtype}) does not match input dtype ({input.dtype})"
                )
            out.append(s)
        return input, out, is_batched

    def _gates(self, x: Tensor, h: Tensor, fold_bias: bool = True):
        if _autocast_state.autocast is not None:  # PyTorch's cells: two autocast linears
            gi = linear(x, self.weight_ih, self.bias_ih)
            gh = linear(h, self.weight_hh, self.bias_hh)
            return (gi + gh, None) if fold_bias else (gi, gh)
        gi = x.mm(self.weight_ih.t())
        gh = h.mm(self.weight_hh.t())
        if self.bias_ih is None:
            return (gi + gh, None) if fold_bias else (gi, gh)
        if fold_bias:
            return gi + gh + (self.bias_ih + self.bias_hh), None
        return gi + self.bias_ih, gh + self.bias_hh


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or ReLU).

    >>> import ember
    >>> cell = ember.nn.RNNCell(4, 3)
    >>> cell(ember.randn(2, 4)).shape, cell(ember.randn(4)).shape
    (ember.Size([2, 3]), ember.Size([3]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNNCell: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), is_batched = self._prepare(input, (hx,), ("hidden",))
        pre, _ = self._gates(x, h)
        h = _tanh(pre) if self.nonlinearity == "tanh" else relu(pre)
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; ``hx`` is ``(h, c)``; returns ``(h', c')``. Gates (i, f, g, o).

    >>> import ember
    >>> cell = ember.nn.LSTMCell(4, 3)
    >>> h, c = cell(ember.randn(2, 4))
    >>> h.shape, c.shape
    (ember.Size([2, 3]), ember.Size([2, 3]))
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if hx is None:
            hx = (None, None)
        elif not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise TypeError("LSTMCell: hx should be a tuple (h, c) of two Tensors")
        x, (h, c), is_batched = self._prepare(input, tuple(hx), ("hx[0]", "hx[1]"))
        gates, _ = self._gates(x, h)
        i, f, g, o = gates.split(self.hidden_size, 1)
        c = _sigmoid(f) * c + _sigmoid(i) * _tanh(g)
        h = _sigmoid(o) * _tanh(c)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

    >>> import ember
    >>> cell = ember.nn.GRUCell(4, 3)
    >>> cell(ember.randn(2, 4), ember.zeros(2, 3)).shape
    ember.Size([2, 3])
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), is_batched = self._prepare(input, (hx,), ("hidden",))
        gi, gh = self._gates(x, h, fold_bias=False)
        x_r, x_z, x_n = gi.split(self.hidden_size, 1)
        h_r, h_z, h_n = gh.split(self.hidden_size, 1)
        r = _sigmoid(x_r + h_r)
        z = _sigmoid(x_z + h_z)
        n = _tanh(x_n + r * h_n)
        h = n + z * (h - n)
        return h if is_batched else h.squeeze(0)
