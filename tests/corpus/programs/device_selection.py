# corpus: exact
"""The device-selection boilerplate of tutorials, and moving a model and data to it."""

import torch
from torch import nn

device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
if torch.cuda.is_available():
    dev = torch.device("cuda")
elif torch.backends.mps.is_available():
    dev = torch.device("mps")
else:
    dev = torch.device("cpu")
print(dev, torch.cuda.device_count(), torch.backends.mps.is_built())
print(torch.cuda.is_available(), torch.accelerator.device_count())
use_cuda = torch.cuda.is_available()
kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
print(kwargs)

model = nn.Linear(3, 2).to(device)
print(next(model.parameters()).device, next(model.parameters()).is_cuda)
x = torch.ones(4, 3, device=device)
print(x.device, model(x).device, model(x).shape)
y = torch.zeros(2).to(dev, non_blocking=True)
print(y.device, y.cpu().numpy())
print(torch.device("cuda:0"), torch.device("cuda", 1).index, torch.device("cpu").index)
torch.manual_seed(0)
if torch.cuda.is_available():
    torch.cuda.manual_seed_all(0)
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
print(torch.backends.cudnn.deterministic)
