# corpus: exact
"""Learning PyTorch with Examples, control flow and weight sharing: a DynamicNet that reuses
its e parameter a random number of times (3 to 5) in each forward pass. Python's random is
seeded, so PyTorch and ember take the same path."""

import math
import random

import torch

random.seed(0)


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(0.6))
        self.c = torch.nn.Parameter(torch.tensor(-0.1))
        self.d = torch.nn.Parameter(torch.tensor(-0.06))
        self.e = torch.nn.Parameter(torch.tensor(0.001))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x**2 + self.d * x**3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x**exp
        return y

    def string(self):
        return (
            f"y = {self.a.item():.5f} + {self.b.item():.5f} x + {self.c.item():.5f} x^2 + "
            f"{self.d.item():.5f} x^3 + {self.e.item():.5f} x^4 ? + {self.e.item():.5f} x^5 ?"
        )


x = torch.linspace(-math.pi, math.pi, 1000)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(600):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"Result: {model.string()}")
print(model.e.grad is not None, random.random())
