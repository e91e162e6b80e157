# corpus: exact
"""Type promotion tables (result_type, promote_types, can_cast) and the broadcasting
errors programs hit."""

import torch

i = torch.tensor([1, 2])
f = torch.tensor([1.0, 2.0])
print(torch.result_type(i, 2.5), torch.result_type(i, 2), torch.result_type(f, 2))
print(torch.result_type(torch.tensor([1], dtype=torch.int8), torch.tensor(300)))
print(torch.result_type(torch.tensor([1], dtype=torch.uint8), -1))
print(torch.result_type(torch.tensor(1.0, dtype=torch.float64), f))
print(torch.result_type(True, i), torch.result_type(torch.tensor([True]), 1.5))
for p, q in [
    (torch.int8, torch.uint8),
    (torch.int64, torch.float16),
    (torch.bool, torch.int32),
    (torch.bfloat16, torch.float16),
    (torch.float32, torch.float64),
    (torch.int16, torch.int32),
]:
    print(p, q, torch.promote_types(p, q))
print(torch.can_cast(torch.float64, torch.float32), torch.can_cast(torch.float32, torch.int32))
print(torch.can_cast(torch.int32, torch.float16), torch.can_cast(torch.bool, torch.uint8))
print(torch.can_cast(torch.int64, torch.bool), torch.can_cast(torch.uint8, torch.int8))
print((i + f).dtype, (i * True).dtype, (torch.tensor([True]) + torch.tensor([True])).dtype)
print((torch.tensor([1], dtype=torch.int16) + torch.tensor(100000)).dtype)
print((torch.tensor([1.0], dtype=torch.float16) + torch.tensor(1.0, dtype=torch.float64)).dtype)
try:
    torch.ones(2, 3) + torch.ones(4)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
try:
    torch.ones(2, 3) * torch.ones(3, 2)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
try:
    torch.ones(2, 3).expand(4, 3)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
try:
    torch.broadcast_shapes((2, 3), (3, 2))
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
print(torch.broadcast_shapes((2, 1), (1, 3)), torch.broadcast_tensors(i, f.view(2, 1))[0].shape)
t = torch.zeros(3, dtype=torch.int32)
try:
    t += 1.5
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
