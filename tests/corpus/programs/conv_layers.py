# corpus: exact
"""Convolution-family layers and their output shapes (a DCGAN-style generator and
discriminator), with deterministic weights so the values compare too."""

import torch
import torch.nn as nn

nz, ngf, ndf = 4, 4, 4
netG = nn.Sequential(
    nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
    nn.BatchNorm2d(ngf * 2),
    nn.ReLU(True),
    nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
    nn.BatchNorm2d(ngf),
    nn.ReLU(True),
    nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),
    nn.Tanh(),
)
netD = nn.Sequential(
    nn.Conv2d(1, ndf, 4, 2, 1, bias=False),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
    nn.BatchNorm2d(ndf * 2),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
    nn.Sigmoid(),
)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        with torch.no_grad():
            w = m.weight
            w.copy_(torch.sin(torch.arange(w.numel()) * 0.3).reshape(w.shape) * 0.1)
    elif classname.find("BatchNorm") != -1:
        nn.init.constant_(m.weight, 1.0)
        nn.init.constant_(m.bias, 0)


netG.apply(weights_init)
netD.apply(weights_init)
print(netG)
noise = torch.cos(torch.arange(2 * nz, dtype=torch.float32)).reshape(2, nz, 1, 1)
fake = netG(noise)
print(fake.shape, fake[0, 0, :2, :4])
out = netD(fake).view(-1)
print(out.shape, out)
out.sum().backward()
print(netG[0].weight.grad.abs().sum())

x = torch.linspace(-1, 1, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8)
layers = [
    nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3),
    nn.Conv2d(3, 2, (3, 5), dilation=2, padding="same"),
    nn.Conv1d(3, 2, 3),
    nn.MaxPool2d(3, stride=2, padding=1),
    nn.AvgPool2d(2, ceil_mode=True),
    nn.AdaptiveAvgPool2d(1),
    nn.AdaptiveMaxPool2d((2, 3)),
    nn.Upsample(scale_factor=2, mode="nearest"),
    nn.PixelShuffle(1),
]
for layer in layers:
    for p in layer.parameters():
        nn.init.constant_(p, 0.1)
    inp = x[:, :, 0] if isinstance(layer, nn.Conv1d) else x
    print(layer, tuple(layer(inp).shape), f"{layer(inp).pow(2).sum().item():.5f}")
