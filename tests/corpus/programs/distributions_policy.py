# corpus: exact
"""torch.distributions as RL and VAE tutorials use it: a Categorical policy's log-probs
and entropy in a REINFORCE update on fixed actions, Normal log-densities, KL divergence."""

import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal, kl_divergence

policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(policy.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
states = torch.cos(torch.arange(20, dtype=torch.float32)).reshape(5, 4)
actions = torch.tensor([0, 1, 1, 0, 1])
rewards = [1.0, 0.0, 1.0, 1.0, 0.0]
gamma = 0.99
returns, R = [], 0.0
for r in reversed(rewards):
    R = r + gamma * R
    returns.insert(0, R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + 1e-8)
print(returns)
for episode in range(3):
    dist = Categorical(logits=policy(states))
    log_probs = dist.log_prob(actions)
    loss = -(log_probs * returns).sum() - 0.01 * dist.entropy().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"episode {episode}: loss {loss.item():.5f}, entropy {dist.entropy().mean().item():.5f}")
print(dist.probs, dist.probs.sum(dim=1))

p = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
q = Normal(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 1.0]))
print(p.log_prob(torch.tensor([0.0, 0.0])), p.mean, p.stddev)
print(kl_divergence(p, q), p.entropy())
print(Categorical(probs=torch.tensor([0.25, 0.75])).log_prob(torch.tensor(1)))
print(p.sample((3,)).shape, p.rsample().requires_grad)
