# corpus: exact
"""A 1-D GAN: a generator learns to map noise to samples of N(3, 0.5) against a
discriminator. Noise and data come from formulas so the run is deterministic."""

import torch
import torch.nn as nn


def real_batch(step, n=32):
    u = torch.linspace(0.02, 0.98, n)
    z = torch.erfinv(2 * u - 1) * (2**0.5)  # normal quantiles
    return (3.0 + 0.5 * torch.roll(z, step % n)).unsqueeze(1)


def noise(step, n=32):
    return torch.sin(torch.arange(n, dtype=torch.float32) * 1.7 + step).unsqueeze(1)


G = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
D = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
for k, net in enumerate((G, D)):
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(0.5 * torch.cos(torch.arange(p.numel()) * (0.8 + k) + i).reshape(p.shape))

criterion = nn.BCELoss()
opt_g = torch.optim.Adam(G.parameters(), lr=0.01, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=0.01, betas=(0.5, 0.999))
ones, zeros = torch.ones(32, 1), torch.zeros(32, 1)
for step in range(150):
    real = real_batch(step)
    fake = G(noise(step))
    d_loss = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()

    g_loss = criterion(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if step % 30 == 29:
        print(f"step {step + 1}: D loss {d_loss.item():.4f}, G loss {g_loss.item():.4f}")

with torch.no_grad():
    samples = G(torch.linspace(-1, 1, 200).unsqueeze(1))
print(f"generated mean {samples.mean().item():.4f}, std {samples.std().item():.4f}")
