# corpus: exact
"""Learn the Basics, Save and Load the Model: weights through state_dict with
weights_only=True, and the whole model pickled with torch.save(model) and loaded back with
weights_only=False."""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(4 * 7 * 7, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


model = Classifier()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.linspace(0, 3 + i, p.numel())).reshape(p.shape) * 0.1)
x = torch.cos(torch.linspace(0, 20, 2 * 14 * 14)).reshape(2, 1, 14, 14)
ref = model(x)
print(ref)

torch.save(model.state_dict(), "model_weights.pth")
model2 = Classifier()
model2.load_state_dict(torch.load("model_weights.pth", weights_only=True))
model2.eval()
print(torch.equal(model2(x), ref))
print(list(model2.state_dict().keys()))

torch.save(model, "model.pth")
model3 = torch.load("model.pth", weights_only=False)
print(type(model3).__name__, model3.training)
print(model3)
print(torch.equal(model3(x), ref))

sd = torch.load("model_weights.pth", weights_only=True)
print(type(sd).__name__, sd["classifier.1.weight"].shape, sd["features.0.bias"])
