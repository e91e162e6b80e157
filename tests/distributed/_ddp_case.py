"""The small DDP case the nccl tests and the 2-rank nccl worker train: a 4-8-3 tanh net and
five SGD-momentum steps (lr 0.1, momentum 0.9) of mean squared error on fixed batches."""

from __future__ import annotations

import numpy as np

import ember
from ember import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(ember.tanh(self.fc1(x)))


def train(model, steps: int = 5, compiled: bool = False, rank: int | None = None):
    """``(the parameters on the host, the step that ran)`` after ``steps`` steps on batches of 8
    (with ``rank``, that rank's half of each: 4 rows), on the model's GPU."""
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    run = ember.compile(step) if compiled else step
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = rng.standard_normal((8, 4), np.float32)
        y = rng.standard_normal((8, 3), np.float32)
        if rank is not None:
            x, y = x[4 * rank : 4 * rank + 4], y[4 * rank : 4 * rank + 4]
        run(ember.tensor(x).to("cuda"), ember.tensor(y).to("cuda"))
    return [p.detach().cpu().numpy() for p in model.parameters()], run
