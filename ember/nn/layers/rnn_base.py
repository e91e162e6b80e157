"""RNNBase, the shared part of the recurrent layers RNN, LSTM and GRU: arguments, parameters
(PyTorch's names, shapes, order and initialization), input and state checks, and the layer
loop (one matrix product per layer and direction for the input projection; the recurrence of
``rnn_recurrence`` over time), packed sequences included.

>>> import ember
>>> base = ember.nn.RNNBase("GRU", 3, 2)
>>> [name for name, _ in base.named_parameters()]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
"""

from __future__ import annotations

import math
import numbers
import warnings

from ... import dtypes as _dt
from ..._config import state as _autocast_state
from ..._errors import DTypeError, ShapeError
from ..._node import named
from ..._tensor import Tensor
from ...amp.autocast_mode import cast_by_rule, run_rule
from ...functions.creation import arange
from ...functions.math import relu
from ...functions.math import tanh as _tanh
from ...functions.shape import cat, stack
from .. import init
from .._functional.dropout import dropout as _dropout
from ..module import Module
from ..parameter import Parameter
from .rnn_recurrence import _fused, _gru_layer, _lstm_layer, _run_gru, _run_lstm, _run_rnn

__all__ = ["RNNBase"]


class RNNDTypeError(DTypeError, ValueError):
    """Input dtype differs from the weights' (PyTorch raises ValueError here)."""


def _empty(*shape, device=None, dtype=None) -> Tensor:
    from ...functions.creation import empty

    return empty(*shape, device=device, dtype=dtype)


_AUTOCAST_DTYPES = (_dt.float32, _dt.float16, _dt.bfloat16)


def _autocast_mixes(t: Tensor, weight: Tensor) -> bool:
    """Whether autocast is on for ``t``'s device and may mix its dtype with the weights' (as
    PyTorch, which skips the layers' dtype checks under autocast); float64 still refuses."""
    policy = _autocast_state.autocast
    return (
        policy is not None
        and t.device.type in policy.dtypes
        and t.dtype in _AUTOCAST_DTYPES
        and weight.dtype in _AUTOCAST_DTYPES
    )


def _zeros(shape, like: Tensor) -> Tensor:
    from ...functions.creation import zeros

    return zeros(*shape, dtype=like.dtype, device=like.device)


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
        if input.dtype != w.dtype and not _autocast_mixes(input, w):
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
        if hx.dtype != self.weight_ih_l0.dtype and not _autocast_mixes(hx, self.weight_ih_l0):
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

    # -- autocast: the rule of the PyTorch kernel that runs the layer --------------------------
    def _autocast_kernel(self, input: Tensor, packed: bool) -> str:
        """The PyTorch function whose autocast rule (``ember.amp.policy``) the whole layer takes:
        ``_cudnn_rnn`` on cuda (input, weights and states to float16); on the CPU oneDNN's
        ``mkldnn_rnn`` (a lower-precision op) for an LSTM without projections or packed input,
        as PyTorch's ``use_mkldnn``; otherwise ``linear``: PyTorch's native cells are
        ``linear(x, w_ih, b_ih) + linear(h, w_hh, b_hh)`` (and ``matmul(h, w_hr.t())``), so
        only those products are lower precision and the rest promotes (a GRU's ``z * h`` with a
        float32 state, an LSTM's ``f * c``)."""
        if input.device.type == "cuda":
            return "_cudnn_rnn"
        if self.mode == "LSTM" and not self.proj_size and not packed and input.numel():
            return "mkldnn_rnn"
        return "linear"

    def _run(self, input: Tensor, h0: Tensor | None, c0: Tensor | None, lengths=None):
        """``input`` is time-major (T, B, I); returns output (T, B, D*H_out), h_n and c_n.
        With ``lengths`` (a packed batch, padded) each sequence's state stops at its end.
        Under autocast the layer follows its kernel's rule (``_autocast_kernel``)."""
        weights = [getattr(self, n) for n in self._flat_weights_names]
        if _autocast_state.autocast is None:
            return self._layers(input, h0, c0, lengths, weights)
        kernel = self._autocast_kernel(input, lengths is not None)
        if kernel == "linear":  # the weights take linear's rule once; mm casts x and h per step
            return self._layers(input, h0, c0, lengths, cast_by_rule(kernel, weights))
        return run_rule(kernel, self._layers, (input, h0, c0, lengths, weights), {})

    # -- the layer loop ----------------------------------------------------------------------
    def _layers(self, input: Tensor, h0, c0, lengths, weights: list):
        """``_run``'s body; ``weights`` are the parameters in ``_flat_weights_names`` order."""
        mode = self.mode
        steps, batch = input.shape[0], input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        hidden = self.hidden_size
        out_size = self.proj_size if self.proj_size > 0 else hidden
        params = dict(zip(self._flat_weights_names, weights))
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
                h = h_init[idx] if h_init is not None else _zeros((batch, out_size), input)
                # one contiguous copy per forward: NumPy multiplies small matrices by a
                # transposed view several times slower than by a contiguous one
                w_hh_t = w_hh.t().contiguous()
                w_hr = params.get("weight_hr" + sfx) if mode == "LSTM" else None
                if _fused(mode, w_hr, keep, proj, h):  # the steps as one op
                    if mode == "LSTM":
                        c = c_init[idx] if c_init is not None else _zeros((batch, hidden), input)
                        hs, h, c = _lstm_layer(proj, h, c, w_hh_t, bool(direction))
                        c_last.append(c)
                    else:
                        hs, h = _gru_layer(proj, h, w_hh_t, b_hh, bool(direction))
                    h_last.append(h)
                    outputs.append(named(hs, "StackBackward0"))  # the composite's name
                    continue
                # the steps' gradients are written by one op (autograd's GradPieces)
                xs = proj.unbind(0)
                walk = keep
                if direction:
                    xs = xs[::-1]
                    walk = None if keep is None else keep[::-1]
                if mode == "LSTM":
                    c = c_init[idx] if c_init is not None else _zeros((batch, hidden), input)
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
        if is_lstm and self._onednn_layer(x):
            named(output, "MkldnnRnnLayerBackward0")
        if self.batch_first:
            # PyTorch's grad_fn names: its LSTM transposes by one overload, RNN and GRU by another
            output = named(output.transpose(0, 1), f"TransposeBackward{0 if is_lstm else 1}")
        if not is_batched:
            output = named(output.squeeze(batch_dim), "SqueezeBackward1")
            h_n = named(h_n.squeeze(1), "SqueezeBackward1")
            c_n = named(c_n.squeeze(1), "SqueezeBackward1") if c_n is not None else None
        return output, h_n, c_n

    def _onednn_layer(self, input: Tensor) -> bool:
        """Whether PyTorch's CPU build runs this LSTM by oneDNN, whose last layer's output then
        shows ``MkldnnRnnLayerBackward0``: float32, one direction, no projection."""
        one_way = not self.bidirectional and self.proj_size == 0
        return one_way and input.dtype == _dt.float32 and input.device.type == "cpu"

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
        named(out.data, "CatBackward0")  # PyTorch's packed kernel concatenates the time steps
        out = PackedSequence(out.data, out.batch_sizes, order, unorder)
        if unorder is not None:
            h_n = h_n.index_select(1, unorder.to(h_n.device))
            c_n = c_n.index_select(1, unorder.to(c_n.device)) if c_n is not None else None
        return out, h_n, c_n

    def _expected_cell_size(self, input: Tensor) -> tuple:
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return ((2 if self.bidirectional else 1) * self.num_layers, batch, self.hidden_size)
