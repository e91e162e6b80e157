"""Scaled dot-product attention as one op (``ember.ops.attention``): values and the three
gradients against PyTorch's ``scaled_dot_product_attention`` (shapes, causal, float32/64, CPU
and the strict fake GPU), second derivatives, eager == compiled (a CUDA graph on the fake),
which calls take the op (16-bit on a GPU), and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.ops import attention as A

SHAPES = {  # q, k, v
    "3-D": ((3, 5, 8), (3, 5, 8), (3, 5, 8)),
    "4-D, longer keys": ((2, 3, 4, 8), (2, 3, 7, 8), (2, 3, 7, 8)),
    "4-D, value width 4": ((2, 2, 6, 8), (2, 2, 6, 8), (2, 2, 6, 4)),
    "longer queries": ((1, 2, 7, 16), (1, 2, 3, 16), (1, 2, 3, 16)),
    "2-D": ((5, 8), (6, 8), (6, 8)),
}


@pytest.fixture
def counted(monkeypatch):
    calls = {"Attention": 0, "AttentionGrad": 0}
    for op in (A.Attention, A.AttentionGrad):

        def forward(self, *a, _real=op.forward, _name=op.__name__):
            calls[_name] += 1
            return _real(self, *a)

        monkeypatch.setattr(op, "forward", forward)
    return calls


def _data(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _attend(q, k, v, is_causal=False, scale=None):
    """The op itself, on any device and dtype (``F.scaled_dot_product_attention`` takes it for
    16-bit inputs on a GPU only)."""
    s = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    return ember.ops.base.apply(A.Attention(s, is_causal), q, k, v)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", list(SHAPES))
def test_matches_torch(name, causal, dtype, device, counted):
    arrays = _data(SHAPES[name], dtype)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in arrays)
    eq, ek, ev = (ember.tensor(a, device=device, requires_grad=True) for a in arrays)
    scale = 0.3 if name == "2-D" else None
    t_out = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, is_causal=causal, scale=scale
    )
    e_out = _attend(eq, ek, ev, is_causal=causal, scale=scale)
    g = np.random.default_rng(1).standard_normal(t_out.shape).astype(dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g, device=device))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(e_out.detach().cpu().numpy(), t_out.detach().numpy(), **tol)
    for e, t in zip((eq, ek, ev), (tq, tk, tv)):
        np.testing.assert_allclose(e.grad.cpu().numpy(), t.grad.numpy(), **tol)
    assert counted == {"Attention": 1, "AttentionGrad": 1}


@pytest.mark.parametrize("causal", [False, True])
def test_second_derivatives_match_torch(causal, counted):
    arrays = _data(SHAPES["4-D, longer keys"], "float64")
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in arrays)
    eq, ek, ev = (ember.tensor(a, requires_grad=True) for a in arrays)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):  # twice differentiable
        t_out = sdpa(tq, tk, tv, is_causal=causal)
    t_grads = torch.autograd.grad((t_out**2).sum(), (tq, tk, tv), create_graph=True)
    e_grads = ember.autograd.grad(
        (_attend(eq, ek, ev, is_causal=causal) ** 2).sum(),
        (eq, ek, ev),
        create_graph=True,
    )
    assert counted["AttentionGrad"] == 0  # create_graph writes the gradient in ember ops
    t_second = torch.autograd.grad(sum((g * g).sum() for g in t_grads), (tq, tk, tv))
    e_second = ember.autograd.grad(sum((g * g).sum() for g in e_grads), (eq, ek, ev))
    for e, t in zip(e_second, t_second):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-9, atol=1e-9)


def test_16_bit_computes_in_float32_and_rounds_once():
    q, k, v = _data(SHAPES["4-D, longer keys"], "float32")
    ref = A.Attention(0.25, True).forward(np, q, k, v)
    bf = ember.bfloat16.np
    got = A.Attention(0.25, True).forward(np, q.astype(bf), k.astype(bf), v.astype(bf))
    wide = A.Attention(0.25, True).forward(
        np, *(a.astype(bf).astype(np.float32) for a in (q, k, v))
    )
    assert got.dtype == bf
    np.testing.assert_array_equal(got, wide.astype(bf))
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=3e-2, atol=3e-2)


def test_compiled_equals_eager(device):
    x_data, *w_data = _data([(2, 3, 6, 8), (8, 8), (8, 8), (8, 4)], "float32")
    ws = [ember.nn.Parameter(ember.tensor(w, device=device)) for w in w_data]
    x = ember.tensor(x_data, device=device)

    def step(x):
        out = _attend(x @ ws[0], x @ ws[1], x @ ws[2], is_causal=True)
        (out * out).sum().backward()
        return out

    results, compiled = [], ember.compile(step)
    for run in (step, compiled, compiled, compiled):  # warm-up, capture, replay
        for w in ws:
            w.grad = None
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # on cuda: captured as a CUDA graph, no fallback
            out = run(x)
        results.append([out.detach().cpu().numpy()] + [w.grad.cpu().numpy() for w in ws])
    for got in results[1:]:
        for e, c in zip(results[0], got):
            np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)


def test_which_calls_take_the_op(fake_cuda, counted):
    def run(device, dtype="bfloat16", mask=None, dropout=0.0, q_rows=None):
        q, k, v = (ember.tensor(a, device=device).to(getattr(ember, dtype))
                   for a in _data(SHAPES["3-D"], "float32"))  # fmt: skip
        q = q if q_rows is None else q[:q_rows]
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout)
        took, counted["Attention"] = counted["Attention"], 0
        return took

    assert run("cuda") == 1  # 16-bit on a GPU: cuDNN's fused attention
    assert run("cuda", "float16") == 1
    assert run("cuda", "float32") == 0  # cuDNN has none: the formula
    assert run("cpu") == 0  # the CPU: the formula (no recomputed probabilities)
    assert run("cuda", mask=ember.ones(5, 5, dtype=ember.bool, device="cuda")) == 0
    assert run("cuda", dropout=0.5) == 0
    assert run("cuda", q_rows=1) == 0  # broadcast leading dimensions


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_multihead_attention_without_weights(causal, dtype, device, counted):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    em = ember.nn.MultiheadAttention(16, 4, batch_first=True)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    em = em.to(device).to(getattr(ember, dtype))
    x = np.random.default_rng(2).standard_normal((2, 6, 16)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6) if causal else None
    t_out, _ = tm(*[torch.tensor(x)] * 3, need_weights=False, attn_mask=mask, is_causal=causal)
    ex = ember.tensor(x, device=device).to(getattr(ember, dtype))
    e_mask = ember.tensor(mask.numpy(), device=device) if causal else None
    e_out, w = em(ex, ex, ex, need_weights=False, attn_mask=e_mask, is_causal=causal)
    assert w is None
    tol = 1e-5 if dtype == "float32" else 5e-2
    np.testing.assert_allclose(e_out.detach().float().cpu().numpy(), t_out.detach().numpy(),
                               tol, tol)  # fmt: skip
    assert counted["Attention"] == (device == "cuda" and dtype == "bfloat16")


def test_mismatched_shapes_name_the_op():
    q, k = ember.ones(2, 3, 8), ember.ones(2, 4, 6)
    with pytest.raises(ember.ShapeError, match=r"Attention: query \(2, 3, 8\), key \(2, 4, 6\)"):
        ember.ops.base.apply(A.Attention(1.0, False), q, k, k)


def test_the_gradient_op_is_not_differentiated():
    with pytest.raises(ember.AutogradError, match="AttentionGrad: runs only without create_graph"):
        A.AttentionGrad(1.0, False).vjp(None, None)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_16_bit_matches_torch(causal, dtype, device):
    """On a GPU, cuDNN's flash attention (the CUDA overrides); elsewhere the ops' bodies."""
    from ember.backend import kernels
    from ember.backend.kernels import attention as katt

    arrays = _data(((2, 4, 64, 64), (2, 4, 80, 64), (2, 4, 80, 64)), "float32")
    edt = getattr(ember, dtype)
    eq, ek, ev = (ember.tensor(a, device=device).to(edt).requires_grad_() for a in arrays)
    tq, tk, tv = (torch.tensor(e.detach().float().cpu().numpy(), requires_grad=True)
                  for e in (eq, ek, ev))  # fmt: skip
    t_out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    katt.clear()
    e_out = F.scaled_dot_product_attention(eq, ek, ev, is_causal=causal)
    g = np.random.default_rng(1).standard_normal(t_out.shape).astype(np.float32)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g, device=device).to(edt))
    assert e_out.dtype is edt and eq.grad.dtype is edt
    tol = dict(rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(e_out.detach().float().cpu().numpy(), t_out.detach().numpy(), **tol)
    for e, t in zip((eq, ek, ev), (tq, tk, tv)):
        np.testing.assert_allclose(e.grad.float().cpu().numpy(), t.grad.numpy(), **tol)
    if device == "cuda" and kernels.fused(ember.backend.xp_of(eq._data)):  # a real GPU
        assert {key[0] for key in katt._graphs} == {"forward", "forward+stats", "backward"}
