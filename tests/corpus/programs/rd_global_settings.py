# corpus: exact
"""Global switches programs set at the top: deterministic algorithms, cudnn flags, matmul
precision, thread counts, CUDA seeding behind is_available branches."""

import torch

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.cuda.manual_seed(0)
print(torch.are_deterministic_algorithms_enabled())
torch.use_deterministic_algorithms(True)
print(torch.are_deterministic_algorithms_enabled())
torch.use_deterministic_algorithms(False)
print(torch.are_deterministic_algorithms_enabled())
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
print(torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
torch.backends.cudnn.benchmark = False
print(torch.backends.cudnn.benchmark)
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("high")
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("highest")
torch.set_num_threads(1)
print(torch.get_num_threads())
if torch.cuda.is_available():
    device = torch.device("cuda")
    print("cuda devices", torch.cuda.device_count())
elif torch.backends.mps.is_available():
    device = torch.device("mps")
else:
    device = torch.device("cpu")
print(device, torch.cuda.is_available(), torch.cuda.device_count())
x = torch.linspace(0, 1, 4).to(device)
print(x @ x, x.device.type)
print(torch.backends.cudnn.is_available() in (True, False))
