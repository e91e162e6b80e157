"""More math (ember/functions/special/): op tables with gradients, torch parity, errors."""

import numpy as np
import pytest

import ember

from .harness import OpCase, generate

torch = pytest.importorskip("torch")


def _pos(shape, lo=0.2, hi=3.0):
    return lambda rng: [rng.uniform(lo, hi, shape)]


def _distinct(shape):
    return lambda rng: [
        rng.permutation(int(np.prod(shape))).reshape(shape) + rng.uniform(0, 0.5, shape)
    ]


def _prob(shape):
    return lambda rng: [rng.uniform(0.05, 0.95, shape)]


def _pos_pair():
    return lambda rng: [rng.uniform(0.2, 3.0, (2, 3)), rng.uniform(-2, 2, 3)]


def _nan_pair():
    """fmin's inputs: distinct values (its gradient is smooth there), a NaN in each."""

    def make(rng):
        a, b = rng.standard_normal((2, 3)), rng.standard_normal(3) + 5
        a[0, 1], b[2] = np.nan, np.nan
        return [a, b]

    return make


CASES = [
    OpCase("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), [(2, 3), (2, 3), (3,)]),
    OpCase(
        "addcdiv",
        lambda m, a, b, c: m.addcdiv(a, b, c.abs() + 1, value=2),
        [(2, 3), (2, 3), (2, 3)],
    ),
    OpCase("lerp", lambda m, a, b: m.lerp(a, b, 0.3), [(2, 3), (2, 3)]),
    OpCase("lerp_tensor_weight", lambda m, a, b, w: a.lerp(b, w), [(2, 3), (2, 3), (3,)]),
    OpCase("xlogy", lambda m, a, b: m.xlogy(a, b.abs() + 0.1), [(2, 3), (2, 3)]),
    OpCase("logit", lambda m, a: m.logit(a), [(5,)], make=_prob((5,))),
    OpCase("logit_eps", lambda m, a: m.logit(a, 0.2), [(5,)], make=_prob((5,)), gradgrad=False),
    OpCase("deg2rad", lambda m, a: m.deg2rad(a), [(4,)]),
    OpCase("rad2deg", lambda m, a: m.rad2deg(a), [(4,)]),
    OpCase("logaddexp", lambda m, a, b: m.logaddexp(a, b), [(2, 3), (2, 3)]),
    OpCase("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), [(3,), (2, 3)]),
    OpCase("hypot", lambda m, a, b: m.hypot(a, b), [(2, 3), (2, 3)]),
    OpCase("copysign", lambda m, a, b: m.copysign(a, b), [(2, 3), (2, 3)], nondiff=(1,)),
    OpCase("sinc", lambda m, a: m.sinc(a), [(6,)]),
    OpCase(
        "lgamma",
        lambda m, a: m.lgamma(a),
        [(6,)],
        make=lambda rng: [rng.uniform(-3.9, 6, 6) + 0.05],
    ),
    OpCase(
        "digamma",
        lambda m, a: m.digamma(a),
        [(6,)],
        make=lambda rng: [rng.uniform(-3.9, 6, 6) + 0.05],
    ),
    OpCase(
        "erfinv", lambda m, a: m.erfinv(a), [(6,)], make=lambda rng: [rng.uniform(-0.95, 0.95, 6)]
    ),
    OpCase(
        "i0", lambda m, a: m.i0(a), [(8,)], make=lambda rng: [rng.uniform(-40, 40, 8)], rtol=1e-9
    ),
    OpCase("i0_small", lambda m, a: a.i0(), [(2, 3)]),
    OpCase("nansum", lambda m, a: m.nansum(a, 1), [(2, 3)]),
    OpCase("nanmean", lambda m, a: m.nanmean(a, 0, keepdim=True), [(2, 3)]),
    OpCase("median_all", lambda m, a: m.median(a), [(2, 3)], make=_distinct((2, 3))),
    OpCase("median_dim", lambda m, a: a.median(1).values, [(3, 4)], make=_distinct((3, 4))),
    OpCase(
        "nanmedian_dim", lambda m, a: m.nanmedian(a, 0).values, [(3, 4)], make=_distinct((3, 4))
    ),
    OpCase(
        "kthvalue",
        lambda m, a: a.kthvalue(2, 0, keepdim=True).values,
        [(3, 4)],
        make=_distinct((3, 4)),
    ),
    OpCase("quantile", lambda m, a: m.quantile(a, 0.3), [(2, 5)], make=_distinct((2, 5))),
    OpCase(
        "quantile_dim",
        lambda m, a: m.quantile(a, m.tensor([0.25, 0.9], dtype=a.dtype), dim=1),
        [(2, 5)],
        make=_distinct((2, 5)),
    ),
    OpCase(
        "quantile_midpoint",
        lambda m, a: m.quantile(a, 0.4, 0, True, interpolation="midpoint"),
        [(4, 3)],
        make=_distinct((4, 3)),
    ),
    OpCase("cummax", lambda m, a: m.cummax(a, 1).values, [(2, 5)], make=_distinct((2, 5))),
    OpCase("cummin", lambda m, a: a.cummin(0).values, [(4, 2)], make=_distinct((4, 2))),
    OpCase("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), [(2, 4)]),
    OpCase("std_mean", lambda m, a: m.std_mean(a, 1)[0] + m.std_mean(a, 1)[1], [(2, 4)]),
    OpCase("var_mean", lambda m, a: m.var_mean(a, correction=0)[0], [(3, 4)]),
    OpCase("diff", lambda m, a: m.diff(a, 2, 1), [(2, 5)]),
    OpCase("diff_prepend", lambda m, a, b: m.diff(a, dim=0, prepend=b), [(3, 2), (1, 2)]),
    OpCase("trapezoid", lambda m, a: m.trapezoid(a, dx=0.5), [(2, 5)]),
    OpCase("trapezoid_x", lambda m, a, x: m.trapezoid(a, x), [(2, 5), (5,)]),
    OpCase("cumulative_trapezoid", lambda m, a: m.cumulative_trapezoid(a, dim=0), [(4, 2)]),
    OpCase("fmax", lambda m, a, b: m.fmax(a, b), [(2, 3), (2, 3)], gradgrad=False),
    OpCase("aminmax", lambda m, a: m.aminmax(a, dim=1).max, [(2, 3)], make=_distinct((2, 3))),
    OpCase("fmin", lambda m, a, b: m.fmin(a, b), [(2, 3), (3,)], make=_nan_pair(), gradgrad=False),
    OpCase("float_power", lambda m, a, b: m.float_power(a, b), [(2, 3), (3,)], make=_pos_pair()),
    OpCase("heaviside", lambda m, a, b: m.heaviside(a, b), [(2, 3), (3,)], grad=False),
    OpCase("signbit", lambda m, a: m.signbit(a), [(2, 3)], grad=False),
    OpCase("positive", lambda m, a: m.positive(a), [(2, 3)], ref=np.positive),  # no op: itself
    OpCase(
        "nan_to_num",
        lambda m, a: m.nan_to_num(a, nan=0.5, posinf=9.0, neginf=-9.0),
        [(6,)],
        make=lambda rng: [np.array([1.5, np.nan, np.inf, -np.inf, -0.5, 2.0])],
    ),
    OpCase(
        "isin",
        lambda m, a, b: m.isin(a, b),
        [(2, 3), (4,)],
        make=lambda rng: [rng.integers(0, 6, (2, 3)), rng.integers(0, 6, 4)],
        grad=False,
    ),
    OpCase(
        "nanquantile",
        lambda m, a: m.nanquantile(a, 0.4, dim=1),
        [(2, 5)],
        make=lambda rng: [np.where(np.eye(2, 5) > 0, np.nan, _distinct((2, 5))(rng)[0])],
    ),
    OpCase(
        "mode",
        lambda m, a: m.mode(a, 1),
        [(3, 5)],
        make=lambda rng: [rng.integers(0, 3, (3, 5)).astype("float64")],
        grad=False,
    ),
]
generate(globals(), CASES)


NAN = float("nan")


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.nan_to_num(x),
        lambda m, x: m.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0),
        lambda m, x: m.nansum(x),
        lambda m, x: m.nanmean(x, 1),
        lambda m, x: m.nanmedian(x),
        lambda m, x: m.nanmedian(x, 1).values,
        lambda m, x: m.median(x, 1).values,
        lambda m, x: m.nanquantile(x, 0.5, dim=1),
        lambda m, x: m.quantile(x, 0.5, dim=1),
        lambda m, x: m.signbit(x),
        lambda m, x: m.fmin(x, m.zeros_like(x)),
        lambda m, x: m.heaviside(x, m.tensor([0.5], dtype=x.dtype, device=x.device)),
        lambda m, x: m.isin(x, m.tensor([1.0, 2.0], dtype=x.dtype, device=x.device)),
    ],
)
def test_nan_and_inf_handling_matches_torch(device, fn):
    data = [[1.0, NAN, 3.0, -0.0], [float("inf"), 2.0, float("-inf"), 0.0], [NAN, NAN, NAN, NAN]]
    got = fn(ember, ember.tensor(data, device=device))
    want = fn(torch, torch.tensor(data))
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize(
    "data", [[1, 2, 2, 3, 3], [[1, 2, 2, 3, 3], [5, 5, 1, 1, 0]], [[4.0, 4.0], [1.0, 2.0]]]
)
@pytest.mark.parametrize("dim", [-1, 0])
def test_mode_matches_torch(device, data, dim):
    got = ember.mode(ember.tensor(data, device=device), dim)
    want = torch.mode(torch.tensor(data), dim)
    assert got.values.cpu().tolist() == want.values.tolist()
    assert got.indices.cpu().tolist() == want.indices.tolist()


def test_index_results_match_torch(device):
    x = [[3.0, 1.0, 3.0, 2.0], [0.0, 5.0, 5.0, -1.0]]
    e, t = ember.tensor(x, device=device), torch.tensor(x)
    for name in ("cummax", "cummin"):
        g, w = getattr(ember, name)(e, 1), getattr(torch, name)(t, 1)
        assert g.indices.cpu().tolist() == w.indices.tolist()
    distinct = [[3.0, 1.0, 4.0, 2.0], [0.0, 5.0, 6.0, -1.0]]  # ties: torch's pick is unspecified
    got = ember.kthvalue(ember.tensor(distinct, device=device), 3, 1).indices
    assert got.cpu().tolist() == torch.kthvalue(torch.tensor(distinct), 3, 1).indices.tolist()
    assert ember.median(ember.tensor([4.0, 1.0, 3.0], device=device), 0).indices.item() == 2


@pytest.mark.parametrize("name", ["addcmul_", "addcdiv_", "lerp_"])
def test_inplace_forms(device, name):
    a = [[1.0, 2.0], [3.0, 4.0]]
    args = {
        "addcmul_": lambda m: (m.ones(2), m.full((2,), 3.0)),
        "addcdiv_": lambda m: (m.ones(2), m.full((2,), 4.0)),
        "lerp_": lambda m: (m.zeros(2), 0.25),
    }[name]
    e = ember.tensor(a, device=device)
    e_args = [x.to(device) if isinstance(x, ember.Tensor) else x for x in args(ember)]
    assert getattr(e, name)(*e_args) is e
    t = torch.tensor(a)
    getattr(t, name)(*args(torch))
    assert e.cpu().tolist() == t.tolist()


INPLACE_GRAD = [
    ("addcmul_", lambda m, t: (t + 1, t * 2), {"value": 0.5}),
    ("addcdiv_", lambda m, t: (t + 1, t * t + 1), {"value": 2}),
    ("lerp_", lambda m, t: (t * 3, 0.3), {}),
    ("logit_", lambda m, t: (), {}),
    ("hypot_", lambda m, t: (t - 1,), {}),
    ("xlogy_", lambda m, t: (t + 1,), {}),
    ("copysign_", lambda m, t: (t - 0.5,), {}),
    ("lgamma_", lambda m, t: (), {}),
    ("digamma_", lambda m, t: (), {}),
    ("erfinv_", lambda m, t: (), {}),
    ("i0_", lambda m, t: (), {}),
    ("deg2rad_", lambda m, t: (), {}),
    ("rad2deg_", lambda m, t: (), {}),
    ("sinc_", lambda m, t: (), {}),
    ("nan_to_num_", lambda m, t: (), {"nan": 1.0}),
]


@pytest.mark.parametrize("name, others, kwargs", INPLACE_GRAD, ids=[c[0] for c in INPLACE_GRAD])
def test_inplace_values_and_gradients_match_torch(device, name, others, kwargs):
    data = [[0.2, 0.45], [0.6, 0.85]]
    results = []
    for m, dev in ((ember, device), (torch, "cpu")):
        leaf = m.tensor(data, dtype=m.float64, device=dev, requires_grad=True)
        x = leaf * 1.0
        assert getattr(x, name)(*others(m, leaf.detach()), **kwargs) is x
        (x * x).sum().backward()  # the square makes the gradient read the new value too
        results.append((x.detach().cpu().numpy(), leaf.grad.cpu().numpy()))
    (got, got_grad), (want, want_grad) = results
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-8)


def test_inplace_dtype_rules(device):
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, device=device)
    assert x.float_power_(2) is x
    assert (
        x.cpu().tolist() == torch.tensor([1.0, 2.0], dtype=torch.float64).float_power_(2).tolist()
    )
    h = ember.tensor([-1.0, 0.0, 2.0], device=device)
    h.heaviside_(ember.tensor([0.5], device=device))
    assert (
        h.cpu().tolist() == torch.tensor([-1.0, 0.0, 2.0]).heaviside_(torch.tensor([0.5])).tolist()
    )
    with pytest.raises(ember.DTypeError, match="float_power_: the base has dtype ember.float32"):
        ember.ones(2, device=device).float_power_(2)
    for name in ("deg2rad_", "sinc_", "i0_", "logit_"):
        with pytest.raises(ember.DTypeError, match=f"{name}: result type ember.float32 can't"):
            getattr(ember.tensor([1, 2], device=device), name)()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_i0_matches_torch(device, dtype):
    values = np.concatenate([np.linspace(-85, 85, 341), [0.0, 29.99, 30.0, 30.01, 700.0, 800.0]])
    values = np.concatenate([values, [np.nan, np.inf, -np.inf]]).astype(dtype)
    if dtype == "float32":  # torch's float32 i0 overflows early, from e^x, past x = 88.7
        values = values[np.abs(values) < 88]
    got = ember.i0(ember.tensor(values, device=device))
    want = torch.i0(torch.tensor(values))
    assert got.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(
        got.cpu().numpy(), want.numpy(), rtol=1e-13 if dtype == "float64" else 1e-6
    )
    assert ember.i0(ember.tensor([0, 2], device=device)).dtype == ember.float32


def test_misc_against_torch(device):
    x = torch.tensor([[1.5, -2.0, 0.0], [2.0, 0.5, -3.0]])
    e = ember.tensor(x.numpy(), device=device)
    assert ember.float_power(e, 2).dtype == ember.float64
    np.testing.assert_allclose(
        ember.float_power(e, 2).cpu().numpy(), torch.float_power(x, 2).numpy()
    )
    am = ember.aminmax(e)
    assert (am.min.item(), am.max.item()) == tuple(v.item() for v in torch.aminmax(x))
    assert ember.dropout(e, 0.5, train=False).cpu().tolist() == x.tolist()
    assert ember.diff(ember.tensor([True, False, False], device=device)).cpu().tolist() == [
        True,
        False,
    ]
    assert ember.isin(
        ember.tensor([1, 2, 3], device=device), ember.tensor([2], device=device), invert=True
    ).cpu().tolist() == [True, False, True]


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: ember.quantile(ember.ones(3), 1.5),
            ember.ShapeError,
            r"quantile: q must be in the range \[0, 1\] but got 1.5",
        ),
        (
            lambda: ember.quantile(ember.ones(3, dtype=ember.int64), 0.5),
            ember.DTypeError,
            "quantile: input tensor must be either float or double",
        ),
        (
            lambda: ember.quantile(ember.ones(3), 0.5, interpolation="cubic"),
            ember.ShapeError,
            "quantile: interpolation must be one of",
        ),
        (
            lambda: ember.kthvalue(ember.ones(3), 4),
            ember.ShapeError,
            r"kthvalue: k \(4\) must be in \[1, 3\]",
        ),
        (
            lambda: ember.diff(ember.tensor(1.0)),
            ember.ShapeError,
            "diff: expects input to be at least one-dimensional",
        ),
        (
            lambda: ember.median(ember.ones(0, 2), 0),
            ember.ShapeError,
            "median: cannot compute on an empty dimension",
        ),
        (
            lambda: ember.addcdiv(ember.ones(1), ember.tensor([1]), ember.tensor([2])),
            ember.DTypeError,
            "addcdiv: integer division of tensors is not supported",
        ),
        (
            lambda: ember.nanmean(ember.tensor([1, 2])),
            ember.DTypeError,
            "nanmean: expected a floating input",
        ),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
