# corpus: exact
"""Saving a whole model with torch.save(model) and loading it back (weights_only=False),
and the safe_globals allow-list for weights_only loads."""

import os
import tempfile

import torch
import torch.nn as nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))

    def forward(self, x):
        return self.body(x)


model = TinyNet()
with torch.no_grad():
    for p in model.parameters():
        p.fill_(0.1)
x = torch.tensor([[1.0, 2.0, 3.0]])
print(model(x))

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model.pt")
    torch.save(model, path)
    loaded = torch.load(path, weights_only=False)
    loaded.eval()
    print(type(loaded).__name__, loaded)
    print(loaded(x))
    print(torch.equal(loaded(x), model(x)))

    torch.save({"model": model.state_dict(), "extra": [1, 2, 3]}, path)
    print(torch.load(path, weights_only=True)["extra"])

    torch.serialization.add_safe_globals([TinyNet])
    cfg_path = os.path.join(d, "whole.pt")
    torch.save(model, cfg_path)
    with torch.serialization.safe_globals([TinyNet, nn.Sequential, nn.Linear, nn.Tanh]):
        try:
            again = torch.load(cfg_path, weights_only=True)
            print("loaded with safe_globals:", type(again).__name__)
        except Exception as e:
            print("weights_only refused:", type(e).__name__)
