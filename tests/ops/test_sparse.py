"""Op table for the sparse COO ops (``ember/ops/sparse.py``) through their public functions:
``sparse.mm`` / ``mm`` / ``@`` (``SpMM``, its gradients ``SpMM`` and ``SampledDot``),
``to_dense`` (``SparseToDense``) and ``to_sparse`` (``SparseGather``; data-dependent)."""

import numpy as np

from .harness import OpCase, generate

M, K, N, NNZ = 4, 3, 2, 7


def coo(sizes, nnz, *dense_shapes):
    """Random int64 indices (repeats likely) for ``sizes``, values (nnz,), and dense inputs."""

    def make(rng):
        idx = np.stack([rng.integers(0, s, nnz) for s in sizes]).astype(np.int64)
        return [idx, rng.standard_normal(nnz)] + [rng.standard_normal(s) for s in dense_shapes]

    return make


def dense_of(idx, vals, size):
    out = np.zeros(size)
    np.add.at(out, tuple(idx), vals)
    return out


CASES = [
    OpCase(
        "sparse_mm",
        lambda m, i, v, d: m.sparse.mm(m.sparse_coo_tensor(i, v, (M, K)), d),
        [(2, NNZ), (NNZ,), (K, N)],
        ref=lambda i, v, d: dense_of(i, v, (M, K)) @ d,
        make=coo((M, K), NNZ, (K, N)),
        nondiff=(0,),
    ),
    OpCase(
        "sparse_mm_empty",
        lambda m, i, v, d: m.sparse.mm(m.sparse_coo_tensor(i, v, (M, K)), d),
        [(2, 0), (0,), (K, N)],
        ref=lambda i, v, d: dense_of(i, v, (M, K)) @ d,
        make=coo((M, K), 0, (K, N)),
        nondiff=(0,),
    ),
    OpCase(
        "sparse_matmul_dense_first",
        lambda m, i, v, d: d @ m.sparse_coo_tensor(i, v, (M, K)),
        [(2, NNZ), (NNZ,), (N, M)],
        ref=lambda i, v, d: d @ dense_of(i, v, (M, K)),
        make=coo((M, K), NNZ, (N, M)),
        nondiff=(0,),
    ),
    OpCase(
        "sparse_matmul_vector",
        lambda m, i, v, d: m.matmul(m.sparse_coo_tensor(i, v, (M, K)), d),
        [(2, NNZ), (NNZ,), (K,)],
        ref=lambda i, v, d: dense_of(i, v, (M, K)) @ d,
        make=coo((M, K), NNZ, (K,)),
        nondiff=(0,),
    ),
    OpCase(
        "sparse_to_dense",
        lambda m, i, v: m.sparse_coo_tensor(i, v, (M, K)).to_dense(),
        [(2, NNZ), (NNZ,)],
        ref=lambda i, v: dense_of(i, v, (M, K)),
        make=coo((M, K), NNZ),
        nondiff=(0,),
    ),
    OpCase(
        "sparse_to_sparse",
        lambda m, x: (x.to_sparse() * 2.0).to_dense(),
        [(M, K)],
        ref=lambda x: 2.0 * x,
        make=lambda rng: [rng.standard_normal((M, K)) * (rng.random((M, K)) < 0.5)],
        data_dependent=True,
        grad=False,  # not differentiable where x is 0 (the pattern moves); tests/sparse checks
    ),
]

generate(globals(), CASES)
