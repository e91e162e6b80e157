# corpus: exact
"""einsum as attention code writes it: multi-head attention with
torch.einsum('bhqd,bhkd->bhqk', ...), a causal mask built with torch.triu and
masked_fill, the weighted sum back, and einsum for bilinear forms, outer products, traces,
batch matrix products and diagonals, checked against matmul / bmm; gradients flow."""

import math

import torch
import torch.nn.functional as F

B, H, T, D = 2, 2, 4, 3
q = torch.sin(torch.arange(B * H * T * D, dtype=torch.float32) * 0.3).view(B, H, T, D)
k = torch.cos(torch.arange(B * H * T * D, dtype=torch.float32) * 0.7).view(B, H, T, D)
v = torch.linspace(-1, 1, B * H * T * D).view(B, H, T, D)
q.requires_grad_()

scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(D)
mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
scores = scores.masked_fill(mask, float("-inf"))
attn = F.softmax(scores, dim=-1)
out = torch.einsum("bhqk,bhkd->bhqd", attn, v)
print(attn[0, 0])
print(out.shape, torch.allclose(out, attn @ v))
ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print(torch.allclose(out, ref, atol=1e-6))
merged = out.transpose(1, 2).reshape(B, T, H * D)
merged2 = torch.einsum("bhtd->bthd", out).reshape(B, T, H * D)
print(torch.equal(merged, merged2))
out.sum().backward()
print(q.grad[0, 0])

a = torch.arange(6.0).view(2, 3)
b = torch.arange(12.0).view(3, 4)
print(torch.einsum("ij,jk->ik", a, b), torch.einsum("ij,jk", a, b).shape)
print(torch.einsum("i,j->ij", torch.arange(3.0), torch.arange(2.0)))
print(
    torch.einsum("ii", torch.arange(9.0).view(3, 3)),
    torch.einsum("ii->i", torch.arange(9.0).view(3, 3)),
)
x = torch.arange(24.0).view(2, 3, 4)
y = torch.arange(40.0).view(2, 4, 5)
print(torch.allclose(torch.einsum("bij,bjk->bik", x, y), torch.bmm(x, y)))
W = torch.ones(2, 3, 3) * 0.5
print(torch.einsum("bi,oij,bj->bo", a, W, a))
print(torch.einsum("...ij->...ji", x).shape, torch.einsum("bij->", x))
print(torch.einsum("i,i->", torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))
