# corpus: exact
"""nn.Module subclasses, containers, parameters and their counts, printed models."""

import torch
from torch import nn


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(4 * 4, 12),
            nn.ReLU(),
            nn.Linear(12, 12),
            nn.ReLU(),
            nn.Linear(12, 3),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork()
print(model)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.3, 0.3, p.numel()).reshape(p.shape))
X = torch.linspace(0, 1, 2 * 16).reshape(2, 4, 4)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
print(logits)
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
print(sum(p.numel() for p in model.parameters()))
print(sum(p.numel() for p in model.parameters() if p.requires_grad))


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Tanh()})
        self.scale = nn.Parameter(torch.tensor(2.0))
        self.register_buffer("offset", torch.ones(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x) + self.offset
        return self.heads["a"](self.heads["b"](x)) * self.scale


blocks = Blocks()
print(blocks)
print([n for n, _ in blocks.named_parameters()])
print([n for n, _ in blocks.named_buffers()])
print(list(blocks.state_dict().keys()))
print(len(list(blocks.modules())), [n for n, _ in blocks.named_children()])
for p in blocks.parameters():
    nn.init.constant_(p, 0.25)
print(blocks(torch.tensor([[1.0, 2.0]])))
blocks.layers[0].requires_grad_(False)
print(sum(p.numel() for p in blocks.parameters() if p.requires_grad))
blocks.layers.append(nn.Linear(2, 2))
print(len(blocks.layers), blocks.training, blocks.eval().training)
seq = nn.Sequential()
seq.add_module("fc", nn.Linear(3, 1))
print(seq, seq.fc is seq[0])
print(model.linear_relu_stack[0].weight.shape, model.linear_relu_stack[-1])
print(nn.Linear(3, 2, bias=False))
print(nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1))
