"""Random sampling: bernoulli, multinomial, normal, poisson and the in-place fills (uniform_,
normal_, bernoulli_, exponential_, geometric_, log_normal_, cauchy_, random_).

Draws are checked by statistics of large samples (bounds of about six standard errors, so a
wrong distribution fails and a right one passes), by PyTorch parity of shapes, dtypes and
errors, by seed reproducibility, and by the in-place rules of autograd.
"""

import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

FLOATS = ["float16", "bfloat16", "float32", "float64"]
N = 40_000


def _np(t) -> np.ndarray:
    return np.asarray(t.cpu().float().numpy() if t.dtype is ember.bfloat16 else t.cpu().numpy())


def _close(value, expected, se, k=6.0):
    assert abs(value - expected) <= k * se, (value, expected, se)


# -- bernoulli ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_frequencies_dtype_device(device, dtype):
    p = ember.tensor([0.0, 0.3, 1.0], dtype=getattr(ember, dtype), device=device).expand(N, 3)
    out = ember.bernoulli(p)
    assert out.dtype is p.dtype and out.device == p.device and tuple(out.shape) == (N, 3)
    a = _np(out)
    assert set(np.unique(a)) <= {0.0, 1.0}
    assert a[:, 0].sum() == 0 and a[:, 2].sum() == N
    _close(a[:, 1].mean(), float(p[0, 1].item()), math.sqrt(0.21 / N))


def test_bernoulli_scalar_p_and_method(device):
    x = ember.zeros(N, dtype=ember.int64, device=device)
    out = ember.bernoulli(x, 0.25)
    assert out.dtype is ember.int64 and out.device == x.device
    _close(_np(out).mean(), 0.25, math.sqrt(0.1875 / N))
    m = ember.full((N,), 0.75, device=device).bernoulli()
    _close(_np(m).mean(), 0.75, math.sqrt(0.1875 / N))
    assert ember.bernoulli(ember.tensor(1.0, device=device)).tolist() == 1.0  # 0-d


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda m, x: m.bernoulli(x([0.5, 2.0])), RuntimeError, r"bernoulli: .*\[0, 1\]"),
        (lambda m, x: m.bernoulli(x([0.5, -1.0])), RuntimeError, r"bernoulli: .*\[0, 1\]"),
        (lambda m, x: m.bernoulli(x([0.5, math.nan])), RuntimeError, r"bernoulli: .*NaN"),
        (lambda m, x: m.bernoulli(x([0.5]), 1.5), RuntimeError, r"p=1\.5"),
        (lambda m, x: m.bernoulli(x([1, 0])), TypeError, "bernoulli: .*int64"),
    ],
)
def test_bernoulli_errors(device, call, exc, match):
    def e(v):
        return ember.tensor(v, device=device)

    with pytest.raises(exc, match=match):
        call(ember, e)
    with pytest.raises((RuntimeError, NotImplementedError)):  # PyTorch refuses them too
        call(torch, torch.tensor)


# -- multinomial ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial_with_replacement_frequencies(device, dtype):
    w = ember.tensor([[1.0, 2.0, 0.0, 5.0], [0.0, 0.0, 3.0, 0.0]], dtype=dtype, device=device)
    out = ember.multinomial(w, N, replacement=True)
    assert out.dtype is ember.int64 and out.device == w.device and tuple(out.shape) == (2, N)
    a = _np(out)
    freq = np.bincount(a[0], minlength=4) / N
    for f, p in zip(freq, [1 / 8, 2 / 8, 0.0, 5 / 8]):
        _close(f, p, math.sqrt(p * (1 - p) / N) + 1e-12)
    assert (a[1] == 2).all()


def test_multinomial_without_replacement_distinct_and_ordered(device):
    p = np.array([0.1, 0.2, 0.3, 0.4])
    w = ember.tensor(p * 7, device=device).expand(N, 4)  # unnormalized weights
    a = _np(w.multinomial(2))
    assert a.shape == (N, 2) and (a[:, 0] != a[:, 1]).all()
    first = np.bincount(a[:, 0], minlength=4) / N
    second = np.bincount(a[:, 1], minlength=4) / N
    second_p = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)]
    for f, q in [*zip(first, p), *zip(second, second_p)]:
        _close(f, q, math.sqrt(q * (1 - q) / N))


def test_multinomial_without_replacement_skips_zero_weights(device):
    w = ember.tensor([[0.0, 1.0, 0.0, 1e-6, 2.0], [3.0, 3.0, 3.0, 3.0, 0.0]], device=device)
    for _ in range(20):
        a = _np(ember.multinomial(w, 3))
        assert sorted(a[0]) == [1, 3, 4] and 4 not in a[1] and len(set(a[1])) == 3
    full = _np(ember.multinomial(ember.rand(6, device=device) + 0.1, 6))
    assert sorted(full.tolist()) == list(range(6))  # every category once: a permutation


def test_multinomial_shapes_match_torch(device):
    for shape, n, repl in [
        ((5,), 3, False),
        ((3, 4), 4, False),
        ((0, 3), 2, False),
        ((2, 3), 7, True),
    ]:
        e = ember.multinomial(ember.ones(*shape, device=device), n, replacement=repl)
        t = torch.multinomial(torch.ones(*shape), n, replacement=repl)
        assert tuple(e.shape) == tuple(t.shape) and e.dtype is ember.int64


@pytest.mark.parametrize(
    "weights, n, replacement, exc, match",
    [
        ([1.0, -1.0], 1, False, RuntimeError, "`inf`, `nan` or element < 0"),
        ([1.0, math.inf], 1, True, RuntimeError, "`inf`, `nan` or element < 0"),
        ([1.0, math.nan], 1, False, RuntimeError, "`inf`, `nan` or element < 0"),
        ([0.0, 0.0], 1, True, RuntimeError, r"sum of probabilities <= 0"),
        ([[1.0, 1.0], [0.0, 0.0]], 1, False, RuntimeError, r"sum of probabilities <= 0"),
        ([1.0, 0.0, 1.0], 4, False, RuntimeError, r"n_sample > prob_dist.size\(-1\)"),
        ([1.0, 0.0, 1.0], 0, True, RuntimeError, "n_sample <= 0"),
        ([1.0, 0.0, 1.0], -2, True, RuntimeError, "n_sample <= 0"),
        (1.0, 1, False, RuntimeError, "1 or 2 dim"),
        ([[[1.0]]], 1, False, RuntimeError, "1 or 2 dim"),
        ([1, 2], 1, False, TypeError, "floating-point dtypes.*int64"),
        ([1.0, 2.0], 1.0, False, TypeError, "num_samples must be an int"),
    ],
)
def test_multinomial_errors_as_torch(device, weights, n, replacement, exc, match):
    with pytest.raises(exc, match=match):
        ember.multinomial(ember.tensor(weights, device=device), n, replacement)
    with pytest.raises((RuntimeError, TypeError)):
        torch.multinomial(torch.tensor(weights), n, replacement)


def test_multinomial_not_enough_nonzero_categories(device):
    # PyTorch's GPU kernel refuses this (its CPU one draws zero-weight categories)
    with pytest.raises(RuntimeError, match="not enough non-zero categories to draw 3"):
        ember.multinomial(ember.tensor([1.0, 0.0, 1.0], device=device), 3)


# -- normal ---------------------------------------------------------------------------------------


def _normal_cases(device):
    f64 = ember.float64
    return [
        # (ember call, torch call)
        (
            lambda: ember.normal(ember.zeros(3, 1, device=device), ember.ones(4, device=device)),
            lambda: torch.normal(torch.zeros(3, 1), torch.ones(4)),
        ),
        (
            lambda: ember.normal(
                ember.zeros(3, device=device), ember.ones(3, dtype=f64, device=device)
            ),
            lambda: torch.normal(torch.zeros(3), torch.ones(3, dtype=torch.float64)),
        ),
        (
            lambda: ember.normal(ember.zeros(2, dtype=ember.float16, device=device), 2.0),
            lambda: torch.normal(torch.zeros(2, dtype=torch.float16), 2.0),
        ),
        (
            lambda: ember.normal(1.0, ember.ones(2, 2, dtype=f64, device=device)),
            lambda: torch.normal(1.0, torch.ones(2, 2, dtype=torch.float64)),
        ),
        (
            lambda: ember.normal(0, 1, (2, 3), device=device),
            lambda: torch.normal(0, 1, (2, 3)),
        ),
        (
            lambda: ember.normal(0.0, 1.0, size=(4,), dtype=ember.bfloat16, device=device),
            lambda: torch.normal(0.0, 1.0, size=(4,), dtype=torch.bfloat16),
        ),
        (
            lambda: ember.normal(ember.zeros((), device=device), ember.ones((), device=device)),
            lambda: torch.normal(torch.zeros(()), torch.ones(())),
        ),
        (
            lambda: ember.normal(ember.zeros(0, device=device), 1.0),
            lambda: torch.normal(torch.zeros(0), 1.0),
        ),
    ]


def test_normal_overloads_shape_dtype_as_torch(device):
    for e_call, t_call in _normal_cases(device):
        e, t = e_call(), t_call()
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert e.device.type == device and not e.requires_grad


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_statistics(device, dtype):
    dt = getattr(ember, dtype)
    mean = ember.tensor([[-3.0], [0.0], [5.0]], dtype=dt, device=device)
    std = ember.tensor([0.5, 2.0], dtype=dt, device=device).repeat(N // 2)
    a = _np(ember.normal(mean, std)).reshape(3, N // 2, 2)
    for i, m in enumerate([-3.0, 0.0, 5.0]):
        for j, s in enumerate([0.5, 2.0]):
            x = a[i, :, j].astype(np.float64)
            _close(x.mean(), m, s / math.sqrt(N / 2))
            _close(x.std(), s, s / math.sqrt(N) + 0.01 * s)
    b = _np(ember.normal(1.5, 0.25, (N,), dtype=dt, device=device)).astype(np.float64)
    _close(b.mean(), 1.5, 0.25 / math.sqrt(N))
    _close(b.std(), 0.25, 0.25 / math.sqrt(N / 2) + 0.0025)


def test_normal_zero_std_gives_the_mean_and_requires_grad_flag(device):
    mean = ember.tensor([1.0, -2.0], device=device, requires_grad=True)
    out = ember.normal(mean, 0.0)
    assert out.tolist() == [1.0, -2.0] and not out.requires_grad
    assert ember.normal(0.0, 1.0, (2,), device=device, requires_grad=True).requires_grad


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda m, x: m.normal(x([0.0]), -1.0), RuntimeError, r"std >= 0.0, but found std=-1"),
        (lambda m, x: m.normal(x([0.0]), math.nan), RuntimeError, "std >= 0.0"),
        (lambda m, x: m.normal(0.0, -1.0, (2,)), RuntimeError, "std >= 0.0"),
        (lambda m, x: m.normal(x([0.0, 0.0]), x([1.0, -1.0])), RuntimeError, "all elements of std"),
        (lambda m, x: m.normal(x([0, 1]), 1.0), TypeError, "normal: .*mean, got ember.int64"),
        (lambda m, x: m.normal(0.0, x([1, 1])), TypeError, "normal: .*std, got ember.int64"),
        (lambda m, x: m.normal(0.0, 1.0), TypeError, "size is required"),
        (lambda m, x: m.normal(x([[0.0] * 3] * 2), x([[1.0] * 2] * 3)), RuntimeError, "normal"),
    ],
)
def test_normal_errors(device, call, exc, match):
    def e(v):
        return ember.tensor(v, device=device)

    with pytest.raises(exc, match=match):
        call(ember, e)
    with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
        call(torch, torch.tensor)


# -- poisson --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_mean_and_variance(device, dtype):
    rates = [0.0, 0.3, 4.0, 9.9, 10.0, 37.5, 2500.0]
    lam = ember.tensor(rates, dtype=dtype, device=device).expand(N, len(rates))
    out = ember.poisson(lam)
    assert out.dtype is lam.dtype and out.device == lam.device and tuple(out.shape) == (N, 7)
    a = _np(out).astype(np.float64)
    assert (a == np.round(a)).all() and (a >= 0).all() and (a[:, 0] == 0).all()
    for j, r in enumerate(rates[1:], 1):
        _close(a[:, j].mean(), r, math.sqrt(r / N))
        _close(a[:, j].var(), r, r * math.sqrt(2 / N) + math.sqrt(r / N))


def test_poisson_small_rate_frequencies(device):
    a = _np(ember.poisson(ember.full((N,), 1.5, device=device))).astype(np.int64)
    freq = np.bincount(a, minlength=8)[:8] / N
    for k, f in enumerate(freq):
        p = math.exp(-1.5) * 1.5**k / math.factorial(k)
        _close(f, p, math.sqrt(p * (1 - p) / N))


@pytest.mark.parametrize(
    "rates, exc, match",
    [
        ([1.0, -1.0], RuntimeError, "expected rate to be non-negative"),
        ([1.0, math.nan], RuntimeError, "expected rate to be non-negative"),
        ([1.0, math.inf], RuntimeError, "finite rates"),
        ([1, 2], TypeError, "poisson: .*int64"),
    ],
)
def test_poisson_errors(device, rates, exc, match):
    with pytest.raises(exc, match=match):
        ember.poisson(ember.tensor(rates, device=device))


# -- in-place fills -------------------------------------------------------------------------------

# (method, args, [mean, var] of the distribution or None, a check of the support)
FILLS = [
    ("uniform_", (-2.0, 6.0), (2.0, 64 / 12), lambda a: (a >= -2).all() and (a < 6).all()),
    ("normal_", (3.0, 0.5), (3.0, 0.25), None),
    ("bernoulli_", (0.2,), (0.2, 0.16), lambda a: np.isin(a, [0, 1]).all()),
    ("exponential_", (4.0,), (0.25, 1 / 16), lambda a: (a >= 0).all()),
    (
        "geometric_",
        (0.4,),
        (2.5, 0.6 / 0.16),
        lambda a: (a >= 1).all() and (a == np.round(a)).all(),
    ),
    ("log_normal_", (0.5, 0.25), (math.exp(0.5 + 0.25**2 / 2), None), lambda a: (a > 0).all()),
    ("random_", (3, 10), (6.0, (7**2 - 1) / 12), lambda a: set(np.unique(a)) == set(range(3, 10))),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name, args, moments, support", FILLS, ids=[f[0] for f in FILLS])
def test_fill_statistics(device, dtype, name, args, moments, support):
    x = ember.zeros(N, dtype=dtype, device=device)
    version = x._version[0]
    out = getattr(x, name)(*args)
    assert out is x and x.dtype is getattr(ember, dtype) and x.device.type == device
    assert x._version[0] == version + 1 and not x.requires_grad
    a = _np(x).astype(np.float64)
    rel = 0.01 if dtype in ("float16", "bfloat16") else 0.0  # rounding of reduced precision
    assert support is None or support(a)
    mean, var = moments
    sd = math.sqrt(var if var is not None else a.var())
    _close(a.mean(), mean, sd / math.sqrt(N) + rel * abs(mean))
    if var is not None:
        _close(a.var(), var, var * math.sqrt(8 / N) + 2 * rel * var)


def test_cauchy_median_and_quartiles(device):
    a = _np(ember.zeros(N, device=device).cauchy_(1.0, 2.0)).astype(np.float64)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    # quartiles of Cauchy(1, 2) are 1 -+ 2; the sample quartile's se is about 0.04 here
    _close(med, 1.0, 0.025)
    _close(q1, -1.0, 0.04)
    _close(q3, 3.0, 0.04)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_integer_fills(device, dtype):
    x = ember.zeros(N, dtype=dtype, device=device)
    a = _np(x.bernoulli_(0.5))
    assert set(np.unique(a)) == {0, 1} and x.dtype is getattr(ember, dtype)
    a = _np(x.geometric_(0.5)).astype(np.float64)
    assert a.min() >= 1
    _close(a.mean(), 2.0, math.sqrt(2 / N))
    a = _np(x.random_(-2 if dtype != "uint8" else 0, 5))
    assert set(np.unique(a)) == set(range(-2 if dtype != "uint8" else 0, 5))


# the top of random_()'s range: 2**mantissa bits for floating dtypes (every integer up to it is
# exact), the largest value for integer dtypes
RANDOM_TOPS = {
    "bool": 1,
    "uint8": 255,
    "int8": 127,
    "int16": 2**15 - 1,
    "int32": 2**31 - 1,
    "int64": 2**63 - 1,
    "float16": 2**11,
    "bfloat16": 2**8,
    "float32": 2**24,
    "float64": 2**53,
}


@pytest.mark.parametrize("dtype", list(RANDOM_TOPS))
def test_random_default_range(device, dtype):
    top = RANDOM_TOPS[dtype]
    a = _np(ember.zeros(N, dtype=dtype, device=device).random_())
    if dtype != "bool":
        a = a.astype(np.int64)  # exact for every integer random_ writes
    assert a.min() >= 0 and a.max() <= top and a.max() >= 0.9 * top  # the whole range is used
    if top <= 255:  # small ranges: both ends are drawn, and PyTorch's top is the same
        b = torch.zeros(N, dtype=getattr(torch, dtype)).random_()
        assert a.min() == 0 and a.max() == top == b.max().item()


def test_random_forms(device):
    x = ember.zeros(N, dtype=ember.int64, device=device)
    assert set(np.unique(_np(x.random_(4)))) == {0, 1, 2, 3}  # random_(to)
    assert set(np.unique(_np(x.random_(to=3)))) == {0, 1, 2}
    assert set(np.unique(_np(x.random_(-2, 1)))) == {-2, -1, 0}  # random_(from, to)
    a = _np(x.random_(2**62, None))  # random_(from, None): up to the dtype's max
    assert a.min() >= 2**62 and a.max() > 2**62 + 2**61
    a = _np(x.random_(-(2**63), 2**63 - 1))  # the widest range draws both signs
    assert a.min() < -(2**62) and a.max() > 2**62
    a = _np(ember.zeros(N, dtype=ember.uint8, device=device).random_(250, None))
    assert set(np.unique(a)) == set(range(250, 256))


@pytest.mark.parametrize(
    "dtype, call, exc, match",
    [
        ("float32", lambda x: x.uniform_(2, 1), RuntimeError, r"from=2\.0 > to=1\.0"),
        ("float32", lambda x: x.uniform_(-math.inf, 1), RuntimeError, "from=-inf is out of bounds"),
        ("float16", lambda x: x.uniform_(0, 1e6), RuntimeError, "to=1000000.0 is out of bounds"),
        ("float32", lambda x: x.uniform_(-3e38, 3e38), RuntimeError, "to-from <="),
        ("int64", lambda x: x.uniform_(), TypeError, "uniform_: .*int64"),
        ("float32", lambda x: x.normal_(0, -1), RuntimeError, r"std >= 0.0, but found std=-1"),
        ("int32", lambda x: x.normal_(), TypeError, "normal_: .*int32"),
        ("float32", lambda x: x.bernoulli_(1.5), RuntimeError, r"p to be in \[0, 1\]"),
        ("float32", lambda x: x.bernoulli_(math.nan), RuntimeError, r"p to be in \[0, 1\]"),
        ("float32", lambda x: x.exponential_(0), RuntimeError, "lambda > 0.0"),
        ("float32", lambda x: x.exponential_(math.nan), RuntimeError, "lambda > 0.0"),
        ("int64", lambda x: x.exponential_(), TypeError, "exponential_: .*int64"),
        ("float32", lambda x: x.geometric_(0), RuntimeError, r"p to be in \(0, 1\)"),
        ("float32", lambda x: x.geometric_(1), RuntimeError, r"p to be in \(0, 1\)"),
        ("bool", lambda x: x.geometric_(0.5), TypeError, "geometric_: .*bool"),
        ("float32", lambda x: x.log_normal_(0, 0), RuntimeError, "std > 0.0"),
        ("int8", lambda x: x.log_normal_(), TypeError, "log_normal_: .*int8"),
        ("float32", lambda x: x.cauchy_(0, -1), RuntimeError, "sigma > 0.0"),
        ("uint8", lambda x: x.cauchy_(), TypeError, "cauchy_: .*uint8"),
        ("float32", lambda x: x.random_(3, 3), RuntimeError, "from=3 >= to=3"),
        ("float32", lambda x: x.random_(0), RuntimeError, "from=0 >= to=0"),
        ("uint8", lambda x: x.random_(-3, 5), RuntimeError, "from=-3 is out of bounds for"),
        ("uint8", lambda x: x.random_(0, 257), RuntimeError, "to - 1 = 256 is out of bounds"),
        ("bool", lambda x: x.random_(0, 3), RuntimeError, "to - 1 = 2 is out of bounds"),
        ("float16", lambda x: x.random_(0, 2**17), RuntimeError, "out of bounds for"),
        ("float32", lambda x: x.random_(1.5, 3), TypeError, "must be integers"),
    ],
)
def test_fill_errors_as_torch(device, dtype, call, exc, match):
    with pytest.raises(exc, match=match):
        call(ember.zeros(3, dtype=dtype, device=device))
    with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
        call(torch.zeros(3, dtype=getattr(torch, dtype)))


def test_bernoulli_fill_with_tensor_p(device):
    x = ember.zeros(N, 3, dtype=ember.int32, device=device)
    p = ember.tensor([0.0, 0.6, 1.0], device=device)
    a = _np(x.bernoulli_(p))
    assert x.dtype is ember.int32 and (a[:, 0] == 0).all() and (a[:, 2] == 1).all()
    _close(a[:, 1].mean(), 0.6, math.sqrt(0.24 / N))
    with pytest.raises(RuntimeError, match="expand"):
        ember.zeros(3, device=device).bernoulli_(ember.tensor([0.5, 0.5], device=device))
    with pytest.raises(TypeError, match="bernoulli_: .*p, got ember.int64"):
        ember.zeros(2, device=device).bernoulli_(ember.tensor([0, 1], device=device))


# -- autograd and views ---------------------------------------------------------------------------

METHODS = [
    ("uniform_", ()),
    ("normal_", ()),
    ("bernoulli_", ()),
    ("exponential_", ()),
    ("geometric_", (0.5,)),
    ("log_normal_", ()),
    ("cauchy_", ()),
    ("random_", ()),
]


@pytest.mark.parametrize("name, args", METHODS, ids=[m[0] for m in METHODS])
def test_fill_refuses_a_leaf_that_requires_grad_but_not_under_no_grad(device, name, args):
    w = ember.zeros(4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{name}: a leaf tensor that requires grad"):
        getattr(w, name)(*args)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(torch.zeros(4, requires_grad=True), name)(*args)
    with ember.no_grad():
        assert getattr(w, name)(*args) is w
    assert w.requires_grad and w.grad is None and w._version[0] == 1


def test_fill_of_a_non_leaf_gives_its_history_a_zero_gradient(device):
    w = ember.ones(3, device=device, requires_grad=True)
    y = w * 2
    y.normal_()
    assert y.requires_grad
    (y * 3).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0, 0.0]


def test_fill_of_a_view_writes_through(device):
    base = ember.zeros(50, 4, device=device)
    version = base._version[0]
    view = base[:, 1]
    view.uniform_(1, 2)
    a = _np(base)
    assert base._version[0] == version + 1
    assert (a[:, [0, 2, 3]] == 0).all() and (a[:, 1] >= 1).all() and (a[:, 1] < 2).all()


def test_samples_do_not_require_grad(device):
    p = ember.full((4,), 0.5, device=device, requires_grad=True)
    assert not ember.bernoulli(p).requires_grad
    assert not ember.multinomial(p, 2).requires_grad
    assert not ember.poisson(p).requires_grad
    assert not ember.normal(p, p).requires_grad


# -- seeds and generators -------------------------------------------------------------------------


def _draws(device, generator=None):
    g = {"generator": generator}
    w = ember.tensor([[1.0, 2.0, 3.0], [3.0, 1.0, 0.5]], device=device)
    z = ember.zeros(5, device=device)
    return [
        ember.bernoulli(ember.full((6,), 0.5, device=device), **g).tolist(),
        ember.multinomial(w, 2, **g).tolist(),
        ember.multinomial(w, 5, True, **g).tolist(),
        ember.normal(ember.zeros(3, device=device), 1.0, **g).tolist(),
        ember.normal(0.0, 1.0, (3,), device=device, **g).tolist(),
        ember.poisson(ember.tensor([0.5, 20.0], device=device), **g).tolist(),
        *[getattr(z, m)(*a, **g).tolist() for m, a in METHODS],
    ]


def test_manual_seed_reproduces_every_draw(device):
    ember.manual_seed(5)
    a = _draws(device)
    ember.manual_seed(5)
    assert _draws(device) == a
    ember.manual_seed(6)
    assert _draws(device) != a


def test_generator_is_independent_of_the_global_one(device):
    g = ember.Generator(device).manual_seed(11)
    a = _draws(device, g)
    ember.manual_seed(0)
    expected = ember.rand(4, device=device).tolist()
    ember.manual_seed(0)
    g.manual_seed(11)
    assert _draws(device, g) == a  # same generator seed, same draws
    assert ember.rand(4, device=device).tolist() == expected  # the global stream was not used


def test_generator_on_another_device_type_is_refused(device):
    other = "cpu" if device == "cuda" else None
    if other is None:
        pytest.skip("needs a cuda tensor to mismatch a cpu generator")
    with pytest.raises(RuntimeError, match="expected a 'cuda' device type for generator"):
        ember.bernoulli(ember.ones(2, device=device), generator=ember.Generator(other))


def test_compiled_graph_draws_anew_each_run():
    f = ember.compile(lambda x: x + ember.zeros(4).normal_() + ember.bernoulli(x * 0 + 0.5))
    a, b = f(ember.zeros(4)).tolist(), f(ember.zeros(4)).tolist()
    assert a != b
