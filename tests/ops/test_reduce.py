"""Op table for the reductions: forward vs NumPy, gradcheck, second order, PyTorch parity."""

import numpy as np

from .harness import OpCase, generate


def discrete(make):
    make.discrete = True  # integer or bool inputs: no gradients to check
    return make


def ints(shape, low=-5, high=6, dtype="int64"):
    return discrete(lambda rng: [rng.integers(low, high, shape).astype(dtype)])


def bools(shape):
    return discrete(lambda rng: [rng.random(shape) < 0.5])


def with_zeros(shape, n_zeros):
    def make(rng):
        a = rng.standard_normal(shape)
        flat = a.reshape(-1)
        flat[rng.choice(flat.size, n_zeros, replace=False)] = 0
        return [a]

    return make


def ties(rng):  # a row with a two-way tie for the max and min, another with a three-way tie
    return [np.array([[1.0, 3.0, 3.0, -2.0, -2.0], [0.5, 0.5, 0.5, 0.1, 0.2]])]


def lse_ref(a, axis=None, keepdims=False):
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def pnorm(a, p, axis=None, keepdims=False):
    return np.sum(np.abs(a) ** p, axis=axis, keepdims=keepdims) ** (1 / p)


S = np.sum
CASES = [
    # -- sum
    OpCase("sum_all", lambda m, a: m.sum(a), [(3, 4)], ref=S, transpose=True),
    OpCase("sum_dim", lambda m, a: a.sum(1), [(3, 4)], ref=lambda a: S(a, 1)),
    OpCase("sum_neg", lambda m, a: a.sum(-1), [(2, 3, 4)], ref=lambda a: S(a, -1), transpose=True),
    OpCase(
        "sum_tuple_keep",
        lambda m, a: m.sum(a, dim=(0, -1), keepdim=True),
        [(2, 3, 4)],
        ref=lambda a: S(a, (0, 2), keepdims=True),
    ),
    OpCase("sum_list", lambda m, a: a.sum([0, 1]), [(2, 3, 4)], ref=lambda a: S(a, (0, 1))),
    OpCase("sum_0d", lambda m, a: a.sum(), [()], ref=S),
    OpCase("sum_0d_dim", lambda m, a: a.sum(0, keepdim=True), [()], ref=S),
    OpCase("sum_empty", lambda m, a: a.sum(0), [(0, 3)], ref=lambda a: S(a, 0)),
    OpCase("sum_empty_all", lambda m, a: a.sum(), [(0, 3)], ref=S),
    OpCase("sum_int", lambda m, a: a.sum(1), [(3, 4)], ref=lambda a: S(a, 1), make=ints((3, 4))),
    OpCase("sum_int32", lambda m, a: a.sum(), [(5,)], ref=S, make=ints((5,), dtype="int32")),
    OpCase("sum_uint8", lambda m, a: a.sum(), [(5,)], ref=S, make=ints((5,), 0, 9, "uint8")),
    OpCase("sum_bool", lambda m, a: a.sum(0), [(4, 3)], ref=lambda a: S(a, 0), make=bools((4, 3))),
    OpCase(
        "sum_dtype",
        lambda m, a: a.sum(dtype=m.float32),
        [(4,)],
        ref=S,
        make=ints((4,)),
        grad=False,
    ),
    OpCase("sum_f32", lambda m, a: a.sum(1), [(3, 4)], ref=lambda a: S(a, 1), dtype="float32"),
    # -- mean
    OpCase("mean_all", lambda m, a: a.mean(), [(3, 4)], ref=np.mean, transpose=True),
    OpCase(
        "mean_dims",
        lambda m, a: m.mean(a, (0, 2), keepdim=True),
        [(2, 3, 4)],
        ref=lambda a: np.mean(a, (0, 2), keepdims=True),
    ),
    OpCase("mean_0d", lambda m, a: a.mean(), [()], ref=np.mean),
    OpCase(
        "mean_int_dtype",
        lambda m, a: a.mean(dtype=m.float64),
        [(5,)],
        ref=np.mean,
        make=ints((5,)),
        grad=False,
    ),
    # -- prod
    OpCase("prod_all", lambda m, a: a.prod(), [(2, 3)], ref=np.prod, transpose=True),
    OpCase("prod_dim", lambda m, a: m.prod(a, 1), [(3, 4)], ref=lambda a: np.prod(a, 1)),
    OpCase(
        "prod_dim_keep",
        lambda m, a: a.prod(-2, keepdim=True),
        [(2, 3, 4)],
        ref=lambda a: np.prod(a, -2, keepdims=True),
        transpose=True,
    ),
    OpCase(
        "prod_zero",
        lambda m, a: a.prod(1),
        [(3, 4)],
        ref=lambda a: np.prod(a, 1),
        make=with_zeros((3, 4), 1),
    ),
    OpCase("prod_zeros2", lambda m, a: a.prod(), [(2, 3)], ref=np.prod, make=with_zeros((2, 3), 2)),
    OpCase(
        "prod_zeros_dim",
        lambda m, a: a.prod(0),
        [(3, 4)],
        ref=lambda a: np.prod(a, 0),
        make=with_zeros((3, 4), 5),
    ),
    OpCase("prod_0d", lambda m, a: a.prod(0), [()], ref=np.prod),
    OpCase("prod_empty", lambda m, a: a.prod(1), [(2, 0)], ref=lambda a: np.prod(a, 1)),
    OpCase(
        "prod_int", lambda m, a: a.prod(0), [(3, 2)], ref=lambda a: np.prod(a, 0), make=ints((3, 2))
    ),
    OpCase("prod_bool", lambda m, a: a.prod(), [(3,)], ref=np.prod, make=bools((3,))),
    # -- cumsum / cumprod
    OpCase(
        "cumsum_0",
        lambda m, a: m.cumsum(a, 0),
        [(4, 3)],
        ref=lambda a: np.cumsum(a, 0),
        transpose=True,
    ),
    OpCase("cumsum_neg", lambda m, a: a.cumsum(-1), [(2, 3, 4)], ref=lambda a: np.cumsum(a, -1)),
    OpCase("cumsum_0d", lambda m, a: a.cumsum(0), [()], ref=lambda a: a),
    OpCase("cumsum_empty", lambda m, a: a.cumsum(0), [(0, 2)], ref=lambda a: np.cumsum(a, 0)),
    OpCase(
        "cumsum_int32",
        lambda m, a: a.cumsum(0),
        [(5,)],
        ref=lambda a: np.cumsum(a),
        make=ints((5,), dtype="int32"),
    ),
    OpCase(
        "cumsum_bool",
        lambda m, a: a.cumsum(0),
        [(5,)],
        ref=lambda a: np.cumsum(a),
        make=bools((5,)),
    ),
    OpCase(
        "cumsum_dtype",
        lambda m, a: a.cumsum(0, dtype=m.float64),
        [(5,)],
        ref=lambda a: np.cumsum(a),
        make=ints((5,)),
        grad=False,
    ),
    OpCase(
        "cumprod_1",
        lambda m, a: m.cumprod(a, 1),
        [(3, 4)],
        ref=lambda a: np.cumprod(a, 1),
        transpose=True,
    ),
    OpCase(
        "cumprod_zeros",
        lambda m, a: a.cumprod(0),
        [(5, 2)],
        ref=lambda a: np.cumprod(a, 0),
        make=with_zeros((5, 2), 3),
    ),
    OpCase("cumprod_0d", lambda m, a: a.cumprod(0), [()], ref=lambda a: a),
    OpCase("cumprod_int", lambda m, a: a.cumprod(0), [(4,)], ref=np.cumprod, make=ints((4,))),
    # -- max / min / amax / amin
    OpCase("max_all", lambda m, a: a.max(), [(3, 4)], ref=np.max, transpose=True),
    OpCase("min_all", lambda m, a: m.min(a), [(3, 4)], ref=np.min),
    OpCase("max_0d", lambda m, a: a.max(), [()], ref=np.max),
    OpCase(
        "max_dim", lambda m, a: m.max(a, 1), [(3, 4)], ref=lambda a: np.max(a, 1), transpose=True
    ),
    OpCase(
        "max_dim_keep",
        lambda m, a: a.max(dim=0, keepdim=True),
        [(3, 4)],
        ref=lambda a: np.max(a, 0, keepdims=True),
    ),
    OpCase(
        "max_dim_idx",
        lambda m, a: a.max(-1).indices,
        [(2, 3, 4)],
        ref=lambda a: np.argmax(a, -1),
        grad=False,
    ),
    OpCase("max_dim_0d", lambda m, a: a.max(0).values, [()], ref=lambda a: a),
    OpCase("min_dim", lambda m, a: a.min(1).values, [(3, 4)], ref=lambda a: np.min(a, 1)),
    OpCase(
        "min_dim_idx",
        lambda m, a: m.min(a, 0, True)[1],
        [(3, 4)],
        ref=lambda a: np.argmin(a, 0)[None],
        grad=False,
    ),
    OpCase("max_empty_other", lambda m, a: a.max(1).values, [(0, 3)], ref=lambda a: np.max(a, 1)),
    OpCase("max_ties", lambda m, a: a.max(), [(2, 5)], ref=np.max, make=ties, grad=False),
    OpCase("min_ties", lambda m, a: a.min(), [(2, 5)], ref=np.min, make=ties, grad=False),
    OpCase(
        "max_dim_ties",
        lambda m, a: a.max(1).values,
        [(2, 5)],
        ref=lambda a: np.max(a, 1),
        make=ties,
        grad=False,
    ),
    OpCase(
        "max_dim_ties_idx",
        lambda m, a: a.min(1).indices,
        [(2, 5)],
        ref=lambda a: np.argmin(a, 1),
        make=ties,
        grad=False,
    ),
    OpCase("max_int", lambda m, a: a.max(), [(3, 4)], ref=np.max, make=ints((3, 4))),
    OpCase(
        "max_bool",
        lambda m, a: a.max(0).values,
        [(3, 4)],
        ref=lambda a: np.max(a, 0),
        make=bools((3, 4)),
    ),
    OpCase(
        "amax_dims",
        lambda m, a: m.amax(a, (0, 2)),
        [(2, 3, 4)],
        ref=lambda a: np.max(a, (0, 2)),
        transpose=True,
    ),
    OpCase(
        "amin_keep",
        lambda m, a: a.amin(-1, keepdim=True),
        [(2, 3, 4)],
        ref=lambda a: np.min(a, -1, keepdims=True),
    ),
    OpCase("amax_all", lambda m, a: m.amax(a), [(3, 4)], ref=np.max),
    OpCase(
        "amax_ties",
        lambda m, a: a.amax(1),
        [(2, 5)],
        ref=lambda a: np.max(a, 1),
        make=ties,
        grad=False,
    ),
    OpCase(
        "amin_ties",
        lambda m, a: a.amin(1),
        [(2, 5)],
        ref=lambda a: np.min(a, 1),
        make=ties,
        grad=False,
    ),
    # -- argmax / argmin
    OpCase("argmax_all", lambda m, a: a.argmax(), [(3, 4)], ref=np.argmax, transpose=True),
    OpCase("argmax_dim", lambda m, a: m.argmax(a, 1), [(3, 4)], ref=lambda a: np.argmax(a, 1)),
    OpCase(
        "argmax_keep",
        lambda m, a: a.argmax(0, keepdim=True),
        [(3, 4)],
        ref=lambda a: np.argmax(a, 0)[None],
    ),
    OpCase(
        "argmax_none_keep",
        lambda m, a: m.argmax(a, keepdim=True),
        [(3, 4)],
        ref=lambda a: np.argmax(a).reshape(1, 1),
    ),
    OpCase("argmin_dim", lambda m, a: a.argmin(-1), [(2, 3, 4)], ref=lambda a: np.argmin(a, -1)),
    OpCase("argmin_0d", lambda m, a: a.argmin(), [()], ref=np.argmin),
    OpCase(
        "argmax_ties", lambda m, a: a.argmax(1), [(2, 5)], ref=lambda a: np.argmax(a, 1), make=ties
    ),
    OpCase("argmax_int", lambda m, a: a.argmax(), [(6,)], ref=np.argmax, make=ints((6,))),
    # -- var / std
    OpCase(
        "var_all", lambda m, a: a.var(), [(3, 4)], ref=lambda a: np.var(a, ddof=1), transpose=True
    ),
    OpCase("var_dim", lambda m, a: m.var(a, 1), [(3, 4)], ref=lambda a: np.var(a, 1, ddof=1)),
    OpCase(
        "var_corr0_keep",
        lambda m, a: a.var((0, 2), keepdim=True, correction=0),
        [(2, 3, 4)],
        ref=lambda a: np.var(a, (0, 2), keepdims=True),
    ),
    OpCase(
        "var_unbiased_false", lambda m, a: m.var(a, 0, False), [(3, 4)], ref=lambda a: np.var(a, 0)
    ),
    OpCase("var_legacy_bool", lambda m, a: a.var(False), [(5,)], ref=np.var),
    OpCase(
        "var_corr2",
        lambda m, a: a.var(-1, correction=2),
        [(3, 5)],
        ref=lambda a: np.var(a, -1, ddof=2),
    ),
    OpCase(
        "std_all", lambda m, a: a.std(), [(3, 4)], ref=lambda a: np.std(a, ddof=1), transpose=True
    ),
    OpCase(
        "std_dim",
        lambda m, a: m.std(a, -1, keepdim=True),
        [(2, 3, 4)],
        ref=lambda a: np.std(a, -1, ddof=1, keepdims=True),
    ),
    OpCase(
        "std_unbiased", lambda m, a: a.std(0, unbiased=False), [(3, 4)], ref=lambda a: np.std(a, 0)
    ),
    OpCase(
        "std_const",
        lambda m, a: a.std(1),
        [(2, 3)],
        ref=lambda a: np.std(a, 1, ddof=1),
        make=lambda rng: [np.ones((2, 3))],
        grad=False,
    ),
    OpCase(
        "std_f32", lambda m, a: a.std(), [(10,)], ref=lambda a: np.std(a, ddof=1), dtype="float32"
    ),
    # -- logsumexp
    OpCase(
        "lse_dim",
        lambda m, a: m.logsumexp(a, 1),
        [(3, 4)],
        ref=lambda a: lse_ref(a, 1),
        transpose=True,
    ),
    OpCase(
        "lse_tuple_keep",
        lambda m, a: a.logsumexp((0, 2), keepdim=True),
        [(2, 3, 4)],
        ref=lambda a: lse_ref(a, (0, 2), True),
    ),
    OpCase(
        "lse_big",
        lambda m, a: a.logsumexp(-1),
        [(2, 3)],
        ref=lambda a: lse_ref(a, -1),
        make=lambda rng: [rng.standard_normal((2, 3)) * 1000],
    ),
    OpCase(
        "lse_neginf",
        lambda m, a: a.logsumexp(1),
        [(2, 3)],
        ref=lambda a: [-np.inf, np.log(1 + np.e)],
        make=lambda rng: [np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]])],
        grad=False,
    ),
    OpCase("lse_0d", lambda m, a: a.logsumexp(0), [()], ref=lambda a: a),
    OpCase(
        "lse_int", lambda m, a: a.logsumexp(0), [(4,)], ref=lambda a: lse_ref(a, 0), make=ints((4,))
    ),
    # -- norm
    OpCase(
        "norm_default",
        lambda m, a: a.norm(),
        [(3, 4)],
        ref=lambda a: np.sqrt(S(a * a)),
        transpose=True,
    ),
    OpCase("norm_dim", lambda m, a: m.norm(a, dim=1), [(3, 4)], ref=lambda a: np.sqrt(S(a * a, 1))),
    OpCase(
        "norm_fro_keep",
        lambda m, a: a.norm("fro", (0, 1), keepdim=True),
        [(3, 4, 2)],
        ref=lambda a: np.sqrt(S(a * a, (0, 1), keepdims=True)),
    ),
    OpCase("norm_p1", lambda m, a: a.norm(1, -1), [(3, 4)], ref=lambda a: S(np.abs(a), -1)),
    OpCase(
        "norm_inf",
        lambda m, a: a.norm(float("inf"), 0),
        [(3, 4)],
        ref=lambda a: np.max(np.abs(a), 0),
    ),
    OpCase(
        "norm_neginf", lambda m, a: a.norm(float("-inf")), [(3, 4)], ref=lambda a: np.min(np.abs(a))
    ),
    OpCase("norm_p3", lambda m, a: m.norm(a, 3, 1), [(3, 4)], ref=lambda a: pnorm(a, 3, 1)),
    OpCase(
        "renorm",
        lambda m, a: m.renorm(a, 2, 0, 1.5),
        [(4, 3)],
        ref=lambda a: a * np.minimum(1, 1.5 / (pnorm(a, 2, 1)[:, None] + 1e-7)),
    ),
    OpCase(
        "renorm_p1_last_dim",
        lambda m, a: a.renorm(1, -1, 2.0),
        [(2, 3, 4)],
        ref=lambda a: a * np.minimum(1, 2.0 / (S(np.abs(a), (0, 1)) + 1e-7)),
    ),
    OpCase(
        "norm_p0",
        lambda m, a: a.norm(0),
        [(3, 4)],
        ref=lambda a: S(a != 0),
        make=with_zeros((3, 4), 4),
        gradgrad=False,
    ),
    OpCase(
        "norm_zero",
        lambda m, a: a.norm(dim=1),
        [(2, 3)],
        ref=lambda a: np.sqrt(S(a * a, 1)),
        make=lambda rng: [np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]])],
        grad=False,
    ),
    OpCase(
        "norm_p1_zero",
        lambda m, a: a.norm(1),
        [(3,)],
        ref=lambda a: S(np.abs(a)),
        make=lambda rng: [np.array([0.0, -1.0, 2.0])],
        grad=False,
    ),
    OpCase(
        "norm_inf_ties",
        lambda m, a: a.norm(float("inf"), 1),
        [(2, 5)],
        ref=lambda a: np.max(np.abs(a), 1),
        make=ties,
        grad=False,
    ),
    OpCase("norm_0d", lambda m, a: a.norm(), [()], ref=np.abs),
    OpCase("norm_empty", lambda m, a: a.norm(dim=0), [(0, 3)], ref=lambda a: np.sqrt(S(a * a, 0))),
    # -- all / any
    OpCase("all_all", lambda m, a: m.all(a), [(3, 4)], ref=np.all, make=bools((3, 4))),
    OpCase(
        "all_dim", lambda m, a: a.all(1), [(3, 4)], ref=lambda a: np.all(a, 1), make=bools((3, 4))
    ),
    OpCase(
        "any_keep",
        lambda m, a: m.any(a, 0, keepdim=True),
        [(3, 4)],
        ref=lambda a: np.any(a, 0, keepdims=True),
        make=bools((3, 4)),
    ),
    OpCase("any_float", lambda m, a: a.any(), [(3, 4)], ref=np.any, grad=False),
    OpCase(
        "all_int",
        lambda m, a: a.all(-1),
        [(3, 4)],
        ref=lambda a: np.all(a, -1),
        make=ints((3, 4), 0, 3),
    ),
    OpCase("all_uint8", lambda m, a: a.all(), [(4,)], ref=np.all, make=ints((4,), 0, 3, "uint8")),
    OpCase(
        "any_empty", lambda m, a: a.any(1), [(2, 0)], ref=lambda a: np.any(a, 1), make=bools((2, 0))
    ),
]
for _c in CASES:
    if getattr(_c.make, "discrete", False) or _c.dtype == "float32":
        _c.grad = False  # float32: values and dtypes only (gradcheck needs float64)
generate(globals(), CASES)
