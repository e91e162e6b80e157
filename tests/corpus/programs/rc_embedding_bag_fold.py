# corpus: exact
"""EmbeddingBag with offsets, Bilinear, and Unfold/Fold patches round-tripping an image."""

import torch
import torch.nn as nn
import torch.nn.functional as F

bag = nn.EmbeddingBag(10, 3, mode="mean")
with torch.no_grad():
    bag.weight.copy_(torch.sin(torch.arange(30.0) * 0.3).reshape(10, 3))
text = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 4])
print(bag)
print(bag(text, offsets))
bag_sum = nn.EmbeddingBag.from_pretrained(bag.weight.detach(), mode="sum")
print(bag_sum(torch.tensor([[0, 1], [2, 3]])))
bag_max = nn.EmbeddingBag(10, 3, mode="max")
with torch.no_grad():
    bag_max.weight.copy_(bag.weight)
print(bag_max(text, offsets))
out = bag(text, offsets, per_sample_weights=None)
out.sum().backward()
print(bag.weight.grad[:6])
print(F.embedding_bag(text, bag.weight, offsets, mode="sum"))

bil = nn.Bilinear(2, 3, 2)
with torch.no_grad():
    bil.weight.copy_(torch.linspace(-0.5, 0.5, 12).reshape(2, 2, 3))
    bil.bias.copy_(torch.tensor([0.1, -0.2]))
print(bil)
x1 = torch.linspace(0, 1, 4).reshape(2, 2)
x2 = torch.cos(torch.arange(6.0)).reshape(2, 3)
print(bil(x1, x2))
print(F.bilinear(x1, x2, bil.weight))

img = torch.arange(32.0).reshape(1, 2, 4, 4)
unfold = nn.Unfold(kernel_size=2, stride=2)
patches = unfold(img)
print(unfold, patches.shape)
print(patches)
fold = nn.Fold(output_size=(4, 4), kernel_size=2, stride=2)
print(fold, torch.equal(fold(patches), img))
over = nn.Unfold(kernel_size=(2, 3), padding=1, dilation=1, stride=1)(img)
print(over.shape, over[0, :3, :5])
ones = torch.ones(1, 1, 4, 4)
counts = F.fold(F.unfold(ones, 3, padding=1), (4, 4), 3, padding=1)
print(counts)
