# corpus: exact
"""GroupNorm, PixelShuffle, Upsample, Flatten/Unflatten in a tiny upsampling network."""

import torch
import torch.nn as nn

x = torch.sin(torch.arange(64.0) * 0.4).reshape(2, 4, 2, 4)
gn = nn.GroupNorm(2, 4)
print(gn, gn.weight.shape)
print(gn(x)[0, :, 0])
gn_plain = nn.GroupNorm(4, 4, eps=1e-3, affine=False)
print(gn_plain(x)[1, 1])
print([n for n, _ in gn_plain.named_parameters()])

ps = nn.PixelShuffle(2)
y = ps(x)
print(ps, y.shape)
print(y[0, 0])
print(torch.equal(nn.PixelUnshuffle(2)(y), x))

for mode in ["nearest", "bilinear", "bicubic"]:
    kw = {} if mode == "nearest" else {"align_corners": False}
    up = nn.Upsample(scale_factor=2, mode=mode, **kw)
    print(up)
    print(up(x[:1, :1])[0, 0, :2])
print(nn.Upsample(size=(3, 5), mode="bilinear", align_corners=True)(x[:1, :1])[0, 0])

flat = nn.Flatten()
print(flat, flat(x).shape, nn.Flatten(0, 2)(x).shape)
unflat = nn.Unflatten(1, (2, 16))
print(unflat, unflat(flat(x)).shape)

net = nn.Sequential(
    nn.Conv2d(4, 8, 3, padding=1),
    nn.GroupNorm(4, 8),
    nn.ReLU(),
    nn.PixelShuffle(2),
    nn.Flatten(),
    nn.Linear(2 * 4 * 8, 3),
    nn.Unflatten(1, (3, 1)),
)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(0.1 * torch.cos(torch.arange(p.numel()) * 0.5 + i).reshape(p.shape))
print(net)
out = net(x)
print(out.shape)
print(out)
out.sum().backward()
print(net[1].weight.grad)
