# corpus: exact
"""pytorch/examples' super_resolution, shrunk: a sub-pixel CNN (Conv2d + ReLU, then
nn.PixelShuffle) initialised with init.orthogonal_ and init.calculate_gain('relu'), trained
with MSELoss and PSNR via math.log10; F.pixel_shuffle / pixel_unshuffle round trip. The
orthogonal init is checked for orthogonality, then weights come from formulas."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(8, 8, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(8, upscale_factor**2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.pixel_shuffle(self.conv3(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)


torch.manual_seed(123)
model = Net(upscale_factor=2)
print(model)
for name in ["linear", "conv2d", "sigmoid", "tanh", "relu"]:
    print(name, init.calculate_gain(name))
print(init.calculate_gain("leaky_relu", 0.2), init.calculate_gain("selu"))
w = model.conv2.weight.detach().view(8, -1)
gain = init.calculate_gain("relu")
print(w.shape, torch.allclose(w @ w.t(), gain**2 * torch.eye(8), atol=1e-5))
q = torch.empty(3, 5)
init.orthogonal_(q)
print(torch.allclose(q @ q.t(), torch.eye(3), atol=1e-5))

with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.15 * torch.cos(torch.arange(p.numel()) * 0.37 + i).view_as(p))

xs = torch.linspace(0, 1, 8)
hr = torch.stack([torch.sin(3 * (xs[:, None] + xs[None, :] * k)) for k in range(4)]).unsqueeze(1)
lr_img = F.avg_pool2d(hr, 2)
print(hr.shape, lr_img.shape)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(1, 6):
    optimizer.zero_grad()
    loss = criterion(model(lr_img), hr)
    loss.backward()
    optimizer.step()
    print("===> Epoch {} Complete: Avg. Loss: {:.6f}".format(epoch, loss.item()))
with torch.no_grad():
    mse = criterion(model(lr_img), hr)
    psnr = 10 * math.log10(1 / mse.item())
print("===> Avg. PSNR: {:.4f} dB".format(psnr))

x = torch.arange(32.0).view(1, 8, 2, 2)
y = F.pixel_shuffle(x, 2)
print(y.shape, y[0, 0])
print(torch.equal(F.pixel_unshuffle(y, 2), x), nn.PixelUnshuffle(2)(y).shape)
