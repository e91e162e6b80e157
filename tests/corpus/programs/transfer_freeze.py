# corpus: exact
"""Fine-tuning as transfer-learning tutorials do it: freeze a pretrained body, replace the
head, train only what requires grad, then unfreeze with a smaller learning rate."""

import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 2))
        )
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


model = Backbone()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel()) * 0.9 + i).reshape(p.shape) * 0.3)
for param in model.parameters():
    param.requires_grad = False
num_ftrs = model.fc.in_features
model.fc = nn.Linear(num_ftrs, 2)
nn.init.constant_(model.fc.weight, 0.05)
nn.init.zeros_(model.fc.bias)
print(model)
print([n for n, p in model.named_parameters() if p.requires_grad])
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"trainable {trainable} / {sum(p.numel() for p in model.parameters())}")

x = torch.sin(torch.arange(8 * 36, dtype=torch.float32)).reshape(8, 1, 6, 6)
y = torch.arange(8) % 2
optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.5)
criterion = nn.CrossEntropyLoss()
before = model.features[0].weight.clone()
for epoch in range(5):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.5f}")
print(torch.equal(before, model.features[0].weight), model.features[0].weight.grad)

for param in model.features.parameters():
    param.requires_grad_(True)
optimizer = torch.optim.SGD(
    [{"params": model.features.parameters(), "lr": 1e-3}, {"params": model.fc.parameters()}],
    lr=0.1,
    momentum=0.9,
)
for _ in range(3):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
print(f"fine-tuned loss {loss.item():.5f}", torch.equal(before, model.features[0].weight))
model.eval()
with torch.no_grad():
    print(model(x).argmax(1))
