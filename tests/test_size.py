"""ember.Size against torch.Size: slicing, + and * give a Size back; indexing gives ints."""

import pytest
import torch

import ember

CASES = [
    lambda S: S([2, 3])[1:],
    lambda S: S([2, 3, 4])[::-1],
    lambda S: S([2, 3]) + (4,),
    lambda S: (4,) + S([2, 3]),
    lambda S: S([2, 3]) + S([5]),
    lambda S: S([2, 3]) * 2,
    lambda S: 2 * S([2, 3]),
    lambda S: S([2, 3])[0],
    lambda S: S([2, 3])[-1],
    lambda S: S([]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_size_results_as_torch(case):
    t, e = CASES[case](torch.Size), CASES[case](ember.Size)
    assert type(t).__name__ == type(e).__name__
    assert repr(e).replace("ember", "torch") == repr(t)


def test_size_plus_a_list_is_a_type_error():
    for S in (torch.Size, ember.Size):
        with pytest.raises(TypeError):
            S([2, 3]) + [1]


def test_shape_slices_feed_factories():
    x = ember.zeros(2, 3, 4)
    assert ember.zeros(x.shape[1:]).shape == torch.zeros(torch.zeros(2, 3, 4).shape[1:]).shape
    assert x.shape[1:] == (3, 4) and hash(x.shape[1:]) == hash((3, 4))
