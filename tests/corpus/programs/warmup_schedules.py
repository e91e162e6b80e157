# corpus: exact
"""Warm-up and composite schedules: LinearLR, SequentialLR, ChainedScheduler, CyclicLR,
CosineAnnealingWarmRestarts, PolynomialLR, and a scheduler's state_dict round trip."""

import torch
from torch.optim import lr_scheduler


def optimizer(lr=0.1):
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr, momentum=0.9)


def lrs(opt, sched, n=10):
    out = []
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(round(opt.param_groups[0]["lr"], 7))
    return out


opt = optimizer()
warm = lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
cos = lr_scheduler.CosineAnnealingLR(opt, T_max=7)
print("SequentialLR", lrs(opt, lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[3])))
opt = optimizer()
chain = lr_scheduler.ChainedScheduler(
    [lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=4), lr_scheduler.ExponentialLR(opt, 0.9)]
)
print("ChainedScheduler", lrs(opt, chain))
opt = optimizer()
print("CyclicLR", lrs(opt, lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3), 12))
opt = optimizer()
wr = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.001)
print("WarmRestarts", lrs(opt, wr, 12))
opt = optimizer()
print("PolynomialLR", lrs(opt, lr_scheduler.PolynomialLR(opt, total_iters=8, power=2.0)))
opt = optimizer()
print("MultiplicativeLR", lrs(opt, lr_scheduler.MultiplicativeLR(opt, lambda e: 0.95), 5))

opt = optimizer()
sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
lrs(opt, sched, 5)
state = sched.state_dict()
opt2 = optimizer()
sched2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
sched2.load_state_dict(state)
print(state["last_epoch"], sched2.last_epoch, sched2.get_last_lr())
