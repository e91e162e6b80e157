# corpus: exact
"""A LeNet-style CNN on synthetic 1x28x28 images (bars at class-dependent positions)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

num_classes = 4
n = 32
labels = torch.arange(n) % num_classes
images = torch.zeros(n, 1, 28, 28)
for i in range(n):
    c = labels[i].item()
    images[i, 0, 4 + 5 * c : 8 + 5 * c, 3:25] = 1.0
    images[i, 0, :, (i * 3) % 28] += 0.5
images = (images - 0.1307) / 0.3081


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(8 * 5 * 5, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = self.dropout(x)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


net = Net()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        fan_in = p[0].numel() if p.dim() > 1 else p.numel()
        p.copy_(torch.cos(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) / fan_in**0.5)
net.eval()  # dropout off: the run is deterministic
print(net)
optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for epoch in range(4):
    running_loss = 0.0
    for b in range(0, n, 8):
        inputs, target = images[b : b + 8], labels[b : b + 8]
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = F.nll_loss(outputs, target)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    print(f"[{epoch + 1}] loss: {running_loss / 4:.4f}")

correct = 0
total = 0
with torch.no_grad():
    outputs = net(images)
    _, predicted = torch.max(outputs.data, 1)
    total += labels.size(0)
    correct += (predicted == labels).sum().item()
print(f"Accuracy of the network on the {total} images: {100 * correct // total} %")
print(net.conv1(images[:1]).shape, net.pool(net.conv1(images[:1])).shape)
