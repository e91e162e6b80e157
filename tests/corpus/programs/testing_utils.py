# corpus: exact
"""torch.testing.assert_close as recipes use it to check results, and what it reports."""

import torch
from torch.testing import assert_close

a = torch.tensor([1.0, 2.0, 3.0])
assert_close(a, a + 1e-7)
print("close")
assert_close(torch.tensor([1, 2]), torch.tensor([1, 2]))
try:
    assert_close(a, a + 0.1)
except AssertionError as e:
    print("AssertionError:", str(e).splitlines()[0])
try:
    assert_close(a, a.double())
except AssertionError as e:
    print("dtype mismatch:", str(e).splitlines()[0])
assert_close(a, a.double(), check_dtype=False)
assert_close(a, a * 1.01, rtol=0.02, atol=0)
print(torch.testing.make_tensor((2, 3), dtype=torch.float32, device="cpu", low=0, high=1).shape)
