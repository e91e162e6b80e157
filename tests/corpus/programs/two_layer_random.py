# corpus: trajectory rtol=1.0 atol=0.5
"""The classic two-layer network on random data (torch.randn inputs and weights),
trained by hand and then with nn and Adam: only the loss trajectory can compare."""

import torch

torch.manual_seed(0)
N, D_in, H, D_out = 64, 100, 32, 10
x = torch.randn(N, D_in)
y = torch.randn(N, D_out)
w1 = torch.randn(D_in, H, requires_grad=True)
w2 = torch.randn(H, D_out, requires_grad=True)
learning_rate = 1e-6
for t in range(100):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    if t % 25 == 24:
        print(t, f"{loss.item():.1f}")
    loss.backward()
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()

model = torch.nn.Sequential(torch.nn.Linear(D_in, H), torch.nn.ReLU(), torch.nn.Linear(H, D_out))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for t in range(200):
    loss = loss_fn(model(x), y)
    if t % 50 == 49:
        print("nn", t, f"{loss.item():.2f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(y.shape, model(x).shape)
