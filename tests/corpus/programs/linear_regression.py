# corpus: exact
"""Linear regression with nn.Linear, MSELoss and SGD on data from a formula."""

import torch
import torch.nn as nn

x_train = torch.linspace(0, 1, 20).unsqueeze(1)
y_train = 3.0 * x_train + 0.5 + 0.1 * torch.sin(10 * x_train)

model = nn.Linear(1, 1)
nn.init.constant_(model.weight, 0.0)
nn.init.constant_(model.bias, 0.0)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

num_epochs = 60
for epoch in range(num_epochs):
    outputs = model(x_train)
    loss = criterion(outputs, y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 10 == 0:
        print(f"Epoch [{epoch + 1}/{num_epochs}], Loss: {loss.item():.4f}")

w, b = model.weight.item(), model.bias.item()
print(f"w = {w:.4f}, b = {b:.4f}")
with torch.no_grad():
    predicted = model(torch.tensor([[2.0]]))
print(predicted)

# the same fit by hand, with autograd and raw tensors
W = torch.zeros(1, requires_grad=True)
B = torch.zeros(1, requires_grad=True)
for _ in range(200):
    pred = x_train.squeeze() * W + B
    loss = ((pred - y_train.squeeze()) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        W -= 0.5 * W.grad
        B -= 0.5 * B.grad
        W.grad.zero_()
        B.grad.zero_()
print(f"manual: W={W.item():.4f} B={B.item():.4f} loss={loss.item():.6f}")
# closed form, for comparison
X = torch.cat([x_train, torch.ones_like(x_train)], dim=1)
sol = torch.linalg.solve(X.T @ X, X.T @ y_train)
print(sol.squeeze())
