"""ember.nn.init: exact fans, gains and deterministic fills vs torch.nn.init; statistics of
the random fills; in-place, no-grad, generator behaviour."""

import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import init

SHAPES = [(3, 5), (5, 3), (16, 3, 5), (8, 4, 3, 3), (2, 6, 1, 2, 3), (7, 1), (1, 0)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(
        ember.empty(*shape)
    ) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for mode in ("fan_in", "fan_out", "FAN_OUT"):
        assert init._calculate_correct_fan(
            ember.empty(*shape), mode
        ) == torch.nn.init._calculate_correct_fan(torch.empty(*shape), mode)


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))
    with pytest.raises(
        ValueError,
        match=r"Mode fan_avg not supported, please use one of "
        r"\['fan_in', 'fan_out'\]",
    ):
        init.kaiming_uniform_(ember.empty(2, 2), mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(4))


@pytest.mark.parametrize(
    "nonlinearity,param",
    [
        ("linear", None),
        ("conv1d", None),
        ("conv2d", None),
        ("conv3d", None),
        ("conv_transpose1d", None),
        ("conv_transpose2d", None),
        ("conv_transpose3d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("leaky_relu", 1),
        ("leaky_relu", math.sqrt(5)),
        ("selu", None),
    ],
)
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(
        nonlinearity, param
    )


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_eye_matches_torch(shape):
    np.testing.assert_array_equal(
        init.eye_(ember.empty(*shape)).numpy(), torch.nn.init.eye_(torch.empty(*shape)).numpy()
    )
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(2, 2, 2))


@pytest.mark.parametrize(
    "shape,groups",
    [((4, 4, 3), 1), ((6, 2, 3, 3), 1), ((6, 2, 3, 3), 2), ((4, 6, 3, 3, 3), 2), ((2, 5, 4, 4), 1)],
)
def test_dirac_matches_torch(shape, groups):
    np.testing.assert_array_equal(
        init.dirac_(ember.empty(*shape), groups).numpy(),
        torch.nn.init.dirac_(torch.empty(*shape), groups).numpy(),
    )


def test_dirac_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(ember.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ember.empty(3, 2, 3), groups=2)


def test_constant_ones_zeros():
    t = ember.empty(2, 3)
    assert init.constant_(t, 0.25) is t and t.tolist() == [[0.25] * 3] * 2
    assert init.ones_(t) is t and t.tolist() == [[1.0] * 3] * 2
    assert init.zeros_(t) is t and t.tolist() == [[0.0] * 3] * 2
    i = ember.empty(3, dtype=ember.int64)
    assert init.constant_(i, 7).tolist() == [7, 7, 7]


def _stats(t):
    a = t.detach().numpy().astype(np.float64).ravel()
    return a.mean(), a.std(), a.min(), a.max()


N = 200_000  # std error of a sample std is ~std / sqrt(2N) ~ 0.16%


def test_uniform_statistics():
    t = init.uniform_(ember.empty(N), -2.0, 3.0)
    mean, std, lo, hi = _stats(t)
    assert lo >= -2.0 and hi < 3.0
    assert abs(mean - 0.5) < 0.02 and abs(std - 5 / math.sqrt(12)) < 0.01
    mean, std, lo, hi = _stats(init.uniform_(ember.empty(N)))
    assert lo >= 0 and hi < 1 and abs(mean - 0.5) < 0.005


def test_normal_statistics():
    mean, std, _, _ = _stats(init.normal_(ember.empty(N), mean=1.5, std=0.3))
    assert abs(mean - 1.5) < 0.005 and abs(std - 0.3) < 0.003


def _truncnorm_std(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    phi = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = (phi(alpha) - phi(beta)) / z
    var = 1 + (alpha * phi(alpha) - beta * phi(beta)) / z - m * m
    return mean + std * m, std * math.sqrt(var)


@pytest.mark.parametrize(
    "mean,std,a,b",
    [
        (0.0, 1.0, -2.0, 2.0),  # most of the mass inside: redraw normals
        (0.0, 0.02, -0.04, 0.04),  # the ViT/BERT usage
        (0.0, 1.0, 1.0, 3.0),  # a tail window (< 30% mass): uniform proposals
        (0.5, 1.0, -0.2, 0.2),
    ],
)
def test_trunc_normal_statistics(mean, std, a, b):
    t = init.trunc_normal_(ember.empty(N), mean, std, a, b)
    m, s, lo, hi = _stats(t)
    em, es = _truncnorm_std(mean, std, a, b)
    assert lo >= a and hi <= b
    assert abs(m - em) < 0.02 * (b - a) and abs(s - es) < 0.02 * es


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(ember.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(400, 500), (64, 32, 3, 3)])
def test_xavier_statistics(shape):
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(ember.empty(*shape))
    std = 1.5 * math.sqrt(2.0 / (fan_in + fan_out))
    tol = 5 * std / math.sqrt(math.prod(shape))  # 5 standard errors
    _, s, lo, hi = _stats(init.xavier_uniform_(ember.empty(*shape), gain=1.5))
    assert -math.sqrt(3) * std <= lo and hi <= math.sqrt(3) * std and abs(s - std) < tol
    m, s, _, _ = _stats(init.xavier_normal_(ember.empty(*shape), gain=1.5))
    assert abs(m) < tol and abs(s - std) < tol


@pytest.mark.parametrize(
    "a,mode,nonlinearity",
    [
        (0, "fan_in", "leaky_relu"),
        (math.sqrt(5), "fan_in", "leaky_relu"),
        (0, "fan_out", "relu"),
        (0.1, "fan_out", "leaky_relu"),
        (0, "fan_in", "tanh"),
    ],
)
def test_kaiming_statistics(a, mode, nonlinearity):
    shape = (300, 200, 2, 2)
    fan = init._calculate_correct_fan(ember.empty(*shape), mode)
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    t = init.kaiming_uniform_(ember.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity)
    _, s, lo, hi = _stats(t)
    bound = math.sqrt(3) * std
    tol = 5 * std / math.sqrt(math.prod(shape))  # 5 standard errors
    assert -bound <= lo and hi <= bound and abs(s - std) < tol
    t = init.kaiming_normal_(ember.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity)
    m, s, _, _ = _stats(t)
    assert abs(m) < tol and abs(s - std) < tol


def test_kaiming_zero_element_warns():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(ember.empty(0, 3))


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3, 3), (6, 2, 2)])
def test_orthogonal(shape):
    t = init.orthogonal_(ember.empty(*shape), gain=2.0)
    w = t.numpy().reshape(shape[0], -1).astype(np.float64) / 2.0
    rows, cols = w.shape
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_errors_and_empty():
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(ember.empty(3))
    e = ember.empty(0, 3)
    assert init.orthogonal_(e) is e


def test_sparse():
    t = init.sparse_(ember.empty(20, 6), sparsity=0.3, std=0.5)
    zeros = (t.numpy() == 0).sum(axis=0)
    assert (zeros >= 6).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(ember.empty(2, 2, 2), 0.1)


RANDOM_FILLS = [
    lambda t, g=None: init.uniform_(t, -1, 1, generator=g),
    lambda t, g=None: init.normal_(t, 0, 1, generator=g),
    lambda t, g=None: init.trunc_normal_(t, generator=g),
    lambda t, g=None: init.xavier_uniform_(t, generator=g),
    lambda t, g=None: init.xavier_normal_(t, generator=g),
    lambda t, g=None: init.kaiming_uniform_(t, a=math.sqrt(5), generator=g),
    lambda t, g=None: init.kaiming_normal_(t, generator=g),
    lambda t, g=None: init.orthogonal_(t, generator=g),
    lambda t, g=None: init.sparse_(t, 0.5, generator=g),
]


@pytest.mark.parametrize("fill", RANDOM_FILLS)
def test_random_fills_in_place_reproducible_and_no_grad(fill):
    p = nn.Parameter(ember.empty(4, 6))
    data, version = p.numpy(force=True), p._version_value
    assert fill(p) is p
    assert p.numpy(force=True) is data and p._version_value > version  # written in place
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    ember.manual_seed(3)
    a = fill(ember.empty(4, 6)).numpy().copy()
    ember.manual_seed(3)
    b = fill(ember.empty(4, 6)).numpy()
    np.testing.assert_array_equal(a, b)  # the default generator drives them
    g1, g2 = ember.Generator().manual_seed(5), ember.Generator().manual_seed(5)
    state = ember.get_rng_state()
    c = fill(ember.empty(4, 6), g1).numpy().copy()
    assert ember.equal(ember.get_rng_state(), state)  # generator= leaves the default one alone
    np.testing.assert_array_equal(c, fill(ember.empty(4, 6), g2).numpy())


@pytest.mark.parametrize("dtype", [ember.float64, ember.float16, ember.bfloat16])
def test_fills_keep_dtype(dtype):
    for fill in RANDOM_FILLS:
        t = ember.empty(4, 6, dtype=dtype)
        assert fill(t).dtype == dtype
        assert np.isfinite(t.float().numpy()).all()


def test_init_on_module_parameters_like_pytorch_defaults():
    w = nn.Parameter(ember.empty(10, 20))
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = 1 / math.sqrt(20)
    assert np.abs(w.numpy(force=True)).max() <= bound
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (w * 2).sum().backward()  # still a healthy leaf after init
    assert w.grad.shape == (10, 20)


def test_not_a_tensor():
    with pytest.raises(TypeError, match=r"nn.init.normal_: expected an ember Tensor, got ndarray"):
        init.normal_(np.zeros(3))
