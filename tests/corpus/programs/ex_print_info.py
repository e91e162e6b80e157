# corpus: exact
"""Printing and numeric limits: torch.set_printoptions (precision, sci_mode, linewidth,
threshold/edgeitems, profile), tensors of several dtypes and magnitudes, torch.finfo and
torch.iinfo fields, and np.finfo(np.float32).eps next to torch.finfo(torch.float32).eps."""

import numpy as np
import torch

x = torch.tensor([1.0 / 3, 2.0e-5, 12345.678, -0.5])
print(x)
torch.set_printoptions(precision=2)
print(x)
torch.set_printoptions(sci_mode=False)
print(x)
torch.set_printoptions(precision=6, sci_mode=True)
print(x[:2])
torch.set_printoptions(profile="default")
print(x)
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(10), torch.arange(20.0).view(4, 5))
torch.set_printoptions(profile="full")
print(torch.arange(12))
torch.set_printoptions(profile="default", linewidth=40)
print(torch.linspace(0, 1, 9))
torch.set_printoptions(profile="default")

print(torch.tensor([1, 2, 3], dtype=torch.int8), torch.tensor([True, False]))
print(torch.tensor([1.5, 2.5], dtype=torch.float64), torch.tensor([0.1], dtype=torch.float16))
print(torch.tensor([[1e10, 1.0], [1e-10, 0.0]]), torch.tensor([float("inf"), float("nan"), 1.0]))
print(torch.zeros(2, 0), torch.tensor(3.0), torch.tensor([100.0, 200.0]))

for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
    fi = torch.finfo(dt)
    print(dt, fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.resolution, fi.dtype)
for dt in [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]:
    ii = torch.iinfo(dt)
    print(dt, ii.bits, ii.min, ii.max, ii.dtype)
print(torch.finfo().eps == torch.finfo(torch.get_default_dtype()).eps)
eps = np.finfo(np.float32).eps.item()
print(eps == torch.finfo(torch.float32).eps, type(torch.finfo(torch.float32).eps).__name__)
print(torch.tensor(1.0) + torch.finfo(torch.float32).eps > 1.0)
print(torch.finfo(torch.float32).max * 2 == float("inf"))
print(torch.clamp(torch.tensor([1e39]), max=torch.finfo(torch.float32).max))
