"""RNN, LSTM, GRU and their cells against torch.nn with the same weights: outputs, final
states and the gradients of inputs, initial states and every parameter."""

import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn.layers.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell

T, B, I, H = 6, 3, 5, 6  # noqa: E741
TOL = {"float64": dict(rtol=1e-10, atol=1e-10), "float32": dict(rtol=1e-4, atol=1e-5)}
EMBER = {
    "RNN": RNN,
    "LSTM": LSTM,
    "GRU": GRU,
    "RNNCell": RNNCell,
    "LSTMCell": LSTMCell,
    "GRUCell": GRUCell,
}


def _pair(name, dtype="float64", *args, **kwargs):
    """A torch module and an ember one holding the same weights (loaded via state_dict)."""
    tm = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    em = EMBER[name](*args, **kwargs, dtype=getattr(ember, dtype))
    assert [(k, tuple(v.shape)) for k, v in tm.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in em.state_dict().items()
    ]
    result = em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    return tm, em


def _leaves(arrays, device="cpu"):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a, requires_grad=True, device=device) for a in arrays]
    return ts, es


def _flat(out):
    """(output, h) or (output, (h, c)) -> [output, h(, c)]."""
    if isinstance(out, tuple):
        return [x for o in out for x in _flat(o)]
    return [out]


def _close(e, t, tol, what):
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), err_msg=what, **tol)


def _check(tm, em, t_in, e_in, call, dtype, rng):
    """Forward both, compare outputs; backward random cotangents, compare every gradient."""
    tol = TOL[dtype]
    device = e_in[0].device
    if device.type != "cpu":  # another summation order on the GPU
        tol = dict(rtol=max(tol["rtol"], 1e-7), atol=max(tol["atol"], 1e-8))
    t_outs, e_outs = _flat(call(tm, t_in)), _flat(call(em, e_in))
    assert len(t_outs) == len(e_outs)
    for i, (e, t) in enumerate(zip(e_outs, t_outs)):
        assert tuple(e.shape) == tuple(t.shape), (i, e.shape, t.shape)
        assert e.dtype == getattr(ember, dtype) and e.device == device
        _close(e, t, tol, f"output {i}")
    cots = [rng.standard_normal(tuple(t.shape)).astype(dtype) for t in t_outs]
    sum((t * torch.tensor(c)).sum() for t, c in zip(t_outs, cots)).backward()
    sum((e * ember.tensor(c, device=device)).sum() for e, c in zip(e_outs, cots)).backward()
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        _close(e.grad, t.grad, tol, f"grad of input {i}")
    for (tn, tp), (en, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert tn == en
        _close(ep.grad, tp.grad, tol, f"grad of {tn}")


def _rnn_kwargs(mode):
    if mode == "RNN_relu":
        return "RNN", {"nonlinearity": "relu"}
    if mode == "RNN_tanh":
        return "RNN", {}
    return mode, {}


# layers, bidirectional, batch_first, initial state, bias
CONFIGS = [
    (1, False, False, False, True),
    (2, True, False, True, True),
    (2, False, True, True, False),
    (1, True, True, False, True),
]
MODES = ["RNN_tanh", "RNN_relu", "LSTM", "GRU"]


def _run_case(
    mode,
    layers,
    bidir,
    batch_first,
    with_state,
    bias,
    dtype="float64",
    batched=True,
    proj_size=0,
    steps=T,
    device="cpu",
):
    rng = np.random.default_rng(0)
    name, kw = _rnn_kwargs(mode)
    if proj_size:
        kw["proj_size"] = proj_size
    tm, em = _pair(
        name,
        dtype,
        I,
        H,
        num_layers=layers,
        bias=bias,
        batch_first=batch_first,
        bidirectional=bidir,
        **kw,
    )
    em.to(device)
    d = 2 if bidir else 1
    h_out = proj_size or H
    if batched:
        x = rng.standard_normal((B, steps, I) if batch_first else (steps, B, I)).astype(dtype)
        hshape, cshape = (layers * d, B, h_out), (layers * d, B, H)
    else:
        x = rng.standard_normal((steps, I)).astype(dtype)
        hshape, cshape = (layers * d, h_out), (layers * d, H)
    arrays = [x]
    if with_state:
        arrays.append(rng.standard_normal(hshape).astype(dtype) * 0.5)
        if name == "LSTM":
            arrays.append(rng.standard_normal(cshape).astype(dtype) * 0.5)

    def call(m, ins):
        if len(ins) == 1:
            return m(ins[0])
        return m(ins[0], ins[1] if len(ins) == 2 else (ins[1], ins[2]))

    t_in, e_in = _leaves(arrays, device)
    _check(tm, em, t_in, e_in, call, dtype, rng)


@pytest.mark.parametrize(
    "config", CONFIGS, ids=lambda c: "L{}-bi{:d}-bf{:d}-h0{:d}-b{:d}".format(*c)
)
@pytest.mark.parametrize("mode", MODES)
def test_rnn_matches_torch_float64(mode, config, device):
    _run_case(mode, *config, device=device)


@pytest.mark.parametrize("mode", MODES)
def test_rnn_matches_torch_float32(mode, device):
    _run_case(mode, 2, True, True, True, True, dtype="float32", device=device)


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_rnn_unbatched(mode, with_state):
    _run_case(mode, 2, True, False, with_state, True, batched=False)


@pytest.mark.parametrize(
    "config",
    [(1, False, False, False, True), (2, True, True, True, True), (2, False, False, True, False)],
)
def test_lstm_proj_size(config):
    _run_case("LSTM", *config, proj_size=3)


def test_lstm_proj_size_unbatched():
    _run_case("LSTM", 1, True, False, True, True, batched=False, proj_size=2)


@pytest.mark.parametrize("steps", [1, 18])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_sequence_lengths(mode, steps):
    """One step, and enough steps for the input projection to be split in a deep tree."""
    _run_case(mode, 1, True, False, True, True, steps=steps)


# -- parameters, init, repr ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,kw",
    [
        ("RNN", dict(num_layers=2, bidirectional=True)),
        ("LSTM", dict(num_layers=2, bias=False)),
        ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
        ("GRU", dict(num_layers=3, bidirectional=True)),
    ],
)
def test_parameter_names_shapes_order_and_init(name, kw):
    tm = getattr(torch.nn, name)(I, H, **kw)
    em = EMBER[name](I, H, **kw)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in em.named_parameters()
    ]
    assert list(tm.state_dict()) == list(em.state_dict())
    assert [[tuple(p.shape) for p in ws] for ws in tm.all_weights] == [
        [tuple(p.shape) for p in ws] for ws in em.all_weights
    ]
    bound = 1 / math.sqrt(H)
    for _, p in em.named_parameters():
        assert p.dtype == ember.float32 and p.requires_grad
        values = p.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound
        assert values.std() > bound / 4  # uniform(-bound, bound), not constant
    assert repr(em) == repr(tm)
    em.flatten_parameters()  # a no-op, for PyTorch code that calls it


def test_ember_state_dict_loads_into_torch():
    em = LSTM(I, H, num_layers=2, bidirectional=True)
    tm = torch.nn.LSTM(I, H, num_layers=2, bidirectional=True)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in em.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((T, B, I)).astype(np.float32)
    with torch.no_grad():
        t_out, _ = tm(torch.tensor(x))
    with ember.no_grad():
        e_out, _ = em(ember.tensor(x))
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=1e-4, atol=1e-5)


def test_repr_variants():
    for args, kw in [
        ((3, 4), dict(nonlinearity="relu", batch_first=True, dropout=0.5, num_layers=2)),
        ((3, 4), dict(bias=False)),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert repr(RNN(*args, **kw)) == repr(torch.nn.RNN(*args, **kw))
    assert repr(GRUCell(3, 4, bias=False)) == repr(torch.nn.GRUCell(3, 4, bias=False))
    assert repr(RNNCell(3, 4, nonlinearity="relu")) == repr(
        torch.nn.RNNCell(3, 4, nonlinearity="relu")
    )
    assert repr(LSTM(3, 4, proj_size=2)) == repr(torch.nn.LSTM(3, 4, proj_size=2))


def test_positional_nonlinearity_and_device_dtype():
    rnn = RNN(3, 4, 2, "relu", dtype=ember.float64)
    assert rnn.nonlinearity == "relu" and rnn.num_layers == 2
    assert rnn.weight_ih_l0.dtype == ember.float64


# -- dropout between layers ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_dropout_train_and_eval(name):
    ember.manual_seed(0)
    m = EMBER[name](I, H, num_layers=2, dropout=0.5)
    plain = EMBER[name](I, H, num_layers=2)
    plain.load_state_dict(m.state_dict())
    x = ember.randn(T, B, I)
    out_train = _flat(m(x))
    out_train2 = _flat(m(x))
    assert [tuple(o.shape) for o in out_train] == [tuple(o.shape) for o in _flat(plain(x))]
    assert not np.allclose(out_train[0].detach().numpy(), out_train2[0].detach().numpy())
    m.eval()
    for a, b in zip(_flat(m(x)), _flat(plain(x))):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    # the last layer gets no dropout: with one layer, train == eval
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        one = EMBER[name](I, H, dropout=0.5)
    np.testing.assert_array_equal(
        _flat(one(x))[0].detach().numpy(), _flat(one.eval()(x))[0].detach().numpy()
    )


# -- cells ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
@pytest.mark.parametrize(
    "name,kw",
    [
        ("RNNCell", {}),
        ("RNNCell", {"nonlinearity": "relu"}),
        ("RNNCell", {"bias": False}),
        ("LSTMCell", {}),
        ("LSTMCell", {"bias": False}),
        ("GRUCell", {}),
        ("GRUCell", {"bias": False}),
    ],
)
def test_cells_match_torch(name, kw, with_state, batched, dtype):
    rng = np.random.default_rng(1)
    tm, em = _pair(name, dtype, I, H, **kw)
    lead = (B,) if batched else ()
    arrays = [rng.standard_normal(lead + (I,)).astype(dtype)]
    if with_state:
        arrays += [
            rng.standard_normal(lead + (H,)).astype(dtype) * 0.5
            for _ in range(2 if name == "LSTMCell" else 1)
        ]

    def call(m, ins):
        if len(ins) == 1:
            return m(ins[0])
        return m(ins[0], ins[1] if len(ins) == 2 else (ins[1], ins[2]))

    t_in, e_in = _leaves(arrays)
    _check(tm, em, t_in, e_in, call, dtype, rng)


def test_cell_parameters_match_torch():
    for name in ("RNNCell", "LSTMCell", "GRUCell"):
        for bias in (True, False):
            tm, em = getattr(torch.nn, name)(I, H, bias=bias), EMBER[name](I, H, bias=bias)
            assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == [
                (n, tuple(p.shape)) for n, p in em.named_parameters()
            ]
            assert list(tm.state_dict()) == list(em.state_dict())
            bound = 1 / math.sqrt(H)
            assert all(abs(p.detach().numpy()).max() <= bound for p in em.parameters())


def test_cell_unrolled_equals_layer():
    """An LSTMCell stepped by hand gives the LSTM layer's output (same weights)."""
    layer = LSTM(I, H)
    cell = LSTMCell(I, H)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = ember.randn(T, B, I)
    out, (h_n, c_n) = layer(x)
    h = c = ember.zeros(B, H)
    for t in range(T):
        h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(h.detach().numpy(), out[t].detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(c.detach().numpy(), c_n[0].detach().numpy(), atol=1e-6)


# -- errors ---------------------------------------------------------------------------------


def test_errors_name_module_and_shapes():
    lstm = LSTM(10, 20, num_layers=2)
    with pytest.raises(
        RuntimeError,
        match=r"LSTM: input.size\(-1\) must be equal to input_size. "
        r"Expected 10, got 8",
    ):
        lstm(ember.randn(5, 3, 8))
    with pytest.raises(
        RuntimeError,
        match=r"LSTM: Expected hidden\[0\] size \(2, 3, 20\), got "
        r"\[1, 3, 20\]",
    ):
        lstm(ember.randn(5, 3, 10), (ember.zeros(1, 3, 20), ember.zeros(2, 3, 20)))
    with pytest.raises(
        RuntimeError,
        match=r"LSTM: Expected hidden\[1\] size \(2, 3, 20\), got "
        r"\[2, 4, 20\]",
    ):
        lstm(ember.randn(5, 3, 10), (ember.zeros(2, 3, 20), ember.zeros(2, 4, 20)))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        lstm(ember.randn(1, 5, 3, 10))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be 3-D"):
        lstm(ember.randn(5, 3, 10), (ember.zeros(2, 20), ember.zeros(2, 20)))
    gru = GRU(10, 20, batch_first=True)
    with pytest.raises(
        RuntimeError,
        match=r"GRU: Expected hidden size \(1, 3, 20\), got "
        r"\[1, 5, 20\]",
    ):
        gru(ember.randn(3, 5, 10), ember.zeros(1, 5, 20))
    with pytest.raises(
        RuntimeError, match="GRU: For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"
    ):
        gru(ember.randn(5, 10), ember.zeros(1, 1, 20))
    with pytest.raises(RuntimeError, match="RNN: For batched 3-D input, hx should also be 3-D"):
        RNN(10, 20)(ember.randn(5, 3, 10), ember.zeros(1, 20))
    with pytest.raises(
        ValueError,
        match=r"RNN: input dtype \(ember.float64\) does not match "
        r"weight dtype \(ember.float32\)",
    ):
        RNN(10, 20)(ember.randn(5, 3, 10, dtype=ember.float64))


def test_constructor_errors():
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        LSTM(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        GRU(3, 0)
    with pytest.raises(TypeError, match="bias should be of type bool"):
        RNN(3, 4, bias=1)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        RNNCell(3, 4, nonlinearity="gelu")


def test_cell_errors():
    cell = GRUCell(10, 20)
    with pytest.raises(
        RuntimeError,
        match=r"GRUCell: input.size\(-1\) must be equal to "
        r"input_size. Expected 10, got 8",
    ):
        cell(ember.randn(3, 8))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D"):
        cell(ember.randn(1, 3, 10))
    with pytest.raises(
        RuntimeError,
        match=r"GRUCell: Expected hidden size \(3, 20\), got "
        r"\[4, 20\]",
    ):
        cell(ember.randn(3, 10), ember.zeros(4, 20))
    with pytest.raises(
        RuntimeError,
        match=r"LSTMCell: Expected hx\[1\] size \(3, 20\), got "
        r"\[3, 21\]",
    ):
        LSTMCell(10, 20)(ember.randn(3, 10), (ember.zeros(3, 20), ember.zeros(3, 21)))
