# corpus: exact
"""What tutorials print about the graph: grad_fn of results, next_functions, reprs."""

import torch

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a**3 - b**2
print(Q)
print(Q.grad_fn)
print(f"Gradient function for Q = {Q.grad_fn}")
s = Q.sum()
print(s)
m = a @ b
print(m)
print((a * b).mean())
print(torch.relu(a - 2.5))
print(a.exp().log())
print(a.view(2, 1))
print(torch.cat([a, b]).grad_fn)
print(torch.nn.functional.mse_loss(a, b))
print(s.grad_fn.next_functions)
print(a.grad_fn, a.is_leaf)
