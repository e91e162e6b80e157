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
"""

from __future__ import annotations

import math
import numbers
import warnings

from ..._errors import DTypeError, ShapeError
from ..._tensor import Tensor
from ...functions.creation import arange
from ...functions.elementwise import where
from ...functions.math import relu
from ...functions.math import sigmoid as _sigmoid
from ...functions.math import tanh as _tanh
from ...functions.shape import cat, stack
from .. import init
from .._functional.dropout import dropout as _dropout
from ..module import Module
from ..parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNDTypeError(DTypeError, ValueError):
    """Input dtype differs from the weights' (PyTorch raises ValueError here)."""


def _empty(*shape, device=None, dtype=None) -> Tensor:
    from ...functions.creation import empty

    return empty(*shape, device=device, dtype=dtype)


def _zeros(shape, like: Tensor) -> Tensor:
    from ...functions.creation import zeros

    return zeros(*shape, dtype=like.dtype, device=like.device)


# -- one direction of one layer, all time steps --------------------------------------------
#
# ``xs`` are the per-step input projections (W_ih x_t + b_ih, plus b_hh where it may be folded
# in), ``h`` (and ``c``) the initial state, ``w_hh_t`` the transposed recurrent weight. Each
# returns the list of hidden states in time order (of the walk) and the final state(s).


def _step(keep, t, new, old):
    """The new state, or (packed input) the old one for sequences that ended before step t."""
    return new if keep is None else where(keep[t], new, old)


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


def _time_steps(x: Tensor, fan: int = 4) -> list:
    """``x.unbind(0)``, but through a tree of splits (``fan`` pieces a level).

    The gradient of each slice of ``x`` is a zero-filled tensor of the sliced tensor's shape,
    so unbinding T steps at once costs O(T^2) in backward; slicing in a tree costs
    O(T log T) (for about 1.3 T slicing ops instead of T).
    """
    n = x.shape[0]
    if n <= fan:
        return list(x.unbind(0))
    out = []
    for piece in x.split(-(-n // fan), 0):
        out.extend(_time_steps(piece, fan))
    return out


class RNNBase(Module):
    """The shared part of RNN, LSTM and GRU: arguments, parameters, checks and the layer loop.

    ``mode`` is ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        name = self._module_name()
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                f"{name}: dropout should be a number in range [0, 1] representing the "
                f"probability of an element being zeroed, got {dropout!r}"
            )
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=3,
            )
        for arg, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(
                    f"{name}: {arg} should be of type bool, got: {type(value).__name__}"
                )
        for arg, value in (
            ("input_size", input_size),
            ("hidden_size", hidden_size),
            ("num_layers", num_layers),
            ("proj_size", proj_size),
        ):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name}: {arg} should be of type int, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError(f"{name}: input_size must be greater than zero, got {input_size}")
        if hidden_size <= 0:
            raise ValueError(f"{name}: hidden_size must be greater than zero, got {hidden_size}")
        if num_layers <= 0:
            raise ValueError(f"{name}: num_layers must be greater than zero, got {num_layers}")
        if proj_size < 0:
            raise ValueError(
                f"{name}: proj_size should be a positive integer or zero to "
                f"disable projections, got {proj_size}"
            )
        if proj_size >= hidden_size:
            raise ValueError(
                f"{name}: proj_size has to be smaller than hidden_size "
                f"(got proj_size={proj_size}, hidden_size={hidden_size})"
            )
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
        if mode not in gates:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        gate_size = gates[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for stem, shape in shapes:
                    pname = f"{stem}_l{layer}{suffix}"
                    setattr(self, pname, Parameter(_empty(*shape, device=device, dtype=dtype)))
                    names.append(pname)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def _module_name(self) -> str:
        return type(self).__name__

    def reset_parameters(self) -> None:
        """Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """No-op (cuDNN weight packing in PyTorch); kept for compatibility."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """Parameters grouped per layer and direction, in registration order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks ------------------------------------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes=None) -> None:
        name = self._module_name()
        w = self.weight_ih_l0
        if input.dtype != w.dtype:
            raise RNNDTypeError(
                f"{name}: input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        if input.ndim != 3:
            raise ShapeError(f"{name}: input must have 3 dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise ShapeError(
                f"{name}: input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]} (input shape {tuple(input.shape)})"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes=None) -> tuple:
        batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, batch, size)

    def check_hidden_size(
        self, hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.shape) != tuple(expected):
            raise ShapeError(
                f"{self._module_name()}: " + msg.format(tuple(expected), list(hx.shape))
            )
        if hx.dtype != self.weight_ih_l0.dtype:
            raise RNNDTypeError(
                f"{self._module_name()}: hidden state dtype ({hx.dtype}) does not match weight "
                f"dtype ({self.weight_ih_l0.dtype})"
            )

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes=None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def _batch_input(self, input, hx, is_lstm: bool):
        """Check dimensions and add the batch dimension to unbatched input (and state)."""
        name = self._module_name()
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}: expected input to be a Tensor or a PackedSequence, got "
                f"{type(input).__name__}"
            )
        if input.ndim not in (2, 3):
            raise ShapeError(
                f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                f"tensor instead (shape {tuple(input.shape)})"
            )
        is_batched = input.ndim == 3
        if hx is None:
            return input, hx, is_batched
        if is_lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{name}: hx should be a tuple (h_0, c_0) of two Tensors")
            h, c = hx
            want = 3 if is_batched else 2
            if h.ndim != want or c.ndim != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise ShapeError(
                    f"{name}: For {kind} input, hx and cx should also be {want}-D "
                    f"but got ({h.ndim}-D, {c.ndim}-D) tensors"
                )
            if not is_batched:
                hx = (h.unsqueeze(1), c.unsqueeze(1))
        else:
            if not isinstance(hx, Tensor):
                raise TypeError(f"{name}: hx should be a Tensor, got {type(hx).__name__}")
            if is_batched and hx.ndim != 3:
                raise ShapeError(
                    f"{name}: For batched 3-D input, hx should also be 3-D but got "
                    f"{hx.ndim}-D tensor"
                )
            if not is_batched:
                if hx.ndim != 2:
                    raise ShapeError(
                        f"{name}: For unbatched 2-D input, hx should also be 2-D "
                        f"but got {hx.ndim}-D tensor"
                    )
                hx = hx.unsqueeze(1)
        return input, hx, is_batched

    # -- the layer loop ----------------------------------------------------------------------
    def _run(self, input: Tensor, h0: Tensor | None, c0: Tensor | None, lengths=None):
        """``input`` is time-major (T, B, I); returns output (T, B, D*H_out), h_n and c_n.
        With ``lengths`` (a packed batch, padded) each sequence's state stops at its end."""
        mode = self.mode
        steps, batch = input.shape[0], input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        hidden = self.hidden_size
        out_size = self.proj_size if self.proj_size > 0 else hidden
        params = self.__dict__
        act = _tanh if mode == "RNN_TANH" else relu
        h_init = h0.unbind(0) if h0 is not None else None
        c_init = c0.unbind(0) if c0 is not None else None
        h_last, c_last = [], []
        keep = None
        if lengths is not None:
            steps_t = arange(steps, device=input.device).reshape(steps, 1, 1)
            keep = list((steps_t < lengths.to(input.device).reshape(1, batch, 1)).unbind(0))
        layer_input = input
        for layer in range(self.num_layers):
            feats = layer_input.shape[2]
            flat = layer_input.reshape(steps * batch, feats)
            outputs = []
            for direction in range(num_directions):
                sfx = f"_l{layer}_reverse" if direction else f"_l{layer}"
                idx = layer * num_directions + direction
                w_ih, w_hh = params["weight_ih" + sfx], params["weight_hh" + sfx]
                b_ih = params["bias_ih" + sfx] if self.bias else None
                b_hh = params["bias_hh" + sfx] if self.bias else None
                if b_ih is not None and mode != "GRU":
                    b_ih = b_ih + b_hh  # both are added outside the nonlinearity: fold them
                # the input projection of every time step at once
                proj = flat.mm(w_ih.t())
                if b_ih is not None:
                    proj = proj + b_ih
                proj = proj.reshape(steps, batch, proj.shape[1])
                xs = _time_steps(proj) if proj.requires_grad else proj.unbind(0)
                walk = keep
                if direction:
                    xs = xs[::-1]
                    walk = None if keep is None else keep[::-1]
                h = h_init[idx] if h_init is not None else _zeros((batch, out_size), input)
                # one contiguous copy per forward: NumPy multiplies small matrices by a
                # transposed view several times slower than by a contiguous one
                w_hh_t = w_hh.t().contiguous()
                if mode == "LSTM":
                    c = c_init[idx] if c_init is not None else _zeros((batch, hidden), input)
                    w_hr = params.get("weight_hr" + sfx)
                    w_hr_t = None if w_hr is None else w_hr.t().contiguous()
                    hs, h, c = _run_lstm(xs, h, c, w_hh_t, w_hr_t, hidden, walk)
                    c_last.append(c)
                elif mode == "GRU":
                    hs, h = _run_gru(xs, h, w_hh_t, b_hh, hidden, walk)
                else:
                    hs, h = _run_rnn(xs, h, w_hh_t, act, walk)
                h_last.append(h)
                if direction:
                    hs = hs[::-1]
                outputs.append(stack(hs, 0) if hs else _zeros((0, batch, out_size), input))
            layer_input = outputs[0] if num_directions == 1 else cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = _dropout(layer_input, self.dropout, True)
        h_n = stack(h_last, 0)
        c_n = stack(c_last, 0) if c_last else None
        return layer_input, h_n, c_n

    def _forward(self, input, hx, is_lstm: bool):
        from ..utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, is_lstm)
        input, hx, is_batched = self._batch_input(input, hx, is_lstm)
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if is_lstm:
            if hx is not None:
                self.check_input(input)
                self.check_hidden_size(
                    hx[0],
                    self.get_expected_hidden_size(input),
                    "Expected hidden[0] size {}, got {}",
                )
                self.check_hidden_size(
                    hx[1], self._expected_cell_size(input), "Expected hidden[1] size {}, got {}"
                )
            else:
                self.check_input(input)
            h0, c0 = hx if hx is not None else (None, None)
        else:
            if hx is not None:
                self.check_forward_args(input, hx)
            else:
                self.check_input(input)
            h0, c0 = hx, None
        x = input.transpose(0, 1) if self.batch_first else input
        output, h_n, c_n = self._run(x, h0, c0)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return output, h_n, c_n

    def _forward_packed(self, packed, hx, is_lstm: bool):
        """A PackedSequence in, one out (same order indices); h_n / c_n in the caller's batch
        order. The batch is run padded, each sequence's state frozen past its length."""
        from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

        name = self._module_name()
        data, batch_sizes = packed.data, packed.batch_sizes
        if data.ndim != 2 or data.shape[1] != self.input_size:
            raise ShapeError(
                f"{name}: packed input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got data of shape {tuple(data.shape)}"
            )
        padded, lengths = pad_packed_sequence(PackedSequence(data, batch_sizes))
        batch = padded.shape[1]
        order, unorder = packed.sorted_indices, packed.unsorted_indices
        states = [] if hx is None else (list(hx) if is_lstm else [hx])
        layers = (2 if self.bidirectional else 1) * self.num_layers
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        for k, state in enumerate(states):
            want = (layers, batch, out_size if k == 0 else self.hidden_size)
            self.check_hidden_size(state, want, f"Expected hidden[{k}] size {{}}, got {{}}")
            if order is not None:
                states[k] = state.index_select(1, order.to(state.device))
        h0 = states[0] if states else None
        c0 = states[1] if len(states) > 1 else None
        output, h_n, c_n = self._run(padded, h0, c0, lengths)
        out = pack_padded_sequence(output, lengths, enforce_sorted=True)
        out = PackedSequence(out.data, out.batch_sizes, order, unorder)
        if unorder is not None:
            h_n = h_n.index_select(1, unorder.to(h_n.device))
            c_n = c_n.index_select(1, unorder.to(c_n.device)) if c_n is not None else None
        return out, h_n, c_n

    def _expected_cell_size(self, input: Tensor) -> tuple:
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return ((2 if self.bidirectional else 1) * self.num_layers, batch, self.hidden_size)


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


# -- cells ---------------------------------------------------------------------------------


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
        if input.dtype != self.weight_ih.dtype:
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
            if s.dtype != input.dtype:
                raise RNNDTypeError(
                    f"{name}: {sname} dtype ({s.dtype}) does not match input dtype ({input.dtype})"
                )
            out.append(s)
        return input, out, is_batched

    def _gates(self, x: Tensor, h: Tensor, fold_bias: bool = True):
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
