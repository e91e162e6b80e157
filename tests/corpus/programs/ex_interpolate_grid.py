# corpus: exact
"""Resampling as vision code uses it: F.interpolate (nearest, bilinear with and without
align_corners, bicubic, linear on 1-D signals, scale_factor and size), nn.Upsample, the
gradient through bilinear upsampling, F.affine_grid + F.grid_sample for an identity and a
shifted transform, and adaptive pooling to a fixed size."""

import torch
import torch.nn as nn
import torch.nn.functional as F

img = torch.arange(16.0).view(1, 1, 4, 4)
print(F.interpolate(img, scale_factor=0.5, mode="nearest"))
print(F.interpolate(img[:, :, :2, :2], scale_factor=2, mode="nearest"))
print(F.interpolate(img[:, :, :2, :2], size=(3, 3), mode="bilinear", align_corners=False))
print(F.interpolate(img[:, :, :2, :2], size=(3, 3), mode="bilinear", align_corners=True))
print(F.interpolate(img, size=(2, 3), mode="bicubic", align_corners=False))
sig = torch.tensor([[[0.0, 1.0, 4.0, 9.0]]])
print(F.interpolate(sig, scale_factor=2, mode="linear"), F.interpolate(sig, size=3, mode="nearest"))
up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
print(up, up(img[:, :, :2, :2]).shape)

x = torch.linspace(-1, 1, 9).view(1, 1, 3, 3).requires_grad_()
y = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
(y * torch.arange(36.0).view(1, 1, 6, 6)).sum().backward()
print(x.grad)

theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
grid = F.affine_grid(theta, size=(1, 1, 4, 4), align_corners=False)
print(grid.shape, grid[0, 0])
same = F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
print(torch.allclose(same, img, atol=1e-5))
shift = torch.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]])
grid = F.affine_grid(shift, size=(1, 1, 4, 4), align_corners=False)
print(F.grid_sample(img, grid, align_corners=False))
print(F.grid_sample(img, grid, mode="nearest", padding_mode="border", align_corners=False))
scale = torch.tensor([[[0.5, 0.0, 0.0], [0.0, 0.5, 0.0]]])
grid = F.affine_grid(scale, size=(1, 1, 2, 2), align_corners=True)
print(F.grid_sample(img, grid, align_corners=True))
print(F.adaptive_avg_pool2d(img, (2, 2)), nn.AdaptiveMaxPool2d(1)(img).view(-1))
print(F.adaptive_avg_pool2d(torch.arange(25.0).view(1, 1, 5, 5), 3))
