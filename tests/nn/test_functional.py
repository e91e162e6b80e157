"""ember.nn.functional against torch.nn.functional (values and gradients, float64 tight), second
order gradient checks (float64, random direction), and the errors bad arguments give."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

TIGHT = dict(rtol=1e-10, atol=1e-10)


def _lib(F):
    return torch if F is TF else ember


def _case(name, fn, *shapes, ints=(), bools=(), tol=None):
    """``fn(F, *inputs)`` with F = torch.nn.functional or ember.nn.functional."""
    return pytest.param(fn, shapes, ints, bools, tol, id=name)


CASES = [
    # padding
    *[
        _case(f"pad-{m}-2d", lambda F, x, m=m: F.pad(x, (1, 2, 2, 1), mode=m), (2, 3, 6, 7))
        for m in ("constant", "reflect", "replicate", "circular")
    ],
    *[
        _case(f"pad-{m}-1d", lambda F, x, m=m: F.pad(x, (2, 3), mode=m), (2, 3, 7))
        for m in ("constant", "reflect", "replicate", "circular")
    ],
    *[
        _case(
            f"pad-{m}-3d", lambda F, x, m=m: F.pad(x, (1, 1, 0, 2, 1, 0), mode=m), (1, 2, 3, 4, 5)
        )
        for m in ("reflect", "replicate", "circular")
    ],
    _case("pad-negative", lambda F, x: F.pad(x, (-1, 2, 0, -2)), (2, 3, 6, 7)),
    _case("pad-value", lambda F, x: F.pad(x, (1, 1), value=3.5), (2, 3)),
    # convolution
    _case(
        "conv2d-all",
        lambda F, x, w, b: F.conv2d(
            x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=3
        ),
        (2, 3, 6, 7),
        (6, 1, 3, 2),
        (6,),
    ),
    _case(
        "conv2d-same",
        lambda F, x, w: F.conv2d(x, w, padding="same", dilation=(1, 2)),
        (2, 3, 6, 7),
        (4, 3, 2, 3),
    ),
    _case("conv2d-unbatched", lambda F, x, w: F.conv2d(x, w, stride=2), (3, 6, 7), (4, 3, 2, 2)),
    _case("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, 2, 1, 1, 1), (2, 3, 9), (4, 3, 3), (4,)),
    _case(
        "conv1d-same-unbatched", lambda F, x, w: F.conv1d(x, w, padding="same"), (3, 7), (4, 3, 2)
    ),
    _case(
        "conv_transpose2d",
        lambda F, x, w, b: F.conv_transpose2d(
            x, w, b, stride=(2, 3), padding=(1, 0), output_padding=(1, 2)
        ),
        (2, 3, 4, 5),
        (3, 2, 3, 4),
        (2,),
    ),
    _case(
        "conv_transpose2d-groups-dilation",
        lambda F, x, w, b: F.conv_transpose2d(
            x, w, b, stride=2, padding=1, output_padding=1, groups=3, dilation=2
        ),
        (2, 3, 4, 4),
        (3, 2, 3, 3),
        (6,),
    ),
    _case(
        "conv_transpose2d-stride1",
        lambda F, x, w: F.conv_transpose2d(x, w, padding=1),
        (2, 3, 5, 5),
        (3, 4, 3, 3),
    ),
    _case(
        "conv_transpose1d",
        lambda F, x, w: F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1, dilation=1),
        (2, 3, 6),
        (3, 4, 3),
    ),
    _case(
        "unfold",
        lambda F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        (2, 3, 6, 7),
    ),
    _case("unfold-unbatched", lambda F, x: F.unfold(x, 2), (3, 4, 4)),
    _case(
        "fold",
        lambda F, x: F.fold(x, (6, 7), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        (2, 18, 20),
    ),
    _case("fold-overlap", lambda F, x: F.fold(x, 4, 2), (1, 8, 9)),
    # pooling
    _case("max_pool2d", lambda F, x: F.max_pool2d(x, 2), (2, 3, 8, 8)),
    _case(
        "max_pool2d-general",
        lambda F, x: F.max_pool2d(x, (3, 2), (2, 1), 1, (1, 2), True),
        (2, 3, 9, 8),
    ),
    _case(
        "max_pool2d-indices",
        lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[1],
        (2, 3, 7, 7),
    ),
    _case(
        "max_pool2d-tiled-indices",
        lambda F, x: F.max_pool2d(x, 2, return_indices=True)[1],
        (2, 3, 7, 6),
    ),
    _case("max_pool1d", lambda F, x: F.max_pool1d(x, 3, 2, 1), (2, 3, 10)),
    _case(
        "avg_pool2d", lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (2, 3, 8, 8)
    ),
    _case("avg_pool2d-ceil", lambda F, x: F.avg_pool2d(x, 2, 2, 1, ceil_mode=True), (2, 3, 7, 7)),
    _case("avg_pool2d-unbatched", lambda F, x: F.avg_pool2d(x, 2), (3, 4, 4)),
    _case("avg_pool1d", lambda F, x: F.avg_pool1d(x, 2), (2, 3, 7)),
    _case("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, 5)), (2, 3, 7, 8)),
    _case("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 4), (2, 3, 9)),
    _case("lp_pool2d", lambda F, x: F.lp_pool2d(x.abs() + 0.1, 2, 2), (2, 3, 4, 4)),
    # normalization
    _case(
        "layer_norm", lambda F, x, w, b: F.layer_norm(x, (6, 7), w, b), (2, 3, 6, 7), (6, 7), (6, 7)
    ),
    _case("layer_norm-eps", lambda F, x: F.layer_norm(x, [7], eps=0.1), (2, 3, 7)),
    _case("group_norm", lambda F, x, w, b: F.group_norm(x, 3, w, b), (2, 6, 4, 3), (6,), (6,)),
    _case(
        "instance_norm",
        lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b),
        (2, 3, 6, 7),
        (3,),
        (3,),
    ),
    _case(
        "batch_norm-train",
        lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True),
        (4, 3, 2, 5),
        (3,),
        (3,),
    ),
    _case(
        "batch_norm-eval",
        lambda F, x, m, v: F.batch_norm(x, m.detach(), v.detach().abs() + 0.5, eps=1e-3),
        (4, 3, 5),
        (3,),
        (3,),
    ),
    _case("normalize", lambda F, x: F.normalize(x), (2, 3, 6, 7)),
    _case("normalize-p1", lambda F, x: F.normalize(x, p=1, dim=-1), (2, 3, 6, 7)),
    # linear, attention, distances
    _case("linear", lambda F, x, w, b: F.linear(x, w, b), (2, 3, 7), (4, 7), (4,)),
    _case("linear-1d", lambda F, x, w: F.linear(x, w), (7,), (4, 7)),
    _case(
        "bilinear", lambda F, a, b, w, c: F.bilinear(a, b, w, c), (3, 4), (3, 5), (2, 4, 5), (2,)
    ),
    _case(
        "sdpa",
        lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v),
        (2, 3, 5, 4),
        (2, 3, 6, 4),
        (2, 3, 6, 2),
    ),
    _case(
        "sdpa-causal",
        lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        (2, 5, 4),
        (2, 5, 4),
        (2, 5, 3),
    ),
    _case(
        "sdpa-scale",
        lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
        (2, 5, 4),
        (2, 6, 4),
        (2, 6, 3),
    ),
    _case(
        "sdpa-bool-mask",
        lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        (2, 3, 5, 4),
        (2, 3, 6, 4),
        (2, 3, 6, 2),
        (5, 6),
        bools=(3,),
    ),
    _case(
        "sdpa-float-mask",
        lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        (2, 3, 5, 4),
        (2, 3, 6, 4),
        (2, 3, 6, 2),
        (3, 5, 6),
    ),
    _case("cosine_similarity", lambda F, a, b: F.cosine_similarity(a, b), (2, 3, 6), (2, 3, 6)),
    _case(
        "cosine_similarity-bcast",
        lambda F, a, b: F.cosine_similarity(a, b, dim=-1),
        (2, 3, 7),
        (1, 7),
    ),
    _case("pairwise_distance", lambda F, a, b: F.pairwise_distance(a, b), (4, 5), (4, 5)),
    _case("embedding", lambda F, i, w: F.embedding(i, w, padding_idx=2), (3, 4), (5, 3), ints=(0,)),
    _case("one_hot", lambda F, i: F.one_hot(i, 6), (3, 4), ints=(0,)),
    _case("one_hot-auto", lambda F, i: F.one_hot(i), (3, 4), ints=(0,)),
    # activations
    *[
        _case(name, fn, (3, 8))
        for name, fn in [
            ("relu", lambda F, x: F.relu(x)),
            ("relu6", lambda F, x: F.relu6(x * 4)),
            ("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 0.7)),
            ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2)),
            ("elu", lambda F, x: F.elu(x, 0.5)),
            ("selu", lambda F, x: F.selu(x)),
            ("celu", lambda F, x: F.celu(x, 0.5)),
            ("gelu", lambda F, x: F.gelu(x)),
            ("gelu-tanh", lambda F, x: F.gelu(x, approximate="tanh")),
            ("silu", lambda F, x: F.silu(x)),
            ("mish", lambda F, x: F.mish(x)),
            ("sigmoid", lambda F, x: F.sigmoid(x)),
            ("tanh", lambda F, x: F.tanh(x)),
            ("logsigmoid-wide", lambda F, x: F.logsigmoid(x * 20)),
            ("softplus", lambda F, x: F.softplus(x * 3, 2, 3)),
            ("softsign", lambda F, x: F.softsign(x)),
            ("tanhshrink", lambda F, x: F.tanhshrink(x)),
            ("hardshrink", lambda F, x: F.hardshrink(x, 0.3)),
            ("softshrink", lambda F, x: F.softshrink(x, 0.3)),
            ("threshold", lambda F, x: F.threshold(x, 0.2, -1.0)),
            ("rrelu-eval", lambda F, x: F.rrelu(x, 0.1, 0.3)),
            ("softmax", lambda F, x: F.softmax(x, dim=1)),
            ("softmax-0", lambda F, x: F.softmax(x, 0)),
            ("log_softmax", lambda F, x: F.log_softmax(x, dim=-1)),
            ("softmin", lambda F, x: F.softmin(x, 1)),
            ("glu", lambda F, x: F.glu(x, 1)),
            ("dropout-eval", lambda F, x: F.dropout(x, 0.4, training=False)),
        ]
    ],
    _case("hardsigmoid", lambda F, x: F.hardsigmoid(x * 3), (3, 8), tol=dict(rtol=0, atol=1e-7)),
    _case("hardswish", lambda F, x: F.hardswish(x * 3), (3, 8), tol=dict(rtol=0, atol=1e-7)),
    _case("prelu", lambda F, x, w: F.prelu(x, w), (2, 3, 4), (3,)),
    _case("prelu-shared", lambda F, x, w: F.prelu(x, w), (2, 3, 4), (1,)),
    _case(
        "softmax-dtype",
        lambda F, x: F.softmax(x, -1, dtype=_lib(F).float32),
        (2, 5),
        tol=dict(rtol=1e-6, atol=1e-7),
    ),
    _case("log_softmax-3d", lambda F, x: F.log_softmax(x, 1), (2, 3, 4)),
]


def _arrays(shapes, ints, bools, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i, s in enumerate(shapes):
        if i in ints:
            out.append(rng.integers(0, 5, s))
        elif i in bools:
            a = rng.random(s) > 0.3
            a[..., 0] = True  # no fully masked row (NaN in both libraries)
            out.append(a)
        else:
            out.append(rng.standard_normal(s))
    return out


@pytest.mark.parametrize("fn, shapes, ints, bools, tol", CASES)
def test_functional_matches_torch(fn, shapes, ints, bools, tol):
    tol = tol or TIGHT
    arrays = _arrays(shapes, ints, bools)
    tx = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ex = [ember.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    tout, eout = fn(TF, *tx), fn(EF, *ex)
    assert tuple(eout.shape) == tuple(tout.shape)
    assert str(eout.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1]
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), **tol)
    if tout.requires_grad:
        g = np.random.default_rng(1).standard_normal(tuple(tout.shape))
        tout.backward(torch.tensor(g, dtype=tout.dtype))
        eout.backward(ember.tensor(g).to(eout.dtype))
        for i, (e, t) in enumerate(zip(ex, tx)):
            if t.grad is not None:
                np.testing.assert_allclose(
                    e.grad.numpy(), t.grad.numpy(), err_msg=f"grad {i}", **tol
                )


@pytest.mark.parametrize(
    "fn, shapes, ints, bools, tol",
    [
        c
        for c in CASES
        if c.id
        in (
            "conv2d-all",
            "conv_transpose2d",
            "max_pool2d",
            "avg_pool2d",
            "layer_norm",
            "softmax",
            "linear",
            "gelu",
        )
    ],
)
def test_float32_matches_torch(fn, shapes, ints, bools, tol):
    arrays = [a.astype(np.float32) for a in _arrays(shapes, ints, bools)]
    tout = fn(TF, *[torch.tensor(a) for a in arrays])
    eout = fn(EF, *[ember.tensor(a) for a in arrays])
    assert eout.dtype is ember.float32
    np.testing.assert_allclose(eout.numpy(), tout.numpy(), rtol=1e-4, atol=1e-5)


# -- second order: gradients of gradients (float64, random direction) --------------------------
def _x(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(a, requires_grad=True)


SECOND_ORDER = [
    ("conv2d", lambda x, w: EF.conv2d(x, w, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3)]),
    (
        "conv2d-stride-groups",
        lambda x, w: EF.conv2d(x, w, stride=2, padding=(1, 0), dilation=2, groups=2),
        [(2, 4, 7, 6), (4, 2, 2, 3)],
    ),
    (
        "conv_transpose2d",
        lambda x, w: EF.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
        [(2, 3, 3, 3), (3, 2, 3, 3)],
    ),
    (
        "conv_transpose2d-stride1",
        lambda x, w: EF.conv_transpose2d(x, w, padding=1),
        [(2, 3, 4, 4), (3, 2, 3, 3)],
    ),
    ("max_pool2d", lambda x: EF.max_pool2d(x, 2), [(2, 3, 6, 6)]),
    ("max_pool2d-general", lambda x: EF.max_pool2d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 6, 6)]),
    ("avg_pool2d", lambda x: EF.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [(2, 3, 6, 6)]),
    ("avg_pool2d-tiled", lambda x: EF.avg_pool2d(x, 2), [(2, 3, 6, 6)]),
    ("unfold", lambda x: EF.unfold(x, 2, padding=1, stride=2), [(2, 3, 5, 5)]),
    ("fold", lambda x: EF.fold(x, (4, 5), 2, dilation=(1, 2)), [(2, 8, 9)]),
    ("softmax", lambda x: EF.softmax(x, dim=1), [(3, 5)]),
    ("log_softmax", lambda x: EF.log_softmax(x, dim=-1), [(3, 5)]),
    ("layer_norm", lambda x, w, b: EF.layer_norm(x, (5,), w, b), [(3, 5), (5,), (5,)]),
    (
        "batch_norm",
        lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True),
        [(4, 3, 2), (3,), (3,)],
    ),
    ("group_norm", lambda x: EF.group_norm(x, 2), [(2, 4, 3)]),
]


@pytest.mark.parametrize("fn, shapes", [pytest.param(f, s, id=n) for n, f, s in SECOND_ORDER])
def test_second_order(fn, shapes):
    inputs = [_x(*s, seed=i) for i, s in enumerate(shapes)]
    assert gradcheck(fn, inputs, fast_mode=True, atol=1e-6, rtol=1e-4)
    assert gradgradcheck(fn, inputs, fast_mode=True, atol=1e-6, rtol=1e-4)


def test_second_order_matches_torch_conv2d():
    """d/dw of sum(dL/dx * v): the double-backward path through Conv2dGradInput."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(2, 3, 5, 5), (4, 3, 3, 3), (2, 3, 5, 5)]]
    grads = []
    for lib, F in ((torch, TF), (ember, EF)):
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays[:2])
        v = lib.tensor(arrays[2])
        (gx,) = lib.autograd.grad(
            F.conv2d(x, w, stride=2, padding=1).pow(2).sum(), [x], create_graph=True
        )
        (gw,) = lib.autograd.grad((gx * v).sum(), [w])
        grads.append(gw.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], **TIGHT)


# -- running statistics of the functional forms ------------------------------------------------
def test_batch_norm_updates_running_statistics_in_place():
    x = np.random.default_rng(0).standard_normal((6, 3, 4))
    tm, tv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    em, ev = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    TF.batch_norm(torch.tensor(x), tm, tv, training=True, momentum=0.2)
    EF.batch_norm(ember.tensor(x), em, ev, training=True, momentum=0.2)
    np.testing.assert_allclose(em.numpy(), tm.numpy(), **TIGHT)
    np.testing.assert_allclose(ev.numpy(), tv.numpy(), **TIGHT)


def test_batch_norm_writes_the_running_buffers_own_arrays(device, monkeypatch):
    """Eagerly the running-average op writes each buffer's array (``out=``): no new array, no
    copy; its CUDA override too."""
    from ember.backend import overrides
    from ember.ops.norm import RunningAverage

    written = []
    cuda = overrides.registered("cuda")[overrides.qualname(RunningAverage)]
    for owner, name, real in (
        (RunningAverage, "forward", RunningAverage.forward),
        (None, "", cuda),
    ):

        def spy(*a, out=None, _real=real):
            written.append(out is not None and any(out is b._data for b in (em, ev)))
            return _real(*a, out=out)

        if owner is not None:
            monkeypatch.setattr(owner, name, spy)
        else:
            spy.writes_out = True
            monkeypatch.setitem(overrides.table("cuda"), RunningAverage, spy)
    x = np.random.default_rng(0).standard_normal((6, 3, 4)).astype(np.float32)
    em, ev = ember.zeros(3, device=device), ember.ones(3, device=device)
    arrays = em._data, ev._data
    EF.batch_norm(ember.tensor(x, device=device), em, ev, training=True)
    assert em._data is arrays[0] and ev._data is arrays[1] and written and all(written)
    tm, tv = torch.zeros(3), torch.ones(3)
    TF.batch_norm(torch.tensor(x), tm, tv, training=True)
    np.testing.assert_allclose(em.cpu().numpy(), tm.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ev.cpu().numpy(), tv.numpy(), rtol=1e-6, atol=1e-6)


def test_instance_norm_running_statistics():
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    tm, tv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    em, ev = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    TF.instance_norm(torch.tensor(x), tm, tv, momentum=0.3)
    EF.instance_norm(ember.tensor(x), em, ev, momentum=0.3)
    np.testing.assert_allclose(em.numpy(), tm.numpy(), **TIGHT)
    np.testing.assert_allclose(ev.numpy(), tv.numpy(), **TIGHT)
    out_t = TF.instance_norm(torch.tensor(x), tm, tv, use_input_stats=False)
    out_e = EF.instance_norm(ember.tensor(x), em, ev, use_input_stats=False)
    np.testing.assert_allclose(out_e.numpy(), out_t.numpy(), **TIGHT)


# -- dropout and friends -----------------------------------------------------------------------
def test_functional_dropout_training_and_reproducible():
    x = ember.ones(100, 100)
    ember.manual_seed(3)
    a = EF.dropout(x, 0.2).numpy()
    ember.manual_seed(3)
    b = EF.dropout(x, 0.2).numpy()
    np.testing.assert_array_equal(a, b)
    assert abs((a == 0).mean() - 0.2) < 0.02
    assert EF.dropout(x, 0.2, training=False) is x


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(0)
    x = ember.randn(400, 400, dtype=ember.float64)
    out = EF.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.03


def test_rrelu_training_slopes_in_range():
    ember.manual_seed(0)
    x = -ember.ones(1000)
    out = EF.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert ((-out >= 0.1) & (-out <= 0.3)).all() and out.std() > 0.03


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: EF.pad(ember.ones(2, 3), (3, 0), mode="reflect"),
            ember.ShapeError,
            r"pad: reflect padding \(3, 0\) must be smaller than dimension 1 of size 3",
        ),
        (
            lambda: EF.pad(ember.ones(2, 3), (1, 0, 1), mode="constant"),
            ValueError,
            r"padding length must be divisible by 2",
        ),
        (
            lambda: EF.pad(ember.ones(3), (1, 1, 1, 1)),
            ember.ShapeError,
            r"padding length 4 is too large for a 1-D input",
        ),
        (lambda: EF.pad(ember.ones(2, 3), (1, 1), mode="wrap"), ValueError, r"unknown mode 'wrap'"),
        (
            lambda: EF.pad(ember.ones(2, 3), (-1, 1), mode="reflect"),
            ValueError,
            r"negative padding is only supported in constant mode",
        ),
        (
            lambda: EF.one_hot(ember.tensor([0, 3]), 3),
            ember.EmberError,
            r"one_hot: class values must be in \[0, 3\)",
        ),
        (lambda: EF.one_hot(ember.tensor([0.0])), ember.EmberError, r"expected an int64"),
        (
            lambda: EF.fold(ember.ones(1, 7, 9), 4, 2),
            ember.ShapeError,
            r"fold: expected size of input's dimension 1 to be divisible",
        ),
        (
            lambda: EF.fold(ember.ones(1, 8, 8), 4, 2),
            ember.ShapeError,
            r"calculated number of sliding blocks 9, but got input.size\(2\)=8",
        ),
        (lambda: EF.unfold(ember.ones(2, 3), 2), ember.ShapeError, r"unfold: expected a 4-D input"),
        (
            lambda: EF.conv2d(ember.ones(1, 4, 5, 5), ember.ones(6, 2, 3, 3), groups=3),
            ember.ShapeError,
            r"conv2d: expected input with 6 channels, got 4",
        ),
        (
            lambda: EF.conv2d(ember.ones(1, 4, 5, 5), ember.ones(6, 4, 3)),
            ember.ShapeError,
            r"conv2d: expected a 4-D input .* and a 4-D weight",
        ),
        (
            lambda: EF.conv2d(ember.ones(1, 1, 5, 5), ember.ones(2, 1, 3, 3), ember.ones(3)),
            ember.ShapeError,
            r"conv2d: expected a bias of shape \(2,\), got \(3,\)",
        ),
        (
            lambda: EF.conv2d(
                ember.ones(1, 1, 5, 5), ember.ones(2, 1, 3, 3), stride=2, padding="same"
            ),
            ValueError,
            r"not supported for strided",
        ),
        (
            lambda: EF.conv2d(ember.ones(1, 1, 5, 5), ember.ones(2, 1, 3, 3), padding="full"),
            ValueError,
            r"invalid padding string 'full'",
        ),
        (
            lambda: EF.conv2d(
                ember.ones(1, 1, 5, 5, dtype=ember.int64), ember.ones(2, 1, 3, 3, dtype=ember.int64)
            ),
            ember.DTypeError,
            r"conv2d: expected a floating-point input, got ember.int64",
        ),
        (
            lambda: EF.conv_transpose2d(ember.ones(1, 2, 3, 3), ember.ones(3, 2, 3, 3)),
            ember.ShapeError,
            r"conv_transpose2d: expected input with 3 channels, got 2",
        ),
        (
            lambda: EF.conv_transpose2d(
                ember.ones(1, 2, 3, 3), ember.ones(2, 2, 3, 3), output_padding=1
            ),
            ValueError,
            r"output padding must be smaller than either stride or dilation",
        ),
        (
            lambda: EF.max_pool2d(ember.ones(2, 3), 2),
            ember.ShapeError,
            r"max_pool2d: expected a 3-D or 4-D input, got shape \(2, 3\)",
        ),
        (
            lambda: EF.avg_pool2d(ember.ones(1, 1, 4, 4), 2, padding=2),
            ember.ShapeError,
            r"avg_pool2d: pad should be at most half of effective kernel size",
        ),
        (
            lambda: EF.adaptive_avg_pool2d(ember.ones(1, 1, 4, 4), 0),
            ember.ShapeError,
            r"output size must be positive",
        ),
        (
            lambda: EF.layer_norm(ember.ones(2, 3), (4,)),
            ember.ShapeError,
            r"layer_norm: expected input with shape \[\*, 4\], but got input of size \(2, 3\)",
        ),
        (
            lambda: EF.group_norm(ember.ones(2, 3, 4), 2),
            ember.ShapeError,
            r"number of channels in input \(3\) to be divisible by num_groups \(2\)",
        ),
        (
            lambda: EF.batch_norm(ember.ones(2, 3), None, None),
            ember.ShapeError,
            r"running_mean and running_var are needed in eval mode",
        ),
        (
            lambda: EF.batch_norm(ember.ones(2, 3), ember.zeros(4), ember.ones(4)),
            ember.ShapeError,
            r"batch_norm: running_mean should contain 3 elements not 4",
        ),
        (
            lambda: EF.instance_norm(ember.ones(2, 3, 1)),
            ember.ShapeError,
            r"expected more than 1 spatial element when training, got input size \(2, 3, 1\)",
        ),
        (
            lambda: EF.linear(ember.ones(2, 3), ember.ones(4, 5)),
            ember.ShapeError,
            r"linear: input shape \(2, 3\) and weight shape \(4, 5\) cannot be multiplied "
            r"\(3 != 5\)",
        ),
        (
            lambda: EF.gelu(ember.ones(2), approximate="fast"),
            ember.EmberError,
            r"approximate must be 'none' or 'tanh'",
        ),
        (lambda: EF.dropout(ember.ones(2), 1.5), ValueError, r"between 0 and 1, but got 1.5"),
        (
            lambda: EF.prelu(ember.ones(2, 3), ember.ones(2)),
            ember.EmberError,
            r"prelu: mismatch of parameter numbers and input channel size",
        ),
        (
            lambda: EF.embedding(ember.tensor([5]), ember.ones(5, 2)),
            IndexError,
            r"embedding: index 5 is out of range for an embedding of 5 rows",
        ),
        (
            lambda: EF.scaled_dot_product_attention(
                ember.ones(2, 3), ember.ones(2, 4), ember.ones(2, 4)
            ),
            ember.ShapeError,
            r"must have the same last dimension",
        ),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_functional_all_is_complete():
    import ember.nn.functional as F

    for name in F.__all__:
        assert callable(getattr(F, name)), name
    for name in (
        "conv_transpose1d",
        "prelu",
        "rrelu",
        "softsign",
        "tanhshrink",
        "hardshrink",
        "softshrink",
        "threshold",
    ):
        assert name in F.__all__
