"""Whole RNN layers (``nn.RNN``, ``nn.GRU``, ``nn.LSTM``) under ``ember.autocast`` against
PyTorch 2.13, one table of layers times the ways of calling them.

On the CPU (bfloat16) the reference is torch run for real: output and state dtypes, values
(within bfloat16's tolerance, same weights through ``state_dict``, float32 inputs) and gradient
dtypes after backward. Where torch takes oneDNN's ``mkldnn_rnn`` (an LSTM without projections or
packed input) and this CPU's oneDNN refuses bfloat16 ("could not create a primitive
descriptor"), the dtypes come from the same call under ``FakeTensorMode`` (torch's own dispatch:
``use_mkldnn``, the autocast kernel of ``mkldnn_rnn``, its meta function) and the values from
torch in float32. On cuda (float16) the dtypes are torch's AutocastCUDA kernels on fake cuda
tensors (``_torch_cuda``); ember runs on the strict fake CuPy.
"""

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import ember

from ._torch_cuda import cuda_autocast

T, B, IN, HID = 4, 3, 4, 5
LENGTHS = [3, 4, 2]  # unsorted: the packed cases reorder the batch
RNG = np.random.default_rng(3)
X = RNG.standard_normal((T, B, IN)).astype(np.float32)
STATE = RNG.standard_normal((4, B, HID)).astype(np.float32)

# name -> (layer, keyword arguments)
LAYERS = {
    "rnn_tanh": ("RNN", {}),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "rnn_no_bias": ("RNN", {"bias": False}),
    "rnn_relu_no_bias": ("RNN", {"nonlinearity": "relu", "bias": False}),
    "rnn_2_layers": ("RNN", {"num_layers": 2}),
    "rnn_bidirectional": ("RNN", {"bidirectional": True}),
    "rnn_batch_first": ("RNN", {"batch_first": True}),
    "gru": ("GRU", {}),
    "gru_no_bias": ("GRU", {"bias": False}),
    "gru_2_layers": ("GRU", {"num_layers": 2}),
    "gru_bidirectional": ("GRU", {"bidirectional": True}),
    "gru_batch_first": ("GRU", {"batch_first": True}),
    "lstm": ("LSTM", {}),
    "lstm_no_bias": ("LSTM", {"bias": False}),
    "lstm_2_layers": ("LSTM", {"num_layers": 2}),
    "lstm_bidirectional": ("LSTM", {"bidirectional": True}),
    "lstm_batch_first": ("LSTM", {"batch_first": True}),
    "lstm_proj": ("LSTM", {"proj_size": 3}),
    "lstm_proj_2_layers_bidirectional": (
        "LSTM",
        {"proj_size": 3, "num_layers": 2, "bidirectional": True},
    ),
}
CALLS = ["zero_state", "h0", "packed", "packed_h0"]


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """torch's small bfloat16 kernels run several times faster on one thread here."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _inputs(lib, kind, kw, call):
    """x (and hx) of ``lib`` for one call: float32, requiring grad."""
    x = X.transpose(1, 0, 2) if kw.get("batch_first") else X
    x = lib.tensor(np.ascontiguousarray(x), requires_grad=True)
    hx = None
    if call.endswith("h0"):
        layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        h = lib.tensor(STATE[:layers, :, : kw.get("proj_size") or HID].copy(), requires_grad=True)
        c = lib.tensor(STATE[-layers:].copy(), requires_grad=True)
        hx = (h, c) if kind == "LSTM" else h
    return x, hx


def _call(lib, m, kind, kw, call):
    """Run ``m``; return (output, states, leaves whose grads to check)."""
    x, hx = _inputs(lib, kind, kw, call)
    inp = x
    if call.startswith("packed"):
        pack = lib.nn.utils.rnn.pack_padded_sequence
        inp = pack(x, LENGTHS, batch_first=kw.get("batch_first", False), enforce_sorted=False)
    out, states = m(inp, hx)
    out = out.data if call.startswith("packed") else out
    states = states if isinstance(states, tuple) else (states,)
    leaves = [x] + ([] if hx is None else list(hx if isinstance(hx, tuple) else (hx,)))
    return out, states, leaves


def _layer_pair(name):
    kind, kw = LAYERS[name]
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(IN, HID, **kw)
    em = getattr(ember.nn, kind)(IN, HID, **kw)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return kind, kw, tm, em


def _np(t):
    return t.detach().float().numpy()


def _dt(t) -> str:
    return str(t.dtype).split(".")[1]


def _backward(out, states):
    (out.float().sum() + sum(s.float().sum() for s in states)).backward()


def _torch_reference(tm, kind, kw, call):
    """torch's dtypes, values and gradient dtypes under CPU bfloat16 autocast (see the top)."""
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, states, leaves = _call(torch, tm, kind, kw, call)
    except RuntimeError as e:
        if "primitive descriptor" not in str(e):
            raise
        with FakeTensorMode(allow_non_fake_inputs=True):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                fout, fstates, _ = _call(torch, tm, kind, kw, call)
            dtypes = [_dt(fout)] + [_dt(s) for s in fstates]
        out, states, leaves = _call(torch, tm, kind, kw, call)  # values: float32
        _backward(out, states)
        # mkldnn_rnn's inputs are autocast's casts, whose gradients cast back (as ember's)
        return dtypes, out, states, None
    dtypes = [_dt(out)] + [_dt(s) for s in states]
    _backward(out, states)
    grads = [_dt(p.grad) for p in tm.parameters()] + [_dt(t.grad) for t in leaves]
    return dtypes, out, states, grads


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch_cpu_autocast(name, call):
    kind, kw, tm, em = _layer_pair(name)
    want, t_out, t_states, t_grads = _torch_reference(tm, kind, kw, call)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out, states, leaves = _call(ember, em, kind, kw, call)
    got = [out.dtype.name] + [s.dtype.name for s in states]
    assert got == want, f"{name} {call}: ember {got}, torch {want} (output, states)"
    for e, t in zip([out, *states], [t_out, *t_states]):
        np.testing.assert_allclose(_np(e), _np(t), rtol=4e-2, atol=4e-2)
    _backward(out, states)
    grads = [p.grad.dtype.name for p in em.parameters()] + [t.grad.dtype.name for t in leaves]
    assert grads == (t_grads or ["float32"] * len(grads))


@pytest.mark.parametrize("name", ["rnn_tanh", "gru", "lstm", "lstm_proj"])
def test_disabled_inside_region_is_float32(name):
    """``autocast(enabled=False)`` nested in a region: the layer runs in float32, as torch."""
    kind, kw, tm, em = _layer_pair(name)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.autocast("cpu", enabled=False):
            t_out, t_states, _ = _call(torch, tm, kind, kw, "h0")
    with ember.autocast("cpu", dtype=ember.bfloat16):
        with ember.autocast("cpu", enabled=False):
            out, states, _ = _call(ember, em, kind, kw, "h0")
    assert [_dt(t) for t in (t_out, *t_states)] == ["float32"] * (1 + len(states))
    for e, t in zip([out, *states], [t_out, *t_states]):
        assert e.dtype is ember.float32
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["rnn_tanh", "gru", "lstm_proj"])
def test_lower_precision_input_and_state_mix_under_autocast(name):
    """torch skips the layers' dtype checks under autocast: a bfloat16 input, or a bfloat16
    h0 with a float32 input, runs (all bfloat16 here); float64 keeps ember's message."""
    kind, kw, tm, em = _layer_pair(name)
    for lib, m in ((torch, tm), (ember, em)):
        x = lib.tensor(X).bfloat16()
        h = lib.tensor(STATE[:1, :, : kw.get("proj_size") or HID]).bfloat16()
        hx = (h, lib.tensor(STATE[:1]).bfloat16()) if kind == "LSTM" else h
        with lib.autocast("cpu", dtype=lib.bfloat16):
            a = m(x)
            b = m(lib.tensor(X), hx)
        for out, states in (a, b):
            states = states if isinstance(states, tuple) else (states,)
            assert [_dt(t) for t in (out, *states)] == ["bfloat16"] * (1 + len(states))
    with ember.autocast("cpu"), pytest.raises(ValueError, match="does not match weight dtype"):
        em(ember.tensor(X).double())


def test_lstm_onednn_output_grad_fn_name():
    """torch's oneDNN LSTM output is the kernel's (``MkldnnRnnLayerBackward0``), in bfloat16."""
    kind, kw, tm, em = _layer_pair("lstm")
    with FakeTensorMode(allow_non_fake_inputs=True), torch.autocast("cpu", dtype=torch.bfloat16):
        want = type(tm(torch.tensor(X))[0].grad_fn).__name__
    with ember.autocast("cpu"):
        out = em(ember.tensor(X))[0]
    assert (out.dtype, out.grad_fn.name()) == (ember.bfloat16, want)


# -- cuda: float16 for output and every state ---------------------------------------------
#
# torch's layers run ``_cudnn_rnn`` on a GPU, whose autocast wrapper (AutocastRNN.cpp, built
# only with cuDNN) casts input, weights and states to float16. A CPU-only torch has no cuDNN,
# so on fake cuda tensors its layers take the fused cells (``_thnn_fused_lstm_cell``, the
# ``rnn_*_cell`` ops, listed lower precision): float16 too under float16 autocast, checked here
# through ``torch._VF`` (torch's GRU refuses fake cuda tensors, so GRU is asserted directly).

CUDA_LAYERS = ["rnn_tanh", "rnn_relu", "rnn_no_bias", "gru", "lstm", "lstm_proj"]


def _torch_cuda_dtypes(name):
    kind, kw = LAYERS[name]
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(IN, HID, **kw)
    weights = [p.detach().numpy() for p in tm._flat_weights]
    with cuda_autocast(torch.float16) as fake:
        x = fake(X)
        ws = [fake(w) for w in weights]
        h = fake(STATE[:1, :, : kw.get("proj_size") or HID])
        args = (ws, tm.bias, 1, 0.0, False, False, False)
        if kind == "LSTM":
            out = torch._VF.lstm(x, (h, fake(STATE[:1])), *args)
        else:
            out = getattr(torch._VF, tm.mode.lower())(x, h, *args)
        return [_dt(t) for t in out]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", CUDA_LAYERS)
def test_layer_cuda_autocast_is_float16(fake_cuda, name, dtype):
    kind, kw, tm, em = _layer_pair(name)
    em.to("cuda")
    if kind != "GRU" and dtype == "float16":
        assert _torch_cuda_dtypes(name) == ["float16"] * (3 if kind == "LSTM" else 2)
    x = ember.tensor(X, device="cuda", requires_grad=True)
    with ember.autocast("cuda", dtype=getattr(ember, dtype)):
        out, states = em(x)
    states = states if isinstance(states, tuple) else (states,)
    # float16 even under bfloat16 autocast: the cuDNN wrapper casts to half, whatever the region
    assert [t.dtype.name for t in (out, *states)] == ["float16"] * (1 + len(states))
    assert out.device.type == "cuda"
    _backward(out, states)
    assert {p.grad.dtype.name for p in em.parameters()} | {x.grad.dtype.name} == {"float32"}
