# corpus: exact
"""The NumPy bridge: tensors and arrays that share memory, and ones that copy."""

import numpy as np
import torch

t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")
print(t.dtype)
a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = torch.as_tensor(a)
a[0, 0] = 9
print(b)
c = torch.tensor(a)
a[0, 1] = -9
print(c)
print(torch.from_numpy(np.array([1, 2], dtype=np.int32)).dtype)
print(type(torch.arange(3).tolist()), torch.arange(3).tolist())
print(torch.tensor(np.float64(2.5)), np.asarray(torch.arange(3.0)).dtype)
w = torch.tensor([1.0], requires_grad=True)
print(w.detach().numpy())
