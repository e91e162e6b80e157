# corpus: exact
"""Saving and loading a state_dict (model and optimizer) in a temporary directory."""

import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def deterministic_(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape))


net = Net()
deterministic_(net)
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
target = torch.tensor([0, 1, 0, 1, 1, 0])
for _ in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(net(x), target)
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.6f}")

print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
print("Optimizer's state_dict:")
print(list(optimizer.state_dict()))
print(sorted(optimizer.state_dict()["state"]), list(optimizer.state_dict()["state"][0]))
print(optimizer.state_dict()["param_groups"][0]["params"])

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "checkpoint.pt")
    torch.save(
        {
            "epoch": 3,
            "model_state_dict": net.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
            "loss": loss.item(),
        },
        path,
    )
    model = Net()
    opt2 = optim.SGD(model.parameters(), lr=0.5)
    checkpoint = torch.load(path, weights_only=True)
    print(model.load_state_dict(checkpoint["model_state_dict"]))
    opt2.load_state_dict(checkpoint["optimizer_state_dict"])
    print(checkpoint["epoch"], f"{checkpoint['loss']:.6f}", opt2.param_groups[0]["lr"])
    model.eval()
    net.eval()
    print(torch.equal(model(x), net(x)))
    print(model.bn.running_mean, model.bn.num_batches_tracked)
    torch.save(net.fc1.weight, os.path.join(d, "w.pt"))
    print(torch.load(os.path.join(d, "w.pt")).shape)
    missing = nn.Linear(4, 8)
    result = missing.load_state_dict({"weight": torch.zeros(8, 4)}, strict=False)
    print(result.missing_keys, result.unexpected_keys)
