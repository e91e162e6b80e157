"""MultiheadAttention against torch.nn.MultiheadAttention with the same weights: outputs,
attention weights and the gradients of query, key, value and every parameter."""

import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn.layers.attention import MultiheadAttention, multi_head_attention_forward

E, H, L, S, N = 8, 2, 3, 4, 2
TOL = {"float64": dict(rtol=1e-10, atol=1e-10), "float32": dict(rtol=1e-4, atol=1e-5)}


def _pair(dtype="float64", **kw):
    tm = torch.nn.MultiheadAttention(E, H, **kw).to(getattr(torch, dtype))
    em = MultiheadAttention(E, H, **kw, dtype=getattr(ember, dtype))
    assert [(k, tuple(v.shape)) for k, v in tm.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in em.state_dict().items()
    ]
    rng = np.random.default_rng(5)
    sd = {
        k: rng.standard_normal(tuple(v.shape)).astype(dtype) * 0.3
        for k, v in tm.state_dict().items()
    }
    tm.load_state_dict({k: torch.tensor(v) for k, v in sd.items()})
    em.load_state_dict({k: ember.tensor(v) for k, v in sd.items()})
    return tm, em


def _close(e, t, tol, what):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), err_msg=what, **tol)


def _check(kw=None, mode="self", fwd=None, dtype="float64", batched=True, mask_maker=None):
    """Run both modules on the same inputs and compare outputs, weights and all gradients.

    ``mode``: "self" (query is key is value), "kv" (key is value), "cross" (three tensors).
    ``fwd``: forward keyword arguments as NumPy arrays or plain values.
    """
    kw = kw or {}
    fwd = fwd or {}
    tol = TOL[dtype]
    rng = np.random.default_rng(0)
    tm, em = _pair(dtype, **kw)
    bf = kw.get("batch_first", False) and batched
    kdim, vdim = kw.get("kdim") or E, kw.get("vdim") or E

    def shape(length, feats):
        if not batched:
            return (length, feats)
        return (N, length, feats) if bf else (length, N, feats)

    src = L if mode == "self" else S
    arrays = [rng.standard_normal(shape(L, E)).astype(dtype)]
    if mode == "kv":
        arrays.append(rng.standard_normal(shape(S, kdim)).astype(dtype))
    elif mode == "cross":
        arrays.append(rng.standard_normal(shape(S, kdim)).astype(dtype))
        arrays.append(rng.standard_normal(shape(S, vdim)).astype(dtype))
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_args = (
        (ts * 3)[:3] if mode == "self" else ((ts[0], ts[1], ts[1]) if mode == "kv" else tuple(ts))
    )
    e_args = (
        (es * 3)[:3] if mode == "self" else ((es[0], es[1], es[1]) if mode == "kv" else tuple(es))
    )
    if mask_maker is not None:
        fwd = dict(fwd, **mask_maker(src, rng))
    t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in fwd.items()}
    e_kw = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in fwd.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out, t_w = tm(*t_args, **t_kw)
        e_out, e_w = em(*e_args, **e_kw)
    assert tuple(e_out.shape) == tuple(t_out.shape)
    assert e_out.dtype == getattr(ember, dtype)
    _close(e_out, t_out, tol, "attn_output")
    if t_w is None:
        assert e_w is None
    else:
        assert tuple(e_w.shape) == tuple(t_w.shape)
        _close(e_w, t_w, tol, "attn_weights")
    cot = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
    loss_t = (t_out * torch.tensor(cot)).sum()
    loss_e = (e_out * ember.tensor(cot)).sum()
    if t_w is not None:
        cot_w = rng.standard_normal(tuple(t_w.shape)).astype(dtype)
        loss_t = loss_t + (t_w * torch.tensor(cot_w)).sum()
        loss_e = loss_e + (e_w * ember.tensor(cot_w)).sum()
    loss_t.backward()
    loss_e.backward()
    for i, (e, t) in enumerate(zip(es, ts)):
        _close(e.grad, t.grad, tol, f"grad of input {i}")
    for (tn, tp), (en, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert tn == en
        _close(ep.grad, tp.grad, tol, f"grad of {tn}")
    return e_out, e_w


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("mode", ["self", "kv", "cross"])
def test_matches_torch(mode, batch_first, dtype):
    _check({"batch_first": batch_first}, mode=mode, dtype=dtype)


@pytest.mark.parametrize(
    "kw,mode",
    [
        ({"kdim": 5, "vdim": 6}, "cross"),
        ({"kdim": 5, "vdim": 6, "batch_first": True, "bias": False}, "cross"),
        ({"bias": False}, "self"),
        ({"add_bias_kv": True}, "kv"),
        ({"add_zero_attn": True}, "cross"),
        ({"add_bias_kv": True, "add_zero_attn": True, "kdim": 3, "vdim": 3}, "kv"),
    ],
)
def test_module_options(kw, mode):
    _check(kw, mode=mode)


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_need_weights_and_average(need_weights, average):
    _, w = _check(mode="cross", fwd={"need_weights": need_weights, "average_attn_weights": average})
    if need_weights:
        assert tuple(w.shape) == ((N, L, S) if average else (N, H, L, S))
        np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, atol=1e-12)


def _kpm(src, rng):
    mask = np.zeros((N, src), dtype=bool)
    mask[0, -1] = True
    mask[1, 0] = True
    return mask


MASKS = {
    "key_padding_bool": lambda src, rng: {"key_padding_mask": _kpm(src, rng)},
    "key_padding_float": lambda src, rng: {
        "key_padding_mask": np.where(_kpm(src, rng), -np.inf, 0.0)
    },
    "attn_bool_2d": lambda src, rng: {"attn_mask": np.triu(np.ones((L, src), bool), 1)},
    "attn_float_2d": lambda src, rng: {"attn_mask": rng.standard_normal((L, src))},
    "attn_bool_3d": lambda src, rng: {
        "attn_mask": np.triu(np.ones((N * H, L, src), bool), 1 + rng.integers(0, 1))
    },
    "attn_float_3d": lambda src, rng: {"attn_mask": rng.standard_normal((N * H, L, src))},
    "both_bool": lambda src, rng: {
        "key_padding_mask": _kpm(src, rng),
        "attn_mask": np.triu(np.ones((L, src), bool), 2),
    },
    "both_mixed": lambda src, rng: {
        "key_padding_mask": _kpm(src, rng),
        "attn_mask": rng.standard_normal((L, src)),
    },
}


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("mask", list(MASKS))
def test_masks(mask, batch_first):
    _check({"batch_first": batch_first}, mode="cross", mask_maker=MASKS[mask])


@pytest.mark.parametrize("need_weights", [True, False])
def test_masks_with_bias_kv_and_zero_attn(need_weights):
    _check(
        {"add_bias_kv": True, "add_zero_attn": True},
        mode="kv",
        mask_maker=MASKS["both_bool"],
        fwd={"need_weights": need_weights},
    )


@pytest.mark.parametrize("need_weights", [True, False])
def test_is_causal(need_weights):
    causal = np.triu(np.ones((L, L), bool), 1)
    _check(mode="self", fwd={"attn_mask": causal, "is_causal": True, "need_weights": need_weights})


@pytest.mark.parametrize("mode", ["self", "cross"])
def test_unbatched(mode):
    _check({"batch_first": True}, mode=mode)
    src = L if mode == "self" else S
    kpm = np.zeros(src, dtype=bool)
    kpm[-1] = True
    _check(
        mode=mode,
        batched=False,
        fwd={
            "key_padding_mask": kpm,
            "attn_mask": np.random.default_rng(2).standard_normal((H, L, src)),
            "average_attn_weights": False,
        },
    )


def test_parameters_and_init():
    for kw in [{}, {"kdim": 3, "vdim": 5}, {"bias": False}, {"add_bias_kv": True}]:
        tm = torch.nn.MultiheadAttention(E, H, **kw)
        em = MultiheadAttention(E, H, **kw)
        assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in em.named_parameters()
        ]
        assert list(tm.state_dict()) == list(em.state_dict())
        assert em.head_dim == E // H and em._qkv_same_embed_dim == (not kw.get("kdim"))
        if kw.get("bias", True):
            assert not em.in_proj_bias.detach().numpy().any()
            assert not em.out_proj.bias.detach().numpy().any()
        w = em.in_proj_weight if em._qkv_same_embed_dim else em.k_proj_weight
        fan_out, fan_in = w.shape
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        assert abs(w.detach().numpy()).max() <= bound
        assert w.detach().numpy().std() > bound / 4


def test_dropout_train_eval():
    em = MultiheadAttention(E, H, dropout=0.5)
    x = ember.randn(L, N, E)
    out1, w1 = em(x, x, x)
    out2, w2 = em(x, x, x)
    assert tuple(out1.shape) == (L, N, E) and tuple(w1.shape) == (N, L, L)
    assert not np.allclose(w1.detach().numpy(), w2.detach().numpy())
    em.eval()
    out3, w3 = em(x, x, x)
    out4, _ = em(x, x, x)
    np.testing.assert_array_equal(out3.detach().numpy(), out4.detach().numpy())
    np.testing.assert_allclose(w3.detach().numpy().sum(-1), 1.0, atol=1e-6)


def test_functional_form():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((L, N, E))
    w_in, b_in = rng.standard_normal((3 * E, E)), rng.standard_normal(3 * E)
    w_out, b_out = rng.standard_normal((E, E)), rng.standard_normal(E)
    t_out, t_w = torch.nn.functional.multi_head_attention_forward(
        *[torch.tensor(q)] * 3,
        E,
        H,
        torch.tensor(w_in),
        torch.tensor(b_in),
        None,
        None,
        False,
        0.0,
        torch.tensor(w_out),
        torch.tensor(b_out),
        training=False,
    )
    e_out, e_w = multi_head_attention_forward(
        *[ember.tensor(q)] * 3,
        E,
        H,
        ember.tensor(w_in),
        ember.tensor(b_in),
        None,
        None,
        False,
        0.0,
        ember.tensor(w_out),
        ember.tensor(b_out),
        training=False,
    )
    _close(e_out, t_out, TOL["float64"], "output")
    _close(e_w, t_w, TOL["float64"], "weights")


def test_errors():
    with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads"):
        MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        MultiheadAttention(0, 1)
    em = MultiheadAttention(E, H)
    with pytest.raises(
        RuntimeError,
        match=r"MultiheadAttention: query.size\(-1\) must be equal "
        r"to embed_dim. Expected 8, got 6",
    ):
        em(ember.randn(L, N, 6), ember.randn(L, N, 6), ember.randn(L, N, 6))
    x = ember.randn(L, N, E)
    with pytest.raises(
        RuntimeError,
        match=r"The shape of the 2D attn_mask is \(2, 3\), but "
        r"should be \(3, 3\)",
    ):
        em(x, x, x, attn_mask=ember.zeros(2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"The shape of the 3D attn_mask is \(2, 3, 3\), but "
        r"should be \(4, 3, 3\)",
    ):
        em(x, x, x, attn_mask=ember.zeros(2, 3, 3))
    with pytest.raises(RuntimeError, match=r"expecting key_padding_mask shape of \(2, 3\)"):
        em(x, x, x, key_padding_mask=ember.zeros(2, 4, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        em(x, x, x, is_causal=True)
    with pytest.raises(
        RuntimeError, match="For batched .3-D. `query`, expected `key` and `value` to be 3-D"
    ):
        em(x, ember.randn(L, E), ember.randn(L, E))
    with pytest.raises(RuntimeError, match="key shape .* does not match value shape"):
        em(x, x, ember.randn(S, N, E))
    with pytest.raises(RuntimeError, match="key batch size 3 does not match query batch size 2"):
        em(x, ember.randn(S, 3, E), ember.randn(S, 3, E))
    with pytest.raises(TypeError, match="only bool and floating types of attn_mask"):
        em(x, x, x, attn_mask=ember.zeros(L, L, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="key has 5 features"):
        em(x, ember.randn(S, N, 5), ember.randn(S, N, 5))


def test_fully_masked_queries_attend_to_nothing_as_in_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    keep = np.array([[True, False], [False, False], [True, True]])[None].repeat(2, 0)
    keep = np.concatenate([keep, keep[:, :, :1]], 2)  # (2, 3, 3): query 1 keeps no key
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a, requires_grad=True) for a in (q, k, v)), attn_mask=torch.tensor(keep)
    )
    ins = [ember.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
    got = ember.nn.functional.scaled_dot_product_attention(
        *ins, attn_mask=ember.tensor(keep, device=device)
    )
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), atol=1e-6)
    got.sum().backward()
    assert all(bool(t.grad.isfinite().all()) for t in ins)
