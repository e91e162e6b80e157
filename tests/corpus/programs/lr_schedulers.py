# corpus: exact
"""Learning-rate schedules a tutorial uses, printed epoch by epoch."""

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    MultiStepLR,
    OneCycleLR,
    ReduceLROnPlateau,
    StepLR,
)


def fresh(lr=0.1):
    model = nn.Linear(2, 1)
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def trace(make, epochs=8, lr=0.1):
    opt = fresh(lr)
    sched = make(opt)
    lrs = []
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(round(sched.get_last_lr()[0], 8))
    return lrs


print("StepLR", trace(lambda o: StepLR(o, step_size=3, gamma=0.5)))
print("MultiStepLR", trace(lambda o: MultiStepLR(o, milestones=[2, 5], gamma=0.1)))
print("ExponentialLR", trace(lambda o: ExponentialLR(o, gamma=0.9)))
print("CosineAnnealingLR", trace(lambda o: CosineAnnealingLR(o, T_max=8, eta_min=0.001)))
print("LambdaLR", trace(lambda o: LambdaLR(o, lr_lambda=lambda e: 1 / (e + 1))))
print("OneCycleLR", trace(lambda o: OneCycleLR(o, max_lr=1.0, total_steps=10), epochs=10))

opt = fresh()
onecycle = OneCycleLR(opt, max_lr=0.5, steps_per_epoch=4, epochs=2)
moms = []
for _ in range(8):
    opt.step()
    onecycle.step()
    moms.append(round(opt.param_groups[0]["momentum"], 6))
print("OneCycle momentum", moms)

opt = fresh()
plateau = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
for epoch, val_loss in enumerate([1.0, 0.9, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8]):
    opt.step()
    plateau.step(val_loss)
    print(epoch, val_loss, opt.param_groups[0]["lr"])

opt = fresh()
sched = StepLR(opt, step_size=2, gamma=0.1)
print(sched.state_dict()["step_size"], sched.state_dict()["last_epoch"], sched.get_last_lr())
