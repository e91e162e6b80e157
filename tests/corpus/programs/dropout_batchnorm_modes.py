# corpus: exact
"""train() and eval(): BatchNorm's batch statistics and running averages, Dropout's
scaling and identity, and what a model's outputs look like in each mode."""

import torch
import torch.nn as nn

bn = nn.BatchNorm1d(3, momentum=0.1)
x = torch.arange(12.0).reshape(4, 3) ** 1.5
print(bn(x))
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn(x * 2)
print(bn.running_mean, bn.running_var)
bn.eval()
print(bn(x))

bn2 = nn.BatchNorm2d(2, affine=False)
img = torch.linspace(-1, 1, 2 * 2 * 3 * 3).reshape(2, 2, 3, 3)
out = bn2(img)
print(out.mean(dim=(0, 2, 3)).abs().max() < 1e-6, out.shape)
print(bn2.running_var)

drop = nn.Dropout(p=0.5)
drop.eval()
print(drop(torch.ones(5)))
drop.train()
torch.manual_seed(0)
y = drop(torch.ones(1000))
print(sorted(set(y.tolist())), y.shape)
print(nn.functional.dropout(torch.ones(3), p=0.4, training=False))

ln = nn.LayerNorm(3)
print(ln(x))
gn = nn.GroupNorm(1, 2)
print(gn(img).shape)

model = nn.Sequential(
    nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Dropout(0.3), nn.Linear(4, 1)
)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
model.train()
model(x)
model.eval()
print(model(x))
print([m.training for m in model.modules()])
print(model.state_dict()["1.running_mean"])
