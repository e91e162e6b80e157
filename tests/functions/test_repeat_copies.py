"""``repeat`` always returns new memory, as PyTorch's does: writing into the result changes
neither the input nor the other tiles (a tiled size-1 dimension made a broadcast view)."""

import numpy as np
import pytest
import torch

import ember

CASES = [((3, 4), (2, 1, 1)), ((2, 1), (1, 3)), ((1, 1), (2, 2)), ((2, 3), (2, 2)), ((3,), (1,))]


@pytest.mark.parametrize("shape,reps", CASES, ids=[f"{s}x{r}" for s, r in CASES])
def test_writing_into_a_repeat_changes_only_that_element(shape, reps):
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    results = []
    for x in (torch.from_numpy(base.copy()), ember.tensor(base)):
        y = x.repeat(*reps)
        y.view(-1)[0] = 100.0
        results.append((y.numpy().copy(), x.numpy().copy()))
    (ty, tx), (ey, ex) = results
    np.testing.assert_array_equal(ey, ty)
    np.testing.assert_array_equal(ex, tx)
