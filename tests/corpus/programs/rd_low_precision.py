# corpus: exact
"""half and bfloat16 on the CPU: arithmetic, printing, item/tolist, finfo."""

import torch

x = torch.linspace(-1, 1, 5)
h = x.half()
b = x.bfloat16()
print(h, h.dtype)
print(b, b.dtype)
print(h * 3 + 1)
print(b * 3 + 1)
print((h + b).dtype, (b + x).dtype, (h + 1).dtype)
print(torch.tensor([1 / 3]).bfloat16().item(), torch.tensor([1 / 3]).half().item())
print(torch.tensor([0.1, 1000.7]).bfloat16().tolist())
print(torch.tensor([65504.0, 70000.0]).half())
fb = torch.finfo(torch.bfloat16)
print(fb.eps, fb.max, fb.tiny, fb.bits, fb.resolution)
fh = torch.finfo(torch.float16)
print(fh.eps, fh.max, fh.min, fh.bits)
print(torch.finfo(torch.float64).eps, torch.finfo().dtype)
print(b.sum(), h.mean(), b.float().sum())
print(torch.arange(4, dtype=torch.bfloat16).sin())
