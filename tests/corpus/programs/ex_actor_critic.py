# corpus: exact
"""pytorch/examples' actor_critic in the style of its reinforcement_learning folder: a
Policy with an action head and a value head, SavedAction namedtuple, Categorical log-probs,
eps = np.finfo(np.float32).eps.item(), normalized discounted returns, smooth_l1_loss on the
value, torch.stack(...).sum(); and reinforce's finish_episode. The episode replays logged
states and actions from a formula, so no sampling is involved."""

from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])
gamma = 0.99
eps = np.finfo(np.float32).eps.item()
print(type(eps).__name__, eps)


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.action_head = nn.Linear(16, 2)
        self.value_head = nn.Linear(16, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


model = Policy()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.3 * torch.sin(torch.arange(p.numel()) * 1.3 + i).reshape(p.shape))
optimizer = optim.Adam(model.parameters(), lr=3e-2)


def select_action(state, logged_action):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    action = torch.tensor(logged_action)
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def finish_episode():
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


running_reward = 10
for i_episode in range(1, 6):
    state, ep_reward = np.cos(np.arange(4) * 0.5 + i_episode).astype(np.float64), 0
    for t in range(1, 12):
        action = select_action(state, (t * i_episode) % 2)
        state = np.sin(state * 1.1 + action)
        reward = 1.0 if abs(state[0]) < 0.8 else 0.0
        model.rewards.append(reward)
        ep_reward += reward
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    loss = finish_episode()
    print(
        "Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}\tloss {:.5f}".format(
            i_episode, ep_reward, running_reward, loss
        )
    )
probs, value = model(torch.tensor([0.1, -0.2, 0.3, 0.0]))
print(probs, value)
m = Categorical(probs)
print(m.entropy(), m.log_prob(torch.tensor(1)), m.probs.argmax().item())
