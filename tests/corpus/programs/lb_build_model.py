# corpus: exact
"""Learn the Basics, Build the Model: nn.Module with nn.Flatten and nn.Sequential, logits
through nn.Softmax(dim=1), the layers one by one, and named_parameters()."""

import torch
from torch import nn

device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
for name, param in model.named_parameters():
    with torch.no_grad():
        param.copy_(torch.cos(torch.linspace(0, 40, param.numel())).reshape(param.shape) * 0.03)
print(model)

X = (torch.arange(28 * 28, dtype=torch.float32).reshape(1, 28, 28) / 784.0).sin()
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
print(pred_probab)

input_image = torch.linspace(0, 1, 3 * 28 * 28).reshape(3, 28, 28)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=28 * 28, out_features=20)
nn.init.constant_(layer1.weight, 0.001)
nn.init.constant_(layer1.bias, -0.3)
hidden1 = layer1(flat_image)
print(hidden1.size())
hidden1 = hidden1 * torch.tensor([1.0, -1.0] * 10)
print(f"Before ReLU: {hidden1}\n\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")

seq_modules = nn.Sequential(flatten, layer1, nn.ReLU(), nn.Linear(20, 10))
nn.init.constant_(seq_modules[3].weight, 0.05)
nn.init.zeros_(seq_modules[3].bias)
logits = seq_modules(input_image)
softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
print(pred_probab.shape, pred_probab.sum(1))

print(f"Model structure: {model}\n\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
