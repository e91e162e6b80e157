"""Transformer layers against torch.nn with the same weights (loaded from torch's state dict):
outputs and the gradients of the inputs and of every parameter, in eval mode (dropout off)."""

import warnings

import numpy as np
import pytest
import torch

import ember

D, H, FF, S, T, N = 8, 2, 12, 5, 4, 3
TOL = dict(rtol=1e-9, atol=1e-9)

ACTIVATIONS = {
    "relu": ("relu", "relu"),
    "gelu": ("gelu", "gelu"),
    "callable": (torch.nn.functional.silu, ember.nn.functional.silu),
    "module": (torch.nn.GELU(), ember.nn.GELU()),
}


def _pair(kind, device, activation="relu", **kw):
    """The torch module and the ember one with torch's (float64) state dict loaded."""
    t_act, e_act = ACTIVATIONS[activation]
    if kind == "Transformer":
        args = dict(d_model=D, nhead=H, num_encoder_layers=2, num_decoder_layers=2)
        tm = torch.nn.Transformer(**args, dim_feedforward=FF, activation=t_act, **kw)
        em = ember.nn.Transformer(**args, dim_feedforward=FF, activation=e_act, **kw)
    elif kind in ("TransformerEncoder", "TransformerDecoder"):
        layer = kind + "Layer"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's nested-tensor notice
            tm = getattr(torch.nn, kind)(
                getattr(torch.nn, layer)(D, H, FF, activation=t_act, **kw),
                2,
                norm=torch.nn.LayerNorm(D),
            )
        em = getattr(ember.nn, kind)(
            getattr(ember.nn, layer)(D, H, FF, activation=e_act, **kw),
            2,
            norm=ember.nn.LayerNorm(D),
        )
    else:
        tm = getattr(torch.nn, kind)(D, H, FF, activation=t_act, **kw)
        em = getattr(ember.nn, kind)(D, H, FF, activation=e_act, **kw)
    tm = tm.double().eval()
    rng = np.random.default_rng(3)
    with torch.no_grad():
        for p in tm.parameters():  # move away from the default init (zero biases, unit norms)
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.4))
    assert list(em.state_dict()) == list(tm.state_dict())
    em = em.double()
    em.load_state_dict(tm.state_dict())
    em = em.to(device).eval()
    return tm, em


def _inputs(rng, batch_first, batched, *lengths):
    out = []
    for length in lengths:
        shape = (N, length, D) if batch_first else (length, N, D)
        out.append(rng.standard_normal(shape if batched else (length, D)))
    return out


def _mismatch_warnings(records) -> list:
    return [str(w.message) for w in records if "mismatched" in str(w.message)]


def _run(tm, em, device, arrays, t_kw, e_kw):
    """Forward both with the given inputs; compare outputs and all gradients."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a, device=device, requires_grad=True) for a in arrays]
    with warnings.catch_warnings(record=True) as t_warned:
        warnings.simplefilter("always")
        t_out = tm(*ts, **t_kw)
    with warnings.catch_warnings(record=True) as e_warned:
        warnings.simplefilter("always")
        e_out = em(*es, **e_kw)
    assert _mismatch_warnings(e_warned) == _mismatch_warnings(t_warned)
    assert e_out.device.type == device
    np.testing.assert_allclose(e_out.detach().cpu().numpy(), t_out.detach().numpy(), **TOL)
    weights = np.random.default_rng(9).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(weights)).sum().backward()
    (e_out * ember.tensor(weights, device=device)).sum().backward()
    for i, (t, e) in enumerate(zip(ts, es)):
        np.testing.assert_allclose(
            e.grad.cpu().numpy(), t.grad.numpy(), err_msg=f"input {i}", **TOL
        )
    e_params = dict(em.named_parameters())
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(
            e_params[name].grad.cpu().numpy(), p.grad.numpy(), err_msg=name, **TOL
        )


def _both(value, device):
    """A NumPy mask as (torch tensor, ember tensor on ``device``); other values as they are."""
    if isinstance(value, np.ndarray):
        return torch.tensor(value), ember.tensor(value, device=device)
    return value, value


def _masks(rng, which, batch_first, batched, tgt_len, src_len):
    """(torch kwargs, ember kwargs) for the mask case ``which`` of a self-attention layer."""
    kw = {}
    if which in ("bool_pad", "both"):
        pad = np.zeros((N, src_len), dtype=bool)
        pad[0, -2:] = True
        pad[1, -1] = True
        kw["pad"] = pad if batched else pad[0]
    if which in ("float_mask", "both"):
        kw["mask"] = rng.standard_normal((tgt_len, src_len))
    if which == "bool_mask":
        kw["mask"] = np.triu(np.ones((tgt_len, src_len), dtype=bool), 1)
    if which == "mask3d":
        kw["mask"] = rng.standard_normal((N * H, tgt_len, src_len))
    if which == "causal":
        kw["mask"] = np.triu(np.full((tgt_len, src_len), -np.inf), 1)
        kw["is_causal"] = True
    return kw


ENC_CASES = [
    dict(batch_first=False, norm_first=False, masks="none"),
    dict(batch_first=True, norm_first=False, masks="bool_pad"),
    dict(batch_first=False, norm_first=True, masks="float_mask"),
    dict(batch_first=True, norm_first=True, masks="both", activation="gelu"),
    dict(batch_first=False, norm_first=False, masks="bool_mask", activation="callable"),
    dict(batch_first=True, norm_first=False, masks="mask3d", activation="module"),
    dict(batch_first=False, norm_first=True, masks="causal"),
    dict(batch_first=True, norm_first=False, masks="none", bias=False),
    dict(batch_first=False, norm_first=False, masks="float_mask", batched=False),
    dict(batch_first=True, norm_first=True, masks="bool_pad", batched=False, layer_norm_eps=1e-3),
]


@pytest.mark.parametrize("case", ENC_CASES, ids=lambda c: "-".join(f"{v}" for v in c.values()))
@pytest.mark.parametrize("kind", ["TransformerEncoderLayer", "TransformerEncoder"])
def test_encoder_matches_torch(device, kind, case):
    case = dict(case)
    masks, batched = case.pop("masks"), case.pop("batched", True)
    activation = case.pop("activation", "relu")
    tm, em = _pair(kind, device, activation, **case)
    rng = np.random.default_rng(0)
    (src,) = _inputs(rng, case["batch_first"], batched, S)
    kw = _masks(rng, masks, case["batch_first"], batched, S, S)
    if masks == "mask3d" and not batched:
        pytest.skip("3-D masks need a batch")
    names = (
        ("src_mask", "src_key_padding_mask", "is_causal")
        if kind.endswith("Layer")
        else ("mask", "src_key_padding_mask", "is_causal")
    )
    t_kw, e_kw = {}, {}
    for key, name in zip(("mask", "pad", "is_causal"), names):
        if key in kw:
            value = kw[key]
            t_kw[name] = torch.tensor(value) if isinstance(value, np.ndarray) else value
            e_kw[name] = (
                ember.tensor(value, device=device) if isinstance(value, np.ndarray) else value
            )
    _run(tm, em, device, [src], t_kw, e_kw)


DEC_CASES = [
    dict(batch_first=False, norm_first=False, masks="none"),
    dict(batch_first=True, norm_first=False, masks="causal_pads"),
    dict(batch_first=False, norm_first=True, masks="memory_mask", activation="gelu"),
    dict(batch_first=True, norm_first=True, masks="all", bias=False),
    dict(batch_first=False, norm_first=False, masks="causal_hint"),
    dict(batch_first=False, norm_first=True, masks="memory_mask", batched=False),
]


def _dec_masks(rng, which, batched, device):
    t_kw, e_kw = {}, {}

    def put(name, value):
        t_kw[name], e_kw[name] = _both(value, device)

    if which in ("causal_pads", "all", "causal_hint"):
        put("tgt_mask", np.triu(np.full((T, T), -np.inf), 1))
    if which == "causal_hint":
        put("tgt_is_causal", True)
    if which in ("causal_pads", "all"):
        tgt_pad = np.zeros((N, T), dtype=bool)
        tgt_pad[2, -1] = True
        mem_pad = np.zeros((N, S), dtype=bool)
        mem_pad[0, -3:] = True
        put("tgt_key_padding_mask", tgt_pad.astype(float) * -1e9 if which == "all" else tgt_pad)
        put("memory_key_padding_mask", mem_pad if batched else mem_pad[0])
    if which in ("memory_mask", "all"):
        put("memory_mask", rng.standard_normal((T, S)))
    return t_kw, e_kw


@pytest.mark.parametrize("case", DEC_CASES, ids=lambda c: "-".join(f"{v}" for v in c.values()))
@pytest.mark.parametrize("kind", ["TransformerDecoderLayer", "TransformerDecoder"])
def test_decoder_matches_torch(device, kind, case):
    case = dict(case)
    masks, batched = case.pop("masks"), case.pop("batched", True)
    activation = case.pop("activation", "relu")
    tm, em = _pair(kind, device, activation, **case)
    rng = np.random.default_rng(1)
    tgt, memory = _inputs(rng, case["batch_first"], batched, T, S)
    t_kw, e_kw = _dec_masks(rng, masks, batched, device)
    _run(tm, em, device, [tgt, memory], t_kw, e_kw)


@pytest.mark.parametrize(
    "case",
    [
        dict(batch_first=False, norm_first=False),
        dict(batch_first=True, norm_first=True, activation="gelu"),
        dict(batch_first=True, norm_first=False, bias=False, masks=True),
    ],
)
def test_transformer_matches_torch(device, case):
    case = dict(case)
    masks = case.pop("masks", False)
    activation = case.pop("activation", "relu")
    tm, em = _pair("Transformer", device, activation, **case)
    rng = np.random.default_rng(2)
    src, tgt = _inputs(rng, case["batch_first"], True, S, T)
    t_kw, e_kw = {}, {}
    if masks:
        src_pad = np.zeros((N, S), dtype=bool)
        src_pad[1, -2:] = True
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
        t_kw = dict(
            tgt_mask=causal,
            src_key_padding_mask=torch.tensor(src_pad),
            memory_key_padding_mask=torch.tensor(src_pad),
        )
        e_kw = dict(
            tgt_mask=em.generate_square_subsequent_mask(T, device=device, dtype=ember.float64),
            src_key_padding_mask=ember.tensor(src_pad, device=device),
            memory_key_padding_mask=ember.tensor(src_pad, device=device),
        )
    _run(tm, em, device, [src, tgt], t_kw, e_kw)


def test_generate_square_subsequent_mask(device):
    for sz, dtype in [(1, None), (4, "float64"), (5, "bool"), (3, "float32")]:
        t = torch.nn.Transformer.generate_square_subsequent_mask(
            sz, dtype=getattr(torch, dtype) if dtype else None
        )
        e = ember.nn.Transformer.generate_square_subsequent_mask(
            sz, device=device, dtype=getattr(ember, dtype) if dtype else None
        )
        assert e.device.type == device
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(e.cpu().numpy(), t.numpy())


def test_causal_mask_detected_as_torch_does(device):
    # the encoder treats a mask equal to the causal one as is_causal=True, which MHA then
    # rebuilds itself; with a non-causal mask it must be used as given
    tm, em = _pair("TransformerEncoder", device)
    rng = np.random.default_rng(4)
    (src,) = _inputs(rng, False, True, S)
    for mask in (np.triu(np.full((S, S), -np.inf), 1), np.tril(np.full((S, S), -np.inf), -1)):
        _run(
            tm,
            em,
            device,
            [src],
            {"mask": torch.tensor(mask)},
            {"mask": ember.tensor(mask, device=device)},
        )


def test_load_state_dict_from_default_torch_transformer():
    tm = torch.nn.Transformer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0)
    em = ember.nn.Transformer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0)
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in tm.state_dict().items()
    ]
    em.load_state_dict(tm.state_dict())
    src, tgt = torch.randn(7, 2, 16), torch.randn(3, 2, 16)
    with torch.no_grad():
        want = tm(src, tgt).numpy()
    got = em(ember.tensor(src.numpy()), ember.tensor(tgt.numpy())).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_default_init_is_xavier_and_layers_are_independent():
    model = ember.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, dim_feedforward=64)
    w = model.encoder.layers[0].linear1.weight
    bound = (6 / (16 + 64)) ** 0.5
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.8 * bound
    a, b = model.encoder.layers
    assert a.linear1.weight is not b.linear1.weight
    assert not np.array_equal(a.linear1.weight.detach().numpy(), b.linear1.weight.detach().numpy())
    assert len(list(model.parameters())) == len(
        list(
            torch.nn.Transformer(
                d_model=16, nhead=4, num_encoder_layers=2, dim_feedforward=64
            ).parameters()
        )
    )


def test_train_mode_applies_dropout(device):
    layer = ember.nn.TransformerEncoderLayer(D, H, FF, dropout=0.5).to(device)
    x = ember.randn(S, N, D, device=device, requires_grad=True)
    a, b = layer(x), layer(x)
    assert not np.allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy())
    a.sum().backward()
    assert x.grad is not None and layer.linear1.weight.grad is not None
    layer.eval()
    c, d = layer(x), layer(x)
    np.testing.assert_array_equal(c.detach().cpu().numpy(), d.detach().cpu().numpy())
    # dropout p=0 in training mode equals eval mode
    plain = ember.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0).to(device)
    y = plain(x)
    np.testing.assert_allclose(
        y.detach().cpu().numpy(), plain.eval()(x).detach().cpu().numpy(), rtol=1e-6
    )


def test_enable_nested_tensor_is_accepted(device):
    layer = ember.nn.TransformerEncoderLayer(D, H, FF, batch_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = ember.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False, mask_check=False)
        enc2 = ember.nn.TransformerEncoder(layer, 1, enable_nested_tensor=True)
    assert enc.enable_nested_tensor is False and enc2.enable_nested_tensor is True


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        ember.nn.TransformerEncoderLayer(D, H, FF, activation="tanh")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not swish"):
        ember.nn.TransformerDecoderLayer(D, H, FF, activation="swish")
    layer = ember.nn.TransformerEncoderLayer(D, H, FF)
    with pytest.raises(
        ValueError, match=r"TransformerEncoderLayer: expected src .*got \(5, 3, 6\)"
    ):
        layer(ember.randn(5, 3, 6))
    dec = ember.nn.TransformerDecoderLayer(D, H, FF)
    with pytest.raises(ValueError, match=r"TransformerDecoderLayer: expected memory .*\(4, 2, 7\)"):
        dec(ember.randn(3, 2, D), ember.randn(4, 2, 7))
    model = ember.nn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match=r"batch number of src and tgt must be equal"):
        model(ember.randn(5, 2, D), ember.randn(4, 3, D))
    with pytest.raises(ValueError, match=r"Transformer: expected tgt .*\(4, 2, 5\)"):
        model(ember.randn(5, 2, D), ember.randn(4, 2, 5))
    with pytest.raises(TypeError, match="TransformerEncoder: only bool and floating types of mask"):
        ember.nn.TransformerEncoder(layer, 1)(ember.randn(5, 3, D), mask=ember.zeros(5, 5).long())
    with pytest.raises(TypeError, match="EncoderLayer: only bool and floating types of src_key"):
        layer(ember.randn(5, 3, D), src_key_padding_mask=ember.zeros(3, 5).long())
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(ember.randn(5, 3, D), is_causal=True)
    with pytest.raises(
        RuntimeError, match=r"self_attn \(MultiheadAttention\): The shape of the 2D attn_mask"
    ):
        ember.nn.TransformerEncoder(layer, 2)(ember.randn(5, 3, D), mask=ember.zeros(4, 4))


def test_repr_and_attributes():
    layer = ember.nn.TransformerEncoderLayer(D, H, FF, activation="gelu", norm_first=True)
    assert layer.activation_relu_or_gelu == 2 and layer.norm_first
    text = repr(layer)
    assert "(self_attn): MultiheadAttention" in text and "(linear1): Linear" in text
    model = ember.nn.Transformer(D, H, 1, 1, FF, batch_first=True)
    assert model.d_model == D and model.nhead == H and model.batch_first


def test_fully_masked_sequence_is_not_nan():
    tm, em = _pair("TransformerEncoderLayer", "cpu")
    rng = np.random.default_rng(5)
    (src,) = _inputs(rng, False, True, S)
    pad = np.zeros((N, S), dtype=bool)
    pad[0] = True
    t_kw, e_kw = {"src_key_padding_mask": torch.tensor(pad)}, {}
    e_kw["src_key_padding_mask"] = ember.tensor(pad)
    _run(tm, em, "cpu", [src], t_kw, e_kw)
