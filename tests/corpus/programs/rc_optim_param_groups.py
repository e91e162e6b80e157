# corpus: exact
"""Parameter groups: add_param_group, per-group options, a custom LRScheduler subclass,
optimizer state dicts round-tripped, ReduceLROnPlateau with thresholds, cooldown and min_lr."""

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau

backbone = nn.Linear(3, 4)
head = nn.Linear(4, 1)
for i, p in enumerate(list(backbone.parameters()) + list(head.parameters())):
    with torch.no_grad():
        p.copy_(0.2 * torch.cos(torch.arange(p.numel()) * 0.9 + i).reshape(p.shape))

opt = torch.optim.Adam(backbone.parameters(), lr=0.01, betas=(0.8, 0.99))
opt.add_param_group({"params": head.parameters(), "lr": 0.1, "weight_decay": 0.01})
print(len(opt.param_groups), [g["lr"] for g in opt.param_groups])
print(sorted(opt.param_groups[1].keys()))
print(opt.param_groups[1]["betas"], opt.param_groups[1]["weight_decay"])


class WarmupThenHalve(LRScheduler):
    def __init__(self, optimizer, warmup, last_epoch=-1):
        self.warmup = warmup
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch < self.warmup:
            return [base * (self.last_epoch + 1) / self.warmup for base in self.base_lrs]
        return [group["lr"] * 0.5 for group in self.optimizer.param_groups]


sched = WarmupThenHalve(opt, warmup=3)
X = torch.stack([torch.linspace(-1, 1, 8), torch.sin(torch.arange(8.0)), torch.ones(8)], 1)
y = X.sum(1, keepdim=True)
for step in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(head(torch.relu(backbone(X))), y)
    loss.backward()
    opt.step()
    sched.step()
    print(step, round(loss.item(), 6), [round(v, 6) for v in sched.get_last_lr()])

sd = opt.state_dict()
print(list(sd.keys()), list(sd["state"].keys()), sd["param_groups"][1]["params"])
print(sorted(sd["state"][0].keys()), sd["state"][2]["step"])
opt2 = torch.optim.Adam(list(backbone.parameters()) + list(head.parameters()), lr=1.0)
try:
    opt2.load_state_dict(sd)
except ValueError as e:
    print("ValueError:", e)
opt3 = torch.optim.Adam(backbone.parameters(), lr=1.0)
opt3.add_param_group({"params": head.parameters()})
opt3.load_state_dict(sd)
print([g["lr"] for g in opt3.param_groups], opt3.state[head.bias]["exp_avg"])
print(sched.state_dict()["last_epoch"], sched.state_dict()["_step_count"], sched.base_lrs)
opt.zero_grad(set_to_none=True)
print(backbone.weight.grad, head.bias.grad)

for mode, kw in [
    ("min", dict(threshold=0.1, threshold_mode="abs", cooldown=1, min_lr=0.02)),
    ("max", dict(factor=0.2, patience=0, threshold=0.01)),
]:
    o = torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)
    plateau = ReduceLROnPlateau(o, mode=mode, **kw)
    trace = []
    for metric in [1.0, 0.95, 0.93, 0.92, 0.7, 0.69, 0.68, 0.68, 0.68]:
        plateau.step(metric)
        trace.append(round(o.param_groups[0]["lr"], 6))
    print(mode, trace, plateau.num_bad_epochs, plateau.best)
