# corpus: exact
"""WGAN-GP's gradient penalty: interpolate real and fake, differentiate the critic's score
with create_graph=True, penalise the per-sample gradient norm, and backpropagate through it."""

import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(critic.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).view_as(p))

real = torch.linspace(-1, 1, 12).view(3, 4)
fake = torch.cos(torch.arange(12, dtype=torch.float32)).view(3, 4)
alpha = torch.tensor([0.25, 0.5, 0.75]).view(3, 1)
interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
scores = critic(interpolates)
gradients = torch.autograd.grad(
    outputs=scores,
    inputs=interpolates,
    grad_outputs=torch.ones_like(scores),
    create_graph=True,
    retain_graph=True,
)[0]
print(gradients.shape, gradients.requires_grad, gradients.grad_fn is not None)
norms = gradients.norm(2, dim=1)
print(norms)
gp2 = torch.autograd.grad(scores.sum(), interpolates, retain_graph=True)[0]
print(torch.allclose(gp2, gradients))
penalty = ((norms - 1) ** 2).mean()
print(f"penalty {penalty.item():.6f}")
loss = scores.mean() + 10.0 * penalty
loss.backward()
w = critic[0].weight.grad
print(w.shape, f"{w.abs().sum().item():.6f}", f"{critic[2].bias.grad.item():.6f}")
print(interpolates.grad is not None)
