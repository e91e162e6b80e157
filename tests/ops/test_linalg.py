"""Op table for the matrix products: every matmul rank combination (1-D..4-D, with batch
broadcasting), mm, bmm, dot, outer, addmm and einsum."""

import itertools

import numpy as np

from .harness import OpCase, generate

M, K, N = 3, 4, 2
A_BATCH = {3: (2,), 4: (3, 1)}
B_BATCH = {3: (2,), 4: (1, 2)}


def a_shape(rank):
    return (K,) if rank == 1 else A_BATCH.get(rank, ()) + (M, K)


def b_shape(rank):
    return (K,) if rank == 1 else B_BATCH.get(rank, ()) + (K, N)


def ints(*shapes):
    def make(rng):
        return [rng.integers(-4, 5, s) for s in shapes]

    make.discrete = True
    return make


MATMUL_CASES = [
    OpCase(
        f"matmul_{ra}d_{rb}d",
        lambda m, a, b: m.matmul(a, b),
        [a_shape(ra), b_shape(rb)],
        ref=np.matmul,
        transpose=ra >= 2,
    )
    for ra, rb in itertools.product(range(1, 5), repeat=2)
]

CASES = MATMUL_CASES + [
    OpCase("matmul_op", lambda m, a, b: a @ b, [(2, 3, 4), (4,)], ref=np.matmul),
    OpCase("matmul_rop", lambda m, a, b: b.__rmatmul__(a), [(3, 4), (4, 2)], ref=np.matmul),
    OpCase(
        "matmul_b_only_batched",
        lambda m, a, b: a @ b,
        [(3, 4), (5, 4, 2)],
        ref=np.matmul,
        transpose=True,
    ),
    OpCase("matmul_empty_k", lambda m, a, b: a @ b, [(3, 0), (0, 2)], ref=np.matmul),
    OpCase("matmul_empty_batch", lambda m, a, b: a @ b, [(0, 3, 4), (4, 2)], ref=np.matmul),
    OpCase(
        "matmul_int", lambda m, a, b: a @ b, [(3, 4), (4,)], ref=np.matmul, make=ints((3, 4), (4,))
    ),
    OpCase(
        "matmul_f32",
        lambda m, a, b: a @ b,
        [(2, 3, 4), (4, 2)],
        ref=np.matmul,
        dtype="float32",
        atol=1e-5,
    ),
    OpCase("mm", lambda m, a, b: m.mm(a, b), [(3, 4), (4, 2)], ref=np.matmul, transpose=True),
    OpCase("mm_method", lambda m, a, b: a.mm(b), [(1, 5), (5, 1)], ref=np.matmul),
    OpCase("mm_empty", lambda m, a, b: a.mm(b), [(0, 4), (4, 2)], ref=np.matmul),
    OpCase(
        "bmm", lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)], ref=np.matmul, transpose=True
    ),
    OpCase("dot", lambda m, a, b: m.dot(a, b), [(5,), (5,)], ref=np.dot),
    OpCase("dot_method", lambda m, a, b: a.dot(b), [(0,), (0,)], ref=np.dot),
    OpCase("dot_int", lambda m, a, b: a.dot(b), [(4,), (4,)], ref=np.dot, make=ints((4,), (4,))),
    OpCase("outer", lambda m, a, b: m.outer(a, b), [(3,), (4,)], ref=np.outer),
    OpCase(
        "outer_int", lambda m, a, b: a.outer(b), [(3,), (2,)], ref=np.outer, make=ints((3,), (2,))
    ),
    OpCase(
        "addmm",
        lambda m, c, a, b: m.addmm(c, a, b),
        [(2,), (3, 4), (4, 2)],
        ref=lambda c, a, b: c + a @ b,
    ),
    OpCase(
        "addmm_scaled",
        lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0),
        [(3, 2), (3, 4), (4, 2)],
        ref=lambda c, a, b: 0.5 * c + 2 * a @ b,
        transpose=True,
    ),
    OpCase(
        "addmm_method",
        lambda m, c, a, b: c.addmm(a, b, beta=0),
        [(3, 1), (3, 4), (4, 2)],
        ref=lambda c, a, b: a @ b,
        grad=False,
    ),  # beta=0: input ignored, no gradient
]


def ein(name, eq, shapes, ref_eq=None, **kw):
    return OpCase(
        f"einsum_{name}",
        lambda m, *xs: m.einsum(eq, *xs),
        shapes,
        ref=lambda *xs: np.einsum(ref_eq or eq, *xs),
        **kw,
    )


CASES += [
    ein("mm", "ij,jk->ik", [(3, 4), (4, 2)], transpose=True),
    ein("implicit", "ij,jk", [(3, 4), (4, 2)]),
    ein("implicit_order", "ba,ac", [(3, 4), (4, 2)]),
    ein("upper", "Ab,bC->CA", [(3, 4), (4, 2)]),
    ein("bmm", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ein("transpose", "ij->ji", [(3, 4)], transpose=True),
    ein("sum_all", "ij->", [(3, 4)]),
    ein("sum_only", "ij,j->j", [(3, 4), (4,)]),
    ein("diag", "ii->i", [(4, 4)], transpose=True),
    ein("trace", "ii", [(4, 4)]),
    ein("diag_sum", "iij->j", [(3, 3, 2)]),
    ein("diag_keep", "iji->ij", [(3, 2, 3)]),
    ein("repeated_mm", "iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ein("outer", "i,j->ij", [(3,), (4,)]),
    ein("hadamard", "ij,ij->ij", [(3, 4), (3, 4)]),
    ein("three", "ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 2)]),
    ein("same_op_twice", "ij,ij->", [(3, 4), (3, 4)]),
    ein("ellipsis", "...ij,...jk", [(2, 3, 4), (4, 5)], ref_eq="...ij,...jk"),
    ein("ellipsis_bcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ein("ellipsis_sum", "...ij,jk->ik", [(2, 3, 4), (4, 5)], ref_eq="aij,jk->ik"),
    ein("ellipsis_mid", "i...j->j...i", [(2, 3, 4, 5)]),
    ein("ellipsis_empty", "...i,i->...", [(4,), (4,)]),
    ein("size1_bcast", "ij,ij->ij", [(3, 1), (3, 4)], ref_eq="ij,ij->ij"),
    ein("spaces", "i j , j k -> i k", [(3, 4), (4, 2)], ref_eq="ij,jk->ik"),
    ein("0d", ",->", [(), ()]),
    ein("empty", "ij,jk->ik", [(0, 3), (3, 2)]),
    ein("int", "ij,j->i", [(3, 4), (4,)], make=ints((3, 4), (4,))),
]
for _c in CASES:
    if getattr(_c.make, "discrete", False) or _c.dtype == "float32":
        _c.grad = False
generate(globals(), CASES)
