"""Random creation ops (``ember.ops.random.Random``): ``rand``, ``randn``, ``randint``,
``randperm``, their ``_like`` forms and ``normal(mean, std, size)`` against PyTorch: shapes,
dtypes, devices, ranges and statistics, on every device."""

import math

import numpy as np
import pytest

import ember
from ember.ops.base import apply
from ember.ops.random import Random

torch = pytest.importorskip("torch")

N = 40_000


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float64)


def _like(device, dtype=ember.float32):
    return ember.zeros(2, 3, dtype=dtype, device=device)


# (ember call, torch call) of the same creation; each pair's results must agree in shape and
# dtype, and ember's lives on the test's device
CALLS = [
    ("rand", lambda m, d: m.rand(2, 3, device=d)),
    ("rand_size_tuple", lambda m, d: m.rand((4,), dtype=m.float64, device=d)),
    ("rand_0d", lambda m, d: m.rand((), device=d)),
    ("rand_empty", lambda m, d: m.rand(0, 3, device=d)),
    ("randn", lambda m, d: m.randn(3, 1, 2, device=d)),
    ("randn_f16", lambda m, d: m.randn(5, dtype=m.float16, device=d)),
    ("randn_bf16", lambda m, d: m.randn(5, dtype=m.bfloat16, device=d)),
    ("randint", lambda m, d: m.randint(0, 10, (3, 4), device=d)),
    ("randint_high_only", lambda m, d: m.randint(5, (2,), device=d)),
    ("randint_int32", lambda m, d: m.randint(-3, 3, (6,), dtype=m.int32, device=d)),
    ("randint_float", lambda m, d: m.randint(0, 4, (6,), dtype=m.float32, device=d)),
    ("randperm", lambda m, d: m.randperm(7, device=d)),
    ("randperm_int32", lambda m, d: m.randperm(3, dtype=m.int32, device=d)),
    ("normal_size", lambda m, d: m.normal(2.0, 0.5, (2, 3), device=d)),
    ("normal_size_f64", lambda m, d: m.normal(0, 1, size=(4,), dtype=m.float64, device=d)),
    ("rand_like", lambda m, d: m.rand_like(m.zeros(2, 3, dtype=m.float64, device=d))),
    ("randn_like_dtype", lambda m, d: m.randn_like(m.zeros(2, device=d), dtype=m.float16)),
    ("randint_like", lambda m, d: m.randint_like(m.zeros(3, 2, device=d), 5)),
    ("randint_like_low_high", lambda m, d: m.randint_like(m.zeros(4, device=d), -2, 2)),
]


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_shape_dtype_device_as_torch(device, name, call):
    got, want = call(ember, device), call(torch, "cpu")
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.device.type == ember.device(device).type
    assert not got.requires_grad and got.grad_fn is None


def _moments(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.var())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_rand_is_uniform_in_0_1_as_torch(device, dtype):
    e = _np(ember.rand(N, dtype=getattr(ember, dtype), device=device))
    t = torch.rand(N, dtype=getattr(torch, dtype)).double().numpy()
    for x in (e, t):  # both in [0, 1), mean 1/2, variance 1/12
        assert x.min() >= 0 and x.max() < 1
        mean, var = _moments(x)
        assert abs(mean - 0.5) < 0.01 and abs(var - 1 / 12) < 0.005
    assert abs(_moments(e)[0] - _moments(t)[0]) < 0.015


def test_rand_float16_rounded_up_to_one_becomes_zero_as_torch():
    """float32 draws rounded to float16 may reach 1.0: PyTorch maps those to 0.0 (so about
    2**-12 of the draws are 0 and none is 1)."""
    n = 400_000
    e = _np(ember.rand(n, dtype=ember.float16))
    t = torch.rand(n, dtype=torch.float16).double().numpy()
    for x in (e, t):
        assert x.max() == 1 - 2**-11
        assert abs((x == 0).sum() - n * 2**-12) < 5 * math.sqrt(n * 2**-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_randn_statistics_as_torch(device, dtype):
    e = _np(ember.randn(N, dtype=getattr(ember, dtype), device=device))
    t = torch.randn(N, dtype=getattr(torch, dtype)).double().numpy()
    for x in (e, t):
        mean, var = _moments(x)
        assert abs(mean) < 0.03 and abs(var - 1) < 0.03
        assert abs((np.abs(x) < 1).mean() - math.erf(1 / math.sqrt(2))) < 0.01
    np.testing.assert_allclose(
        np.percentile(e, [5, 50, 95]), np.percentile(t, [5, 50, 95]), atol=0.05
    )


def test_normal_with_size_statistics_as_torch(device):
    e = _np(ember.normal(3.0, 0.5, (N,), device=device))
    t = torch.normal(3.0, 0.5, (N,)).double().numpy()
    for x in (e, t):
        mean, var = _moments(x)
        assert abs(mean - 3.0) < 0.02 and abs(var - 0.25) < 0.01


@pytest.mark.parametrize("low, high", [(0, 10), (-5, 3), (7, 8)])
def test_randint_range_and_frequencies_as_torch(device, low, high):
    e = _np(ember.randint(low, high, (N,), device=device))
    t = torch.randint(low, high, (N,)).double().numpy()
    k = high - low
    for x in (e, t):
        assert x.min() >= low and x.max() < high
        counts = np.bincount((x - low).astype(np.int64), minlength=k)
        assert len(counts) == k and np.all(np.abs(counts - N / k) < 6 * math.sqrt(N / k))


def test_randint_like_and_randperm_values(device):
    x = ember.randint_like(ember.zeros(1000, dtype=ember.int16, device=device), 3, 6)
    assert x.dtype is ember.int16 and set(_np(x).tolist()) == {3.0, 4.0, 5.0}
    p = ember.randperm(50, device=device)
    assert sorted(_np(p).tolist()) == list(range(50)) and _np(p).tolist() != list(range(50))
    assert ember.randperm(0, device=device).shape == (0,)


def test_like_forms_keep_input_dtype_device_and_take_overrides(device):
    x = ember.zeros(3, 4, dtype=ember.float64, device=device)
    for fn in (ember.rand_like, ember.randn_like):
        assert fn(x).dtype is ember.float64 and fn(x).device == x.device
        assert fn(x, dtype=ember.float32).dtype is ember.float32
        assert fn(x, device="cpu").device.type == "cpu"
    assert ember.randint_like(x, 2, dtype=ember.int64).dtype is ember.int64


def test_requires_grad_makes_a_leaf(device):
    for t in (
        ember.rand(3, device=device, requires_grad=True),
        ember.randn(2, 2, device=device, requires_grad=True),
        ember.rand_like(ember.zeros(2, device=device), requires_grad=True),
        ember.normal(0.0, 1.0, (2,), device=device, requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf and t.grad_fn is None
    (ember.randn(3, requires_grad=True) * 2).sum().backward()  # a usable leaf


def test_same_seed_same_numbers_on_each_device(device):
    def draw():
        return [
            _np(ember.rand(5, device=device)),
            _np(ember.randn(2, 3, device=device)),
            _np(ember.randint(0, 100, (4,), device=device)),
            _np(ember.randperm(6, device=device)),
            _np(ember.rand_like(ember.zeros(3, device=device))),
            _np(ember.randn_like(ember.zeros(3, device=device))),
            _np(ember.normal(1.0, 2.0, (3,), device=device)),
        ]

    ember.manual_seed(11)
    a = draw()
    ember.manual_seed(11)
    b = draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], _np(ember.rand(5, device=device)))


def test_generator_feeds_the_like_forms_and_normal():
    for fn in (
        lambda g: ember.rand_like(ember.zeros(4), generator=g),
        lambda g: ember.randn_like(ember.zeros(4), generator=g),
        lambda g: ember.randint_like(ember.zeros(4), 0, 9, generator=g),
        lambda g: ember.normal(0.0, 1.0, (4,), generator=g),
    ):
        a = fn(ember.Generator().manual_seed(3)).tolist()
        ember.rand(10)  # the default generator moving does not matter
        assert fn(ember.Generator().manual_seed(3)).tolist() == a


def test_the_op_directly_and_its_text():
    out = apply(Random("integers", (2, 2), (0, 3)), ember.zeros((), dtype=ember.int32))
    assert out.shape == (2, 2) and out.dtype is ember.int32
    assert "shape=(2, 2)" in repr(Random("normal", (2, 2)))
    with pytest.raises(ember.EmberError, match="Random: unknown distribution 'gamma'"):
        apply(Random("gamma", (2,)), ember.zeros(()))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: ember.rand(2, dtype=ember.int64),
            ember.DTypeError,
            "rand: needs a floating dtype",
        ),
        (lambda: ember.randn(2, dtype=ember.bool), ember.DTypeError, "randn: needs a floating"),
        (
            lambda: ember.rand_like(ember.zeros(2, dtype=ember.int32)),
            ember.DTypeError,
            "rand_like: needs a floating dtype, got ember.int32",
        ),
        (lambda: ember.randint(3, 3, (2,)), ember.EmberError, "randint: expected low < high"),
        (
            lambda: ember.randint_like(ember.zeros(2), 5, 1),
            ember.EmberError,
            "randint_like: expected low < high, but got low=5 >= high=1",
        ),
        (lambda: ember.randint(0, 3), ember.EmberError, "randint: size is required"),
        (lambda: ember.randperm(-1), ember.EmberError, "randperm: n must be non-negative"),
        (lambda: ember.rand(2, -1), ember.EmberError, "rand"),
        (
            lambda: ember.normal(0.0, 1.0, (2,), dtype=ember.int64),
            ember.DTypeError,
            "normal: needs a floating dtype, got ember.int64",
        ),
    ],
)
def test_errors_name_the_function(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_errors_match_torch_kind():
    """PyTorch refuses the same calls."""
    for call in (
        lambda m: m.rand(2, dtype=m.int64),
        lambda m: m.randint(3, 3, (2,)),
        lambda m: m.randperm(-1),
    ):
        with pytest.raises(RuntimeError):
            call(torch)
        with pytest.raises(ember.EmberError):
            call(ember)


def test_define_mode_draws_eagerly():
    """Inside a graph definition, draws on no symbolic input run now (a Variable's initial
    value is concrete), as every op on concrete tensors does there."""
    from ember import static

    g = static.Graph()
    with g.as_default():
        w = static.Variable(ember.randn(3, 2), name="w")
        x = static.placeholder((None, 3))
        y = x @ w
        with static.Session() as sess:
            sess.run(static.global_variables_initializer())
            out = sess.run(y, {x: np.ones((1, 3), np.float32)})
    assert out.shape == (1, 2)
