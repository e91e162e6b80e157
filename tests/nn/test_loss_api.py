"""Losses beyond the value table: legacy size_average/reduce, loss modules, result dtypes of
mixed inputs, error messages, warnings, and second derivatives (gradgradcheck and PyTorch)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F
from ember import nn


def _pair(*arrays, grad=False):
    e = [ember.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    t = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    return e, t


def _close(e, t, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True
    )


RNG = np.random.default_rng(0)
X34 = RNG.standard_normal((3, 4))
Y34 = RNG.standard_normal((3, 4))
P34 = RNG.uniform(0.05, 0.95, (3, 4))
T3 = np.array([0, 3, 1])


# -- legacy size_average / reduce -------------------------------------------------------------
LEGACY = [
    ("mse_loss", (X34, Y34), {}),
    ("l1_loss", (X34, Y34), {}),
    ("smooth_l1_loss", (X34, Y34), {"beta": 0.5}),
    ("nll_loss", (X34, T3), {}),
    ("cross_entropy", (X34, T3), {"label_smoothing": 0.1}),
    ("binary_cross_entropy", (P34, P34[::-1].copy()), {}),
    ("binary_cross_entropy_with_logits", (X34, P34), {}),
    ("kl_div", (X34, P34), {}),
]


@pytest.mark.parametrize(
    "size_average,reduce", [(False, None), (None, False), (True, None), (False, True), (True, True)]
)
@pytest.mark.parametrize("name,arrays,kw", LEGACY, ids=[x[0] for x in LEGACY])
def test_legacy_size_average_and_reduce(name, arrays, kw, size_average, reduce):
    (e, t) = _pair(*arrays)
    with warnings.catch_warnings(record=True) as ew:
        warnings.simplefilter("always")
        out_e = getattr(F, name)(*e, size_average=size_average, reduce=reduce, **kw)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        out_t = getattr(TF, name)(*t, size_average=size_average, reduce=reduce, **kw)
    _close(out_e, out_t)
    assert [str(w.message) for w in ew] == [str(w.message) for w in tw]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_legacy_flags_override_reduction(reduction):
    (e, t) = _pair(X34, Y34)
    with pytest.warns(UserWarning, match="reduction='sum' instead"):
        out = F.mse_loss(*e, size_average=False, reduction=reduction)
    _close(out, TF.mse_loss(*t, reduction="sum"))


def test_elementwise_mean_is_deprecated_mean():
    (e, t) = _pair(X34, Y34)
    with pytest.warns(UserWarning, match="elementwise_mean"):
        out = F.mse_loss(*e, reduction="elementwise_mean")
    _close(out, TF.mse_loss(*t))


# -- modules ----------------------------------------------------------------------------------
W4 = RNG.uniform(0.5, 2, 4)
MODULES = [
    ("MSELoss", {}, (X34, Y34)),
    ("L1Loss", {"reduction": "sum"}, (X34, Y34)),
    ("SmoothL1Loss", {"beta": 0.3, "reduction": "none"}, (X34, Y34)),
    ("HuberLoss", {"delta": 0.4}, (X34, Y34)),
    ("NLLLoss", {"weight": W4, "ignore_index": 1}, (X34, T3)),
    ("CrossEntropyLoss", {"weight": W4, "label_smoothing": 0.2, "ignore_index": 3}, (X34, T3)),
    ("CrossEntropyLoss", {"reduction": "sum"}, (X34, P34)),
    ("BCELoss", {"weight": W4}, (P34, P34[::-1].copy())),
    ("BCEWithLogitsLoss", {"weight": W4, "pos_weight": W4[::-1].copy()}, (X34, P34)),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, (X34, Y34)),
    ("MSELoss", {"size_average": False}, (X34, Y34)),
    ("NLLLoss", {"reduce": False}, (X34, T3)),
]


@pytest.mark.parametrize(
    "name,kw,arrays", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)]
)
def test_loss_modules_match_torch(name, kw, arrays):
    ekw = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em, tm = getattr(nn, name)(**ekw), getattr(torch.nn, name)(**tkw)
    assert repr(em) == repr(tm)
    assert em.reduction == tm.reduction
    assert sorted(em.state_dict()) == sorted(tm.state_dict())
    (e, t) = _pair(*arrays, grad=True)
    out_e, out_t = em(*e), tm(*t)
    _close(out_e, out_t)
    out_e.sum().backward()
    out_t.sum().backward()
    _close(e[0].grad, t[0].grad)


def test_loss_module_weight_is_a_buffer_that_moves_with_to():
    m = nn.CrossEntropyLoss(weight=ember.ones(4))
    assert [n for n, _ in m.named_buffers()] == ["weight"]
    m = m.to(ember.float64)
    assert m.weight.dtype == ember.float64
    assert nn.BCEWithLogitsLoss().state_dict() == {}


# -- result dtypes of mixed inputs ------------------------------------------------------------
MIXED = [
    ("mse f32-f64", lambda L, x, y, p, t: L.mse_loss(x, y.double())),
    ("mse f32-int", lambda L, x, y, p, t: L.mse_loss(x, t.long())),
    ("l1 int-f32", lambda L, x, y, p, t: L.l1_loss(t.long(), x)),
    ("huber f64-f32", lambda L, x, y, p, t: L.huber_loss(x.double(), y)),
    ("smooth_l1 f32-f64", lambda L, x, y, p, t: L.smooth_l1_loss(x, y.double())),
    ("ce probs f32-f64", lambda L, x, y, p, t: L.cross_entropy(x, p.double())),
    ("ce probs f64-f32 w32", lambda L, x, y, p, t: L.cross_entropy(x.double(), p, weight=y[0])),
    ("bcel f32-f64", lambda L, x, y, p, t: L.binary_cross_entropy_with_logits(x, p.double())),
    (
        "bcel pos f64",
        lambda L, x, y, p, t: L.binary_cross_entropy_with_logits(
            x, p, pos_weight=p[0].double(), weight=p[1].double()
        ),
    ),
    ("kl f32-f64", lambda L, x, y, p, t: L.kl_div(x, p.double(), reduction="sum")),
    ("ce f64", lambda L, x, y, p, t: L.cross_entropy(x.double(), t.long())),
]


@pytest.mark.parametrize("name,fn", MIXED, ids=[m[0] for m in MIXED])
def test_result_dtype_of_mixed_inputs(name, fn):
    x, y, p = (a.astype(np.float32) for a in (X34, Y34, P34))
    t = np.array([[0, 1, 2, 3]] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_e = fn(
            F,
            ember.tensor(x),
            ember.tensor(y),
            ember.tensor(p),
            ember.tensor(t[:, 0] if "ce" in name else t),
        )
        out_t = fn(
            TF,
            torch.tensor(x),
            torch.tensor(y),
            torch.tensor(p),
            torch.tensor(t[:, 0] if "ce" in name else t),
        )
    assert str(out_e.dtype).split(".")[-1] == str(out_t.dtype).split(".")[-1]
    _close(out_e, out_t, rtol=1e-5, atol=1e-6)


# -- errors -----------------------------------------------------------------------------------
def _e(*shape, dtype=None):
    return ember.randn(*shape, dtype=dtype)


ERRORS = [
    (
        lambda: F.nll_loss(_e(3, 4), ember.tensor([0.0, 1.0, 2.0])),
        ember.DTypeError,
        r"nll_loss: expected a target of class indices of dtype int64 \(or uint8\), "
        r"got ember.float32",
    ),
    (
        lambda: F.nll_loss(_e(3, 4), ember.tensor([0, 1, 2], dtype=ember.int32)),
        TypeError,
        "nll_loss: .* got ember.int32",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.tensor([0, 1, 7])),
        IndexError,
        r"cross_entropy: Target 7 is out of bounds: expected class indices in \[0, 4\)",
    ),
    (
        lambda: F.nll_loss(_e(3, 4), ember.tensor([0, -1, 2])),
        IndexError,
        r"nll_loss: Target -1 is out of bounds.*ignore_index=-100",
    ),
    (
        lambda: F.cross_entropy(_e(2, 4, 5), ember.tensor([[0, 1, 4, 2, 1]] * 2)),
        IndexError,
        "Target 4 is out of bounds",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.tensor([0, 1])),
        ValueError,
        r"cross_entropy: expected input batch size \(3\) to match target batch size \(2\) "
        r"\(input of shape \[3, 4\], target of shape \[2\]\)",
    ),
    (
        lambda: F.nll_loss(_e(3, 4), ember.tensor(1)),
        ValueError,
        r"nll_loss: expected input batch size \(3\) to match a 0-d target",
    ),
    (
        lambda: F.nll_loss(_e(2, 3, 4), ember.tensor([[0, 1, 1]] * 2)),
        ValueError,
        r"nll_loss: expected target of shape \[2, 4\] for input of shape \[2, 3, 4\], got \[2, 3\]",
    ),
    (
        lambda: F.cross_entropy(_e(4), ember.tensor([1, 2])),
        ValueError,
        r"cross_entropy: for 1-D input of shape \[4\], the target must be 0-d",
    ),
    (
        lambda: F.cross_entropy(ember.tensor(1.0), ember.tensor(0)),
        ValueError,
        "cross_entropy: expected input with 1 or more dimensions",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.rand(3, 5)),
        TypeError,
        r"cross_entropy: expected class indices of dtype int64 \(shape \[3\]\) or class "
        r"probabilities of the input's shape \[3, 4\], got a ember.float32 target of "
        r"shape \[3, 5\]",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.zeros(3, 4, dtype=ember.int64)),
        TypeError,
        "cross_entropy: expected a floating point target for class probabilities",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.rand(3, 4), ignore_index=1),
        RuntimeError,
        "ignore_index is not supported for floating point target",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.tensor([0, 1, 2]), weight=ember.ones(3)),
        ValueError,
        r"cross_entropy: weight tensor should be defined either for all 4 classes or no "
        r"classes but got weight tensor of shape: \[3\]",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.rand(3, 4), weight=ember.ones(2, 2)),
        ValueError,
        "for all 4 classes",
    ),
    (
        lambda: F.nll_loss(_e(3, 4), ember.tensor([0, 1, 2]), weight=ember.ones(4).double()),
        TypeError,
        "nll_loss: expected weight of the input's dtype ember.float32, got ember.float64",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.tensor([0, 1, 2]), label_smoothing=1.5),
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
    ),
    (
        lambda: F.cross_entropy(ember.ones(3, 4, dtype=ember.int64), ember.tensor([0, 1, 2])),
        TypeError,
        "cross_entropy: expected a floating point input, got ember.int64",
    ),
    (
        lambda: F.mse_loss(_e(3), _e(3), reduction="avg"),
        ValueError,
        "mse_loss: avg is not a valid value for reduction",
    ),
    (
        lambda: F.cross_entropy(_e(3, 4), ember.tensor([0, 1, 2]), reduction="batchmean"),
        ValueError,
        "cross_entropy: batchmean is not a valid value for reduction",
    ),
    (
        lambda: F.mse_loss(ember.tensor([1, 2]), ember.tensor([1, 2])),
        TypeError,
        "mse_loss: expected floating point input or target, got ember.int64 and ember.int64",
    ),
    (
        lambda: F.l1_loss(_e(3, 4), _e(3)),
        ValueError,
        r"l1_loss: the target size \[3\] cannot be broadcast to the input size \[3, 4\]",
    ),
    (
        lambda: F.mse_loss(_e(3, 4), _e(3, 4), weight=ember.ones(4)),
        ValueError,
        r"mse_loss: Weights and input must have the same size \(weight of shape \[4\], input of "
        r"shape \[3, 4\]\)",
    ),
    (
        lambda: F.smooth_l1_loss(_e(3), _e(3), beta=-1.0),
        RuntimeError,
        "smooth_l1_loss does not support negative values for beta",
    ),
    (
        lambda: F.huber_loss(_e(3), _e(3), delta=0.0),
        RuntimeError,
        "huber_loss does not support non-positive values for delta",
    ),
    (
        lambda: F.binary_cross_entropy(ember.rand(3), ember.rand(4)),
        ValueError,
        r"binary_cross_entropy: Using a target size \(ember.Size\(\[4\]\)\) that is different to "
        r"the input size \(ember.Size\(\[3\]\)\)",
    ),
    (
        lambda: F.binary_cross_entropy(ember.tensor([1.5]), ember.rand(1)),
        RuntimeError,
        "binary_cross_entropy: all elements of input should be between 0 and 1",
    ),
    (
        lambda: F.binary_cross_entropy(ember.tensor([float("nan")]), ember.rand(1)),
        RuntimeError,
        "all elements of input should be between 0 and 1",
    ),
    (
        lambda: F.binary_cross_entropy(ember.rand(2), ember.tensor([0.5, -0.5])),
        RuntimeError,
        "binary_cross_entropy: all elements of target should be between 0 and 1",
    ),
    (
        lambda: F.binary_cross_entropy(ember.rand(2), ember.rand(2).double()),
        TypeError,
        "binary_cross_entropy: expected input and target of the same dtype, got ember.float32 "
        "and ember.float64",
    ),
    (
        lambda: F.binary_cross_entropy_with_logits(_e(3), _e(4)),
        ValueError,
        r"binary_cross_entropy_with_logits: Target size \(ember.Size\(\[4\]\)\) must be the same "
        r"as input size \(ember.Size\(\[3\]\)\)",
    ),
    (
        lambda: F.binary_cross_entropy_with_logits(_e(3), ember.tensor([1, 0, 1])),
        TypeError,
        "binary_cross_entropy_with_logits: expected a floating point target",
    ),
    (
        lambda: F.kl_div(_e(3), ember.tensor([1, 0, 1]), reduction="sum"),
        TypeError,
        "kl_div: Integral inputs not supported",
    ),
    (
        lambda: F.kl_div(_e(3), _e(4), reduction="sum"),
        ValueError,
        r"kl_div: the input size \[3\] and the target size \[4\] cannot be broadcast",
    ),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[f"e{i}" for i in range(len(ERRORS))])
def test_error_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_errors_are_ember_errors():
    with pytest.raises(ember.EmberError):
        F.cross_entropy(_e(3, 4), ember.tensor([0, 1, 9]))
    with pytest.raises(ember.EmberError):
        F.nll_loss(_e(3, 4), ember.tensor([0.0, 1.0, 2.0]))


def test_size_mismatch_warns_like_torch():
    with pytest.warns(
        UserWarning,
        match=r"mse_loss: Using a target size \(ember.Size\(\[4\]\)\) "
        r"that is different to the input size \(ember.Size\(\[3, 4\]\)\)",
    ):
        F.mse_loss(_e(3, 4), _e(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(_e(3, 4), _e(3, 4))  # same shapes: silent
        F.kl_div(_e(3, 4), ember.rand(3, 4), reduction="batchmean")


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(_e(3, 4), ember.rand(3, 4))


def test_ignore_index_inside_the_class_range_keeps_others():
    x = ember.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([0, 1, 2, 1]), ignore_index=1, reduction="none")
    assert loss[1].item() == 0.0 and loss[3].item() == 0.0 and loss[0].item() > 0
    loss.sum().backward()
    assert x.grad[1].abs().sum().item() == 0.0


# -- second order -----------------------------------------------------------------------------
SECOND = [
    ("mse", lambda L, x, y, p, t, w: L.mse_loss(x, y)),
    ("smooth_l1", lambda L, x, y, p, t, w: L.smooth_l1_loss(x, y, beta=0.7, reduction="sum")),
    ("huber", lambda L, x, y, p, t, w: L.huber_loss(x, y, delta=0.6)),
    (
        "ce",
        lambda L, x, y, p, t, w: L.cross_entropy(
            x, t, weight=w, label_smoothing=0.1, ignore_index=2
        ),
    ),
    ("ce-probs", lambda L, x, y, p, t, w: L.cross_entropy(x, p, weight=w, label_smoothing=0.2)),
    ("nll", lambda L, x, y, p, t, w: L.nll_loss(L.log_softmax(x, 1), t, weight=w)),
    ("bce", lambda L, x, y, p, t, w: L.binary_cross_entropy(p, y.sigmoid(), weight=w)),
    (
        "bce-logits",
        lambda L, x, y, p, t, w: L.binary_cross_entropy_with_logits(
            x, p, pos_weight=w, reduction="sum"
        ),
    ),
    ("kl", lambda L, x, y, p, t, w: L.kl_div(L.log_softmax(x, 1), p, reduction="batchmean")),
]


def _second_inputs(lib):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    p, w = rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0.5, 2, 4)

    def mk(a):
        return lib.tensor(a, requires_grad=True)

    return mk(x), mk(y), mk(p), lib.tensor([0, 2, 3]), lib.tensor(w)


@pytest.mark.parametrize("name,fn", SECOND, ids=[s[0] for s in SECOND])
def test_second_order_matches_torch_and_finite_differences(name, fn):
    results = []
    for lib, L in ((ember, F), (torch, TF)):
        x, y, p, t, w = _second_inputs(lib)
        loss = fn(L, x, y, p, t, w)
        diff = [v for v in (x, y, p) if v.grad_fn is None]
        grads = lib.autograd.grad(loss, diff, create_graph=True, allow_unused=True)
        used = [(v, g) for v, g in zip(diff, grads) if g is not None]
        s = sum((g * g).sum() for _, g in used)
        gg = lib.autograd.grad(s, [v for v, _ in used], allow_unused=True)
        results.append([None if g is None else g.detach().numpy() for g in gg])
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    x, y, p, t, w = _second_inputs(ember)
    args = [a for a in (x, y, p)]
    assert ember.autograd.gradgradcheck(
        lambda x, y, p: fn(F, x, y, p, t, w), args, fast_mode=True, atol=1e-6, rtol=1e-4
    )


def test_target_check_survives_a_top_level_graph():
    from ember import static

    static.placeholder((2,), name="left_active")  # the default graph's builder stays installed
    try:
        with pytest.raises(IndexError, match="Target 7 is out of bounds"):
            ember.nn.functional.cross_entropy(ember.randn(3, 4), ember.tensor([0, 7, 1]))
    finally:
        static.reset_default_graph()
