# corpus: exact
"""Checkpoints as the saving-and-loading recipes write them: state_dict round trips through
io.BytesIO, torch.save of a dict with epoch / model / optimizer state / loss, resuming and
continuing training with the same numbers, load_state_dict(strict=False) and its
missing / unexpected keys, map_location, and a list of tensors saved and loaded."""

import io

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def fresh():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.9 + i).view_as(p) * 0.4)
    return net


x = torch.cos(torch.arange(32.0)).view(8, 4)
y = torch.arange(8) % 2
criterion = nn.CrossEntropyLoss()


def train(net, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
    return loss.item()


net = fresh()
optimizer = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
loss = train(net, optimizer, 3)
buffer = io.BytesIO()
torch.save(
    {
        "epoch": 3,
        "model_state_dict": net.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "loss": loss,
    },
    buffer,
)
print(buffer.tell() > 0, f"{loss:.6f}")
continued = train(net, optimizer, 2)

buffer.seek(0)
checkpoint = torch.load(buffer, weights_only=True)
print(sorted(checkpoint.keys()), checkpoint["epoch"], f"{checkpoint['loss']:.6f}")
model = Net()
opt2 = optim.SGD(model.parameters(), lr=0.5, momentum=0.0)
print(model.load_state_dict(checkpoint["model_state_dict"]))
opt2.load_state_dict(checkpoint["optimizer_state_dict"])
print(opt2.param_groups[0]["lr"], opt2.param_groups[0]["momentum"], len(opt2.state))
model.train()
resumed = train(model, opt2, 2)
print(f"{continued:.6f} {resumed:.6f}", abs(continued - resumed) < 1e-6)
print(torch.equal(model.fc1.weight, net.fc1.weight))

f = io.BytesIO()
torch.save(net.state_dict(), f)
f.seek(0)
sd = torch.load(f, map_location=torch.device("cpu"))
print(type(sd).__name__, list(sd.keys()), sd["fc2.bias"].device)
sd["extra.weight"] = torch.zeros(1)
del sd["fc2.bias"]
result = Net().load_state_dict(sd, strict=False)
print(result.missing_keys, result.unexpected_keys)
try:
    Net().load_state_dict(sd)
except RuntimeError as e:
    print(str(e).splitlines()[0])

g = io.BytesIO()
torch.save([torch.arange(3), torch.ones(2, dtype=torch.float64), {"step": torch.tensor(7)}], g)
g.seek(0)
items = torch.load(g)
print(items[0], items[1].dtype, items[2]["step"].item())
