"""The margin and likelihood losses (ember/nn/_functional/loss_margin.py, loss_likelihood.py and
their modules) against torch."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _arr(rng, shape, kind="normal"):
    if kind == "pos":
        return rng.uniform(0.2, 3.0, shape)
    if kind == "sign":
        return rng.choice([-1.0, 1.0], shape)
    if kind == "counts":
        return rng.integers(0, 5, shape).astype(np.float64)
    if kind == "binary":
        return rng.integers(0, 2, shape).astype(np.float64)
    return rng.standard_normal(shape)


# (module name, constructor kwargs, inputs as (shape, kind, differentiable), integer inputs)
CASES = [
    ("PoissonNLLLoss", {}, [((3, 4), "normal", True), ((3, 4), "counts", False)]),
    (
        "PoissonNLLLoss",
        {"log_input": False, "full": True, "reduction": "sum"},
        [((3, 4), "pos", True), ((3, 4), "counts", False)],
    ),
    (
        "GaussianNLLLoss",
        {},
        [((3, 4), "normal", True), ((3, 4), "normal", True), ((3, 4), "pos", True)],
    ),
    (
        "GaussianNLLLoss",
        {"full": True, "reduction": "none"},
        [((3, 4), "normal", True), ((3, 4), "normal", True), ((3, 1), "pos", True)],
    ),
    (
        "GaussianNLLLoss",
        {"reduction": "sum"},
        [((3, 4), "normal", True), ((3, 4), "normal", True), ((3,), "pos", True)],
    ),
    (
        "MarginRankingLoss",
        {"margin": 0.3},
        [((5,), "normal", True), ((5,), "normal", True), ((5,), "sign", False)],
    ),
    (
        "HingeEmbeddingLoss",
        {"margin": 0.7, "reduction": "none"},
        [((2, 3), "normal", True), ((2, 3), "sign", False)],
    ),
    ("HingeEmbeddingLoss", {}, [((6,), "normal", True), ((6,), "sign", False)]),
    ("SoftMarginLoss", {}, [((2, 3), "normal", True), ((2, 3), "sign", False)]),
    ("MultiLabelSoftMarginLoss", {}, [((3, 4), "normal", True), ((3, 4), "binary", False)]),
    (
        "MultiLabelSoftMarginLoss",
        {"reduction": "none"},
        [((3, 4), "normal", True), ((3, 4), "binary", False)],
    ),
    (
        "CosineEmbeddingLoss",
        {"margin": 0.2},
        [((4, 3), "normal", True), ((4, 3), "normal", True), ((4,), "sign", False)],
    ),
    ("TripletMarginLoss", {}, [((4, 3), "normal", True)] * 3),
    (
        "TripletMarginLoss",
        {"p": 1.0, "swap": True, "margin": 2.0, "reduction": "sum"},
        [((4, 3), "normal", True)] * 3,
    ),
    ("TripletMarginWithDistanceLoss", {"swap": True}, [((4, 3), "normal", True)] * 3),
    ("CosineSimilarity", {"dim": 0}, [((4, 3), "normal", True)] * 2),
    ("PairwiseDistance", {"p": 3.0, "keepdim": True}, [((4, 3), "normal", True)] * 2),
]


@pytest.mark.parametrize(
    "name, kw, inputs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_matches_torch(device, name, kw, inputs):
    rng = np.random.default_rng(0)
    arrays = [_arr(rng, shape, kind) for shape, kind, _ in inputs]
    t_in = [torch.tensor(a, requires_grad=diff) for a, (_, _, diff) in zip(arrays, inputs)]
    e_in = [
        ember.tensor(a, device=device, requires_grad=diff)
        for a, (_, _, diff) in zip(arrays, inputs)
    ]
    want = getattr(torch.nn, name)(**kw)(*t_in)
    got = getattr(ember.nn, name)(**kw)(*e_in)
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12
    )
    w = rng.standard_normal(tuple(want.shape))
    (want * torch.tensor(w)).sum().backward()
    (got * ember.tensor(w, device=device)).sum().backward()
    for e, t in zip(e_in, t_in):
        if t.requires_grad:
            np.testing.assert_allclose(e.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "kw", [{}, {"p": 2, "margin": 0.5}, {"weight": [0.5, 1.0, 2.0, 1.5]}, {"reduction": "none"}]
)
def test_multi_margin_loss(device, kw):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2])
    t_kw = {k: torch.tensor(v, dtype=torch.float64) if k == "weight" else v for k, v in kw.items()}
    e_kw = {
        k: ember.tensor(v, dtype=ember.float64, device=device) if k == "weight" else v
        for k, v in kw.items()
    }
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, device=device, requires_grad=True)
    want = torch.nn.MultiMarginLoss(**t_kw)(tx, torch.tensor(y))
    got = ember.nn.MultiMarginLoss(**e_kw)(ex, ember.tensor(y, device=device))
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_multilabel_margin_loss(device, reduction):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4))
    y = np.array([[3, 0, -1, 1], [1, 1, 2, -1], [0, 1, 2, 3]])
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, device=device, requires_grad=True)
    want = torch.nn.MultiLabelMarginLoss(reduction=reduction)(tx, torch.tensor(y))
    got = ember.nn.MultiLabelMarginLoss(reduction=reduction)(ex, ember.tensor(y, device=device))
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_gradcheck_on_the_new_losses():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    y = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    F = ember.nn.functional
    assert ember.autograd.gradgradcheck(lambda a: F.soft_margin_loss(a, y.detach().sign()), (x,))
    assert ember.autograd.gradgradcheck(lambda a, b: F.triplet_margin_loss(a, b, a * 2), (x, y))
    assert ember.autograd.gradcheck(lambda a: F.gaussian_nll_loss(a, y.detach(), a.exp()), (x,))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: ember.nn.functional.margin_ranking_loss(
                ember.ones(3), ember.ones(3, 1), ember.ones(3)
            ),
            ember.ShapeError,
            "margin_ranking_loss: All input tensors should have same dimension",
        ),
        (
            lambda: ember.nn.functional.gaussian_nll_loss(
                ember.ones(2, 3), ember.ones(2, 3), ember.ones(3, 2)
            ),
            ember.ShapeError,
            r"gaussian_nll_loss: var of shape \(3, 2\) does not match input \(2, 3\)",
        ),
        (
            lambda: ember.nn.functional.gaussian_nll_loss(
                ember.ones(2), ember.ones(2), -ember.ones(2)
            ),
            ember.ShapeError,
            "gaussian_nll_loss: var has negative entry",
        ),
        (
            lambda: ember.nn.functional.multi_margin_loss(
                ember.ones(2, 3), ember.tensor([0.0, 1.0])
            ),
            ember.DTypeError,
            "multi_margin_loss: expected an integer target",
        ),
        (
            lambda: ember.nn.functional.multi_margin_loss(ember.ones(2, 3), ember.tensor([0]), p=3),
            ember.ShapeError,
            "only p == 1 and p == 2 supported",
        ),
        (
            lambda: ember.nn.functional.soft_margin_loss(ember.ones(2), ember.ones(3)),
            ember.ShapeError,
            r"soft_margin_loss: input \(2,\), target \(3,\) must have the same shape",
        ),
        (
            lambda: ember.nn.functional.triplet_margin_loss(
                ember.ones(2, 2, 2), ember.ones(2, 2, 2), ember.ones(2, 2, 2)
            ),
            ember.ShapeError,
            "triplet_margin_loss: anchor, positive and negative must all be 1-D or 2-D",
        ),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "unbatched"])
def test_ctc_loss_matches_torch(device, reduction, zero_infinity, layout):
    rng = np.random.default_rng(0)
    t_len, n, c, s = 12, 4, 6, 5
    x = rng.standard_normal((t_len, n, c))
    targets = rng.integers(1, c, (n, s))
    targets[1, 2] = targets[1, 1]  # a repeated label needs a blank between
    in_lens, tg_lens = [12, 10, 7, 2], [5, 3, 4, 3]  # the last cannot fit: infinite loss
    if layout == "unbatched":
        x, targets, in_lens, tg_lens = x[:, 0], targets[0], [12], [5]
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, device=device, requires_grad=True)
    t_tg, e_tg = torch.tensor(targets), ember.tensor(targets, device=device)
    if layout == "concatenated":
        flat = np.concatenate([targets[i, :k] for i, k in enumerate(tg_lens)])
        t_tg, e_tg = torch.tensor(flat), ember.tensor(flat, device=device)
    kw = dict(reduction=reduction, zero_infinity=zero_infinity)
    want = torch.nn.CTCLoss(**kw)(
        tx.log_softmax(-1), t_tg, torch.tensor(in_lens), torch.tensor(tg_lens)
    )
    got = ember.nn.CTCLoss(**kw)(ex.log_softmax(-1), e_tg, in_lens, tg_lens)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    if np.isfinite(want.detach().numpy()).all():
        want.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(ex.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-10)


def test_ctc_errors():
    lp = ember.zeros(3, 2, 4)
    with pytest.raises(ember.ShapeError, match=r"ctc_loss: input_lengths must be in \[0, 3\]"):
        ember.nn.functional.ctc_loss(lp, ember.ones(2, 2, dtype=ember.int64), [4, 3], [1, 1])
    with pytest.raises(ember.ShapeError, match="ctc_loss: expected 2 input_lengths"):
        ember.nn.functional.ctc_loss(lp, ember.ones(2, 2, dtype=ember.int64), [3], [1, 1])
