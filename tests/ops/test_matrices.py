"""Op table for ``ember/functions/matrices.py`` and ``statistics.py``: vander, chain_matmul,
pinverse, cov, corrcoef, histogram (values, gradients and dtypes against PyTorch; NumPy's
``vander``/``cov``/``corrcoef``/``histogram`` as the forward references)."""

import warnings

import numpy as np

from .harness import OpCase, generate


def ints(*shapes):
    def make(rng):
        return [rng.integers(-3, 4, s) for s in shapes]

    make.discrete = True
    return make


def chain(m, *ts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return m.chain_matmul(*ts)


def full_rank(shape):
    return lambda rng: [rng.standard_normal(shape) + np.eye(*shape[-2:])]


def observations(rng):
    return [rng.standard_normal((3, 6)), rng.integers(0, 4, 6), rng.uniform(0.1, 2.0, 6)]


CASES = [
    OpCase("vander", lambda m, x: m.vander(x), [(4,)], ref=np.vander, grad=False),
    OpCase(
        "vander_increasing_n",
        lambda m, x: m.vander(x, 3, increasing=True),
        [(4,)],
        ref=lambda x: np.vander(x, 3, increasing=True),
        grad=False,
    ),
    OpCase(
        "vander_int",
        lambda m, x: m.vander(x, N=5),
        [(3,)],
        ref=lambda x: np.vander(x, 5),
        make=ints((3,)),
        grad=False,
    ),
    OpCase("chain_matmul", chain, [(2, 3), (3, 4), (4, 2)], ref=lambda a, b, c: a @ b @ c),
    OpCase("chain_matmul_one", chain, [(2, 3)], ref=lambda a: a),
    OpCase(
        "pinverse", lambda m, a: m.pinverse(a), [(4, 3)], ref=np.linalg.pinv, make=full_rank((4, 3))
    ),
    OpCase(
        "pinverse_wide_batched",
        lambda m, a: a.pinverse(),
        [(2, 3, 5)],
        ref=np.linalg.pinv,
        make=full_rank((2, 3, 5)),
    ),
    OpCase("cov", lambda m, x: m.cov(x), [(3, 6)], ref=np.cov),
    OpCase(
        "cov_1d_correction0",
        lambda m, x: x.cov(correction=0),
        [(5,)],
        ref=lambda x: np.cov(x, ddof=0),
    ),
    OpCase("cov_int", lambda m, x: m.cov(x), [(2, 5)], ref=np.cov, make=ints((2, 5)), grad=False),
    OpCase(
        "cov_weights",
        lambda m, x, f, a: m.cov(x, correction=2, fweights=f, aweights=a),
        [(3, 6), (6,), (6,)],
        ref=lambda x, f, a: np.cov(x, ddof=2, fweights=f, aweights=a),
        make=observations,
        nondiff=(1, 2),
    ),
    OpCase("corrcoef", lambda m, x: m.corrcoef(x), [(3, 6)], ref=np.corrcoef),
    OpCase("corrcoef_method_1d", lambda m, x: x.corrcoef(), [(5,)], ref=np.corrcoef),
    OpCase(
        "histogram",
        lambda m, x: m.histogram(x, 5, range=(-2.0, 2.0)).hist,
        [(40,)],
        ref=lambda x: np.histogram(x, 5, range=(-2.0, 2.0))[0],
        grad=False,
    ),
    OpCase(
        "histogram_edges_weight_density",
        lambda m, x, e, w: x.histogram(e, weight=w, density=True).hist,
        [(4, 10), (5,), (4, 10)],
        ref=lambda x, e, w: np.histogram(x, e, weights=w, density=True)[0],
        make=lambda rng: [
            rng.standard_normal((4, 10)),
            np.array([-2.0, -0.5, 0.0, 0.3, 1.5]),
            rng.uniform(0, 1, (4, 10)),
        ],
        grad=False,
    ),
    OpCase(
        "histogram_f32_data_range",
        lambda m, x: m.histogram(x, 7),
        [(30,)],
        ref=lambda x: np.histogram(x, 7)[0],
        dtype="float32",
        grad=False,
        data_dependent=True,
    ),
]

generate(globals(), CASES)
