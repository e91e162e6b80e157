# corpus: exact
"""Stochastic weight averaging: AveragedModel, SWALR and update_bn on a small regression."""

import torch
import torch.nn as nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn

model = nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.3 * torch.sin(torch.arange(p.numel()) + i).reshape(p.shape))

X = torch.stack([torch.linspace(-1, 1, 16), torch.cos(torch.linspace(0, 3, 16))], 1)
y = (X[:, :1] * 2 - X[:, 1:]).clone()
loader = [(X[i : i + 4], y[i : i + 4]) for i in range(0, 16, 4)]

swa_model = AveragedModel(model)
print(type(swa_model.module).__name__, swa_model.n_averaged)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=2, anneal_strategy="linear")
loss_fn = nn.MSELoss()
for epoch in range(6):
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    if epoch >= 3:
        swa_model.update_parameters(model)
        swa_sched.step()
    else:
        sched.step()
    print(epoch, round(loss.item(), 6), [round(v, 6) for v in swa_sched.get_last_lr()])

print(swa_model.n_averaged)
print(swa_model.module[0].weight)
update_bn(loader, swa_model)
print(swa_model.module[1].running_mean)
print(swa_model.module[1].running_var)
swa_model.eval()
print(swa_model(X[:3]))

ema = AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
for _ in range(3):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1)
    ema.update_parameters(model)
print(ema.module[3].bias, ema.n_averaged)
print([k for k in swa_model.state_dict().keys()][:3])
