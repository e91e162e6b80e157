# corpus: exact
"""pytorch/examples' regression: fit a polynomial with polynomial features built by
torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1), a single Linear layer, manual
SGD on param.data, and a poly_desc string. The batches come from a formula."""

from __future__ import print_function

from itertools import count

import torch
import torch.nn.functional as F

POLY_DEGREE = 4
W_target = torch.linspace(-1, 1, POLY_DEGREE).unsqueeze(1) * 2
b_target = torch.tensor([0.7])


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = "y = "
    for i, w in enumerate(W):
        result += "{:+.2f} x^{} ".format(w, i + 1)
    result += "{:+.2f}".format(b[0])
    return result


def get_batch(batch_idx, batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.sin(torch.arange(batch_size) * 1.7 + batch_idx * 0.3)
    x = make_features(random)
    y = f(x)
    return x, y


fc = torch.nn.Linear(W_target.size(0), 1)
torch.nn.init.constant_(fc.weight, 0.1)
torch.nn.init.zeros_(fc.bias)

for batch_idx in count(1):
    batch_x, batch_y = get_batch(batch_idx)
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if batch_idx % 100 == 0:
        print("batch {} loss {:.6f}".format(batch_idx, loss))
    if loss < 1e-3 or batch_idx >= 400:
        break

print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))
print(make_features(torch.tensor([1.0, 2.0])))
