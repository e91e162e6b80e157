"""softmax/log_softmax functions and methods; sort/argsort/topk values, indices, grads vs torch."""

import numpy as np
import pytest

import ember

from .harness import OpCase, generate

torch = pytest.importorskip("torch")


def _distinct(shape):
    def make(rng):
        return [rng.permutation(int(np.prod(shape))).reshape(shape).astype("float64") + 0.5]

    return make


CASES = [
    OpCase("softmax", lambda m, a: a.softmax(1), [(3, 4)]),
    OpCase("softmax_neg_dim", lambda m, a: m.softmax(a, -1), [(2, 3, 4)]),
    OpCase("log_softmax", lambda m, a: a.log_softmax(0), [(3, 4)]),
    OpCase("sort_values", lambda m, a: m.sort(a, 1).values, [(3, 5)], make=_distinct((3, 5))),
    OpCase(
        "sort_desc", lambda m, a: a.sort(0, descending=True)[0], [(4, 3)], make=_distinct((4, 3))
    ),
    OpCase("topk", lambda m, a: a.topk(2, dim=1).values, [(3, 5)], make=_distinct((3, 5))),
    OpCase("topk_smallest", lambda m, a: a.topk(3, largest=False)[0], [(6,)], make=_distinct((6,))),
    OpCase("argsort", lambda m, a: m.argsort(a, 1), [(3, 5)], make=_distinct((3, 5)), grad=False),
    OpCase(
        "argsort_desc",
        lambda m, a: a.argsort(0, descending=True),
        [(4, 3)],
        make=_distinct((4, 3)),
        grad=False,
    ),
    OpCase("msort", lambda m, a: m.msort(a), [(4, 3)], make=_distinct((4, 3))),
]
generate(globals(), CASES)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_indices_match_torch_with_ties(descending):
    data = np.array([[3, 1, 2, 1, 3], [0, 0, 5, 5, 0]], dtype=np.int64)
    e = ember.tensor(data).sort(dim=1, descending=descending, stable=True)
    t = torch.tensor(data).sort(dim=1, descending=descending, stable=True)
    assert e.values.tolist() == t.values.tolist()
    assert e.indices.tolist() == t.indices.tolist()


def test_argsort_and_topk_indices_match_torch():
    data = np.random.default_rng(0).permutation(12).reshape(3, 4)
    assert ember.tensor(data).argsort(dim=0).tolist() == torch.tensor(data).argsort(dim=0).tolist()
    assert (
        ember.tensor(data).topk(2).indices.tolist() == torch.tensor(data).topk(2).indices.tolist()
    )


def test_topk_k_out_of_range_is_named():
    with pytest.raises(
        IndexError, match="topk: k \\(5\\) is out of range for dimension 0 of size 3"
    ):
        ember.ones(3).topk(5)
