"""The grad_fn names of RNN, LSTM and GRU results as PyTorch's CPU build prints them (a printed
``output`` shows them): oneDNN's LSTM layer, batch_first transposes, unbatched squeezes,
bidirectional concatenation, packed sequences, float64."""

import pytest
import torch

import ember

CASES = {
    "plain": ({}, (5, 2, 3), None),
    "batch_first": ({"batch_first": True}, (2, 5, 3), None),
    "two_layers_dropout": ({"num_layers": 2, "dropout": 0.5}, (5, 2, 3), None),
    "bidirectional": ({"bidirectional": True}, (5, 2, 3), None),
    "bidirectional_batch_first": ({"bidirectional": True, "batch_first": True}, (2, 5, 3), None),
    "unbatched": ({}, (5, 3), None),
    "unbatched_batch_first": ({"batch_first": True}, (5, 3), None),
    "float64": ({}, (5, 2, 3), "float64"),
    "packed": ({}, (5, 2, 3), "packed"),
}


def _names(lib, cls: str, kw: dict, shape: tuple, extra):
    kwargs = dict(kw)
    m = getattr(lib.nn, cls)(3, 4, **kwargs)
    x = lib.ones(*shape) * 0.5
    if extra == "float64":
        m, x = m.double(), x.double()
    if extra == "packed":
        x = lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3])
    out, h = m(x)
    out = out.data if extra == "packed" else out
    states = h if isinstance(h, tuple) else (h,)
    return [t.grad_fn.name() for t in (out, *states)]


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("case", list(CASES))
def test_grad_fn_names_match_torch(cls, case):
    kw, shape, extra = CASES[case]
    assert _names(ember, cls, kw, shape, extra) == _names(torch, cls, kw, shape, extra)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_lstm_with_projection_is_not_onednn():
    args = ({"proj_size": 2}, (5, 2, 3), None)
    assert _names(ember, "LSTM", *args) == _names(torch, "LSTM", *args)
