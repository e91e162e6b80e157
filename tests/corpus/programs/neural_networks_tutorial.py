# corpus: exact
"""The 'Neural Networks' tutorial's LeNet on a 1x32x32 input: parameters, a backward pass
with a given gradient, the loss's grad_fn chain, and a manual SGD update."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        return self.fc3(f6)


net = Net()
print(net)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.11 + i).reshape(p.shape) * 0.1)
params = list(net.parameters())
print(len(params))
print(params[0].size())
input = torch.cos(torch.arange(32 * 32, dtype=torch.float32) * 0.05).reshape(1, 1, 32, 32)
out = net(input)
print(out.detach())
net.zero_grad()
out.backward(torch.linspace(-1, 1, 10).reshape(1, 10))
print(net.conv1.bias.grad)

output = net(input)
target = torch.arange(10, dtype=torch.float32).view(1, -1) / 10
criterion = nn.MSELoss()
loss = criterion(output, target)
print(f"{loss.item():.6f}")
print(loss.grad_fn)
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])
net.zero_grad()
print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward")
print(net.conv1.bias.grad)
learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
optimizer = optim.SGD(net.parameters(), lr=0.01)
for _ in range(3):
    optimizer.zero_grad()
    loss = criterion(net(input), target)
    loss.backward()
    optimizer.step()
print(f"{loss.item():.6f}")
