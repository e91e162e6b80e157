# corpus: exact
"""More tensor operations from tutorials: repeat, flip, roll, meshgrid, one_hot, bincount,
histc, interpolate, pad, unfold, cdist, triu, searchsorted, clamp and friends."""

import torch
import torch.nn.functional as F

x = torch.arange(6.0).reshape(2, 3)
print(x.repeat(2, 1), x.repeat_interleave(2, dim=1))
print(x.flip(1), torch.roll(x, shifts=1, dims=1), torch.rot90(x))
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
print(gx, gy)
print(F.one_hot(torch.tensor([0, 2, 1]), 4))
print(
    torch.bincount(torch.tensor([0, 1, 1, 3])), torch.histc(torch.tensor([1.0, 2.0, 1.0]), 4, 0, 3)
)
img = torch.arange(16.0).reshape(1, 1, 4, 4)
print(F.interpolate(img, scale_factor=0.5, mode="nearest"))
print(F.interpolate(img, size=(2, 2), mode="bilinear", align_corners=False))
print(F.pad(x, (1, 1), value=-1.0), F.pad(img, (1, 0, 0, 1), mode="reflect").shape)
print(F.unfold(img, kernel_size=2, stride=2).shape, img.unfold(3, 2, 2).shape)
print(F.avg_pool2d(img, 2), F.max_pool2d(img, 2, stride=1).shape)
print(torch.cdist(x, x), F.cosine_similarity(x[0:1], x[1:2]))
print(torch.triu(torch.ones(3, 3), diagonal=1), torch.searchsorted(torch.tensor([1, 3, 5]), 4))
print(torch.clip(x, 1, 4), torch.lerp(x, torch.zeros(2, 3), 0.5), torch.addcmul(x, x, x, value=0.5))
print(torch.flatten(img, start_dim=2).shape, img.squeeze().shape, x.movedim(0, 1).shape)
print(torch.diff(torch.tensor([1, 4, 9, 16])), torch.kron(torch.eye(2), torch.ones(1, 2)))
print(F.normalize(x, dim=1), torch.cross(torch.eye(3)[0], torch.eye(3)[1], dim=0))
print(torch.tensor([3, 1, 2]).argsort(), torch.tensor([[1, 2], [3, 4]]).sum(dim=-1).tolist())
print(torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1])), torch.isnan(x / 0 - x / 0))
print(torch.block_diag(torch.ones(1, 1), 2 * torch.ones(2, 2)))
print(torch.column_stack([torch.arange(2), torch.arange(2)]), torch.hstack([x, x]).shape)
