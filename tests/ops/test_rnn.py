"""An LSTM or GRU direction's steps as one op (``ember.ops.rnn``): ``nn.LSTM`` and ``nn.GRU``
through it against PyTorch (values, every gradient, both directions, float64, second
derivatives), on the CPU and the strict fake GPU; which layers take it; and the packed layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops import rnn as R


@pytest.fixture
def fused(monkeypatch):
    """How many times the fused ops ran forward and backward."""
    calls = {"forward": 0, "grad": 0}
    for op, kind in [
        (R.LSTMRecurrence, "forward"),
        (R.GRURecurrence, "forward"),
        (R.LSTMRecurrenceGrad, "grad"),
        (R.GRURecurrenceGrad, "grad"),
    ]:

        def counted(self, *a, _real=op.forward, _kind=kind):
            calls[_kind] += 1
            return _real(self, *a)

        monkeypatch.setattr(op, "forward", counted)
    return calls


def _pair(kw, dtype=torch.float32, cls="LSTM"):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(5, 6, **kw).to(dtype)
    em = getattr(ember.nn, cls)(5, 6, **kw)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, em


CASES = {
    "one layer": ({}, (7, 3, 5)),
    "two layers, batch first": ({"num_layers": 2, "batch_first": True}, (3, 7, 5)),
    "bidirectional": ({"bidirectional": True}, (4, 2, 5)),
    "one step": ({}, (1, 2, 5)),
    "no bias": ({"bias": False}, (3, 2, 5)),
}


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_torch(name, dtype, cls, device, fused):
    kw, shape = CASES[name]
    tdt = getattr(torch, dtype)
    tm, em = _pair(kw, tdt, cls)
    em = em.to(device).to(getattr(ember, dtype))
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h0 = rng.standard_normal((layers, shape[1 if not kw.get("batch_first") else 0], 6))
    c0 = rng.standard_normal(h0.shape)
    tx, th, tc = (torch.tensor(a, dtype=tdt, requires_grad=True) for a in (x, h0, c0))
    ex, eh, ec = (
        ember.tensor(a.astype(dtype), device=device, requires_grad=True) for a in (x, h0, c0)
    )
    results = []
    for m, xt, ht, ct in ((tm, tx, th, tc), (em, ex, eh, ec)):
        if cls == "LSTM":
            out, (hn, cn) = m(xt, (ht, ct))
            loss = (out * out).sum() + (hn * 2).sum() + cn.sum()
        else:
            out, hn = m(xt, ht)
            cn = None
            loss = (out * out).sum() + (hn * 2).sum()
        loss.backward()
        grads = [xt.grad, ht.grad] + ([ct.grad] if cls == "LSTM" else [])
        results.append([out, hn] + ([cn] if cls == "LSTM" else []) + grads)
    assert fused == {"forward": layers, "grad": layers}
    tol = 1e-5 if dtype == "float32" else 1e-12
    pairs = list(zip(results[1], results[0]))
    pairs += [(p.grad, tp.grad) for p, tp in zip(em.parameters(), tm.parameters())]
    for got, want in pairs:
        np.testing.assert_allclose(
            got.detach().cpu().numpy(), want.detach().numpy(), rtol=tol, atol=tol
        )


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_second_derivative_matches_torch(cls, fused):
    """create_graph: the vjp differentiates the composite steps, so a gradient penalty works."""
    tm, em = _pair({}, cls=cls)
    x = np.random.default_rng(2).standard_normal((4, 2, 5)).astype(np.float32)
    results = []
    for lib, m in ((torch, tm), (ember, em)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = m(xt)
        (gx,) = lib.autograd.grad((out * out).sum(), xt, create_graph=True)
        (gx * gx).sum().backward()
        results.append([xt.grad] + [p.grad for p in m.parameters()])
    assert fused["forward"] == 1  # the composite steps serve create_graph's first gradient
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "kw, why",
    [({"proj_size": 3}, "a projection"), ({}, "packed lengths")],
)
def test_what_keeps_the_composite_steps(kw, why, fused):
    _, em = _pair(kw)
    x = ember.randn(4, 2, 5)
    if why == "packed lengths":
        x = ember.nn.utils.rnn.pack_padded_sequence(x, [4, 2])
    em(x)
    assert fused["forward"] == 0, why


def test_bfloat16_under_autocast_keeps_the_composite_steps(fused):
    _, em = _pair({})
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out, _ = em(ember.randn(3, 2, 5))
    assert fused["forward"] == 0 and out.dtype == ember.bfloat16


def test_packed_layout_and_views():
    t, b, n = 3, 2, 4
    rng = np.random.default_rng(3)
    xs, h0, c0 = (rng.standard_normal(s) for s in ((t, b, 4 * n), (b, n), (b, n)))
    w = rng.standard_normal((n, 4 * n)) * 0.3
    out = R.LSTMRecurrence(False).forward(np, xs, h0, c0, w)
    assert out.shape == (6 * t + 1, b, n)
    h, c = h0, c0
    for k in range(t):  # the recurrence by hand, PyTorch's gate order
        pre = xs[k] + h @ w
        i, f, g, o = (pre[:, j * n : (j + 1) * n] for j in range(4))
        i, f, o = (1 / (1 + np.exp(-v)) for v in (i, f, o))
        c = f * c + i * np.tanh(g)
        h = o * np.tanh(c)
        np.testing.assert_allclose(out[k], h, rtol=1e-12)
        np.testing.assert_allclose(out[t + 1 + k], c, rtol=1e-12)
        np.testing.assert_allclose(out[2 * t + 1 + 4 * k + 3], o, rtol=1e-12)
    np.testing.assert_allclose(out[t], c, rtol=1e-12)
    back = R.LSTMRecurrence(True).forward(np, xs[::-1].copy(), h0, c0, w)
    np.testing.assert_allclose(back[:t][::-1], out[:t], rtol=1e-12)


def test_the_gradient_ops_refuse_a_second_derivative():
    with pytest.raises(ember.AutogradError, match="LSTMRecurrenceGrad: runs only without"):
        R.LSTMRecurrenceGrad(False).vjp(None, None, None, None, None, None, None)
    with pytest.raises(ember.AutogradError, match="GRURecurrenceGrad: runs only without"):
        R.GRURecurrenceGrad(False).vjp(None, None, None, None, None, None)
