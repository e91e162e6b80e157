# corpus: exact
"""Recipes on checkpoints: several models and optimizers in one file, warm-starting a
different model with strict=False and renamed keys, loading for inference, and saving
to an in-memory buffer."""

import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim


class NetA(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class NetB(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        return self.out(torch.relu(self.fc1(x)))


def fill(model, k):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel()) * (0.3 + k) + i).reshape(p.shape))


netA, netB = NetA(), NetB()
fill(netA, 0)
fill(netB, 1)
optA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
optB = optim.Adam(netB.parameters(), lr=0.01)
x = torch.linspace(-1, 1, 8).reshape(2, 4)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model.tar")
    torch.save(
        {
            "modelA_state_dict": netA.state_dict(),
            "modelB_state_dict": netB.state_dict(),
            "optimizerA_state_dict": optA.state_dict(),
            "optimizerB_state_dict": optB.state_dict(),
        },
        path,
    )
    modelA, modelB = NetA(), NetB()
    checkpoint = torch.load(path, weights_only=True)
    modelA.load_state_dict(checkpoint["modelA_state_dict"])
    modelB.load_state_dict(checkpoint["modelB_state_dict"])
    print(sorted(checkpoint), checkpoint["optimizerB_state_dict"]["param_groups"][0]["lr"])
    modelA.eval()
    modelB.eval()
    print(torch.equal(modelA(x), netA(x)), torch.equal(modelB(x), netB(x)))

    torch.save(netA.state_dict(), path)
    warm = NetB()
    fill(warm, 2)
    result = warm.load_state_dict(torch.load(path, weights_only=True), strict=False)
    print(result)
    print(torch.equal(warm.fc1.weight, netA.fc1.weight), warm.out.weight[0])
    renamed = {k.replace("fc2", "out"): v for k, v in netA.state_dict().items()}
    try:
        warm.load_state_dict(renamed)
    except RuntimeError as e:
        print("RuntimeError:", str(e).splitlines()[0])

buffer = io.BytesIO()
torch.save(netA.state_dict(), buffer)
buffer.seek(0)
state = torch.load(buffer, weights_only=True)
print(list(state), state["fc2.bias"])
print(netA.state_dict()["fc1.weight"].data_ptr() == netA.fc1.weight.data_ptr())
