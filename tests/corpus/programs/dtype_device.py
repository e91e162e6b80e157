# corpus: exact
"""Dtypes, casts, type promotion and moving tensors between devices."""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")
x = torch.tensor([1.7, -2.5, 3.2])
print(x.dtype, x.int(), x.long().dtype, x.double().dtype)
print(x.to(torch.float16), x.half().float())
print(x.to(torch.bfloat16))
print(x.to(torch.int64), x.bool())
print(x.to(device).device, x.to(device=device, dtype=torch.float64).dtype)
print(x.cpu().device, x.type(torch.float64).dtype)
print(torch.tensor([1, 2]).dtype, torch.tensor([1.0]).dtype, torch.tensor([True]).dtype)
print((torch.tensor([1, 2]) + 1.5).dtype)
print((torch.tensor([1], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8)).dtype)
print(torch.promote_types(torch.int32, torch.float16))
print(torch.get_default_dtype())
print(torch.finfo(torch.float32).eps, torch.iinfo(torch.int8).max)
print(x.is_floating_point(), torch.tensor([1]).is_floating_point())
d = torch.device("cpu")
print(d, d.type, torch.zeros(2, device=d).device)
y = x.new_zeros(2, 2)
print(y.dtype, y.device, x.new_tensor([5, 6]).dtype)
print(torch.tensor([300], dtype=torch.int32).to(torch.uint8))
print(torch.tensor([2.5, 3.5, -0.5]).round())
