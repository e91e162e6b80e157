# corpus: exact
"""More LR schedules, composed: CyclicLR, PolynomialLR, SequentialLR, ChainedScheduler."""

import torch
import torch.nn as nn
from torch.optim import lr_scheduler


def fresh(lr=0.1, momentum=0.9):
    return torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=lr, momentum=momentum)


def run(name, opt, sched, steps=8):
    print(name, [round(v, 8) for v in sched.get_last_lr()])
    for step in range(steps):
        opt.step()
        sched.step()
        print(" ", step, [round(v, 8) for v in sched.get_last_lr()])


opt = fresh()
run("lambda", opt, lr_scheduler.LambdaLR(opt, lambda e: 0.95**e), steps=4)
opt = fresh()
run("multistep", opt, lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5), steps=5)
opt = fresh()
run("exponential", opt, lr_scheduler.ExponentialLR(opt, gamma=0.8), steps=4)
opt = fresh()
run("poly", opt, lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0), steps=6)
opt = fresh()
cyc = lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2")
run("cyclic", opt, cyc, steps=9)
print(round(opt.param_groups[0]["momentum"], 6))
opt = fresh()
cyc = lr_scheduler.CyclicLR(opt, 0.001, 0.01, step_size_up=3, mode="exp_range", gamma=0.9)
run("cyclic_exp", opt, cyc, steps=6)

opt = fresh()
warm = lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
decay = lr_scheduler.ExponentialLR(opt, gamma=0.5)
run("sequential", opt, lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[3]), steps=6)

opt = fresh()
a = lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
b = lr_scheduler.ExponentialLR(opt, gamma=0.9)
run("chained", opt, lr_scheduler.ChainedScheduler([a, b]), steps=5)

model = nn.Linear(2, 1)
opt = torch.optim.SGD([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.01}], lr=0.1)
sched = lr_scheduler.LambdaLR(opt, [lambda e: 1.0 / (1 + e), lambda e: 0.5**e])
run("groups", opt, sched, steps=3)
print(sched.state_dict()["last_epoch"], sched.state_dict()["base_lrs"])
