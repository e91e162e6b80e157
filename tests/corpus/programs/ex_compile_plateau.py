# corpus: exact
"""What recent tutorials add to a training loop: torch.compile(model) (same numbers as
eager), ReduceLROnPlateau on a validation loss, OneCycleLR and CosineAnnealingLR stepping per
batch, optimizer.param_groups[0]['lr'] read back, and torch.autocast on the CPU in bfloat16
left off (enabled=False) as scripts do when no accelerator is present."""

import torch
import torch.nn as nn


def make():
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(0.4 * torch.sin(torch.arange(p.numel()) * 0.83 + i).view_as(p))
    return m


x = torch.cos(torch.arange(64.0) * 0.37).view(16, 4)
y = (x[:, :1] * 0.5 - x[:, 1:2] ** 2).detach()
eager = make()
compiled = torch.compile(make())
print(torch.allclose(eager(x), compiled(x), atol=1e-6))

model = make()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
for epoch in range(6):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False):
        loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    val = 1.0 if epoch >= 2 else 2.0 - epoch
    plateau.step(val)
    print(epoch, f"{loss.item():.6f}", opt.param_groups[0]["lr"])

opt = torch.optim.Adam(make().parameters(), lr=1e-3)
onecycle = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=8)
lrs = []
for step in range(8):
    opt.step()
    onecycle.step()
    lrs.append(round(opt.param_groups[0]["lr"], 6))
print(lrs)
opt = torch.optim.SGD(make().parameters(), lr=0.1, momentum=0.9)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
out = []
for step in range(6):
    opt.step()
    cosine.step()
    out.append(round(cosine.get_last_lr()[0], 6))
print(out)
