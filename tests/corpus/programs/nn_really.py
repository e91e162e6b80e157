# corpus: exact
"""'What is torch.nn really?' in small: a model from raw tensors, then refactored step by
step into nn.functional, nn.Module, nn.Linear, optim, TensorDataset/DataLoader, fit(),
and an nn.Sequential CNN with a custom Lambda layer."""

import math

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

n, d, c = 64, 16, 4
x_train = torch.sin(torch.arange(n * d, dtype=torch.float32) * 0.37).reshape(n, d)
y_train = (x_train[:, :4].argmax(dim=1) + x_train[:, 4:8].argmax(dim=1)) % c
x_valid, y_valid = x_train[:16] * 0.9, y_train[:16]
print(x_train.shape, y_train.min(), y_train.max())

weights = torch.cos(torch.arange(d * c, dtype=torch.float32)).reshape(d, c) / math.sqrt(d)
weights.requires_grad_()
bias = torch.zeros(c, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


bs = 16
xb, yb = x_train[0:bs], y_train[0:bs]
preds = model(xb)
print(preds[0], preds.shape)
print(f"{nll(preds, yb).item():.6f}", accuracy(preds, yb))
lr, epochs = 0.5, 2
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        xb, yb = x_train[start_i : start_i + bs], y_train[start_i : start_i + bs]
        loss = nll(model(xb), yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(f"{F.cross_entropy(xb @ weights + bias, yb).item():.6f}", accuracy(model(xb), yb))


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(d, c)

    def forward(self, xb):
        return self.lin(xb)


def get_model():
    m = Mnist_Logistic()
    with torch.no_grad():
        m.lin.weight.copy_(weights.detach().T)
        m.lin.bias.zero_()
    return m, optim.SGD(m.parameters(), lr=lr, momentum=0.9)


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
        val_loss = sum(a * b for a, b in zip(losses, nums)) / sum(nums)
        print(epoch, f"{val_loss:.6f}")


train_dl = DataLoader(TensorDataset(x_train, y_train), batch_size=bs)
valid_dl = DataLoader(TensorDataset(x_valid, y_valid), batch_size=bs * 2)
m, opt = get_model()
fit(3, m, F.cross_entropy, opt, train_dl, valid_dl)


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


cnn = nn.Sequential(
    Lambda(lambda x: x.view(-1, 1, 4, 4)),
    nn.Conv2d(1, 8, kernel_size=3, stride=1, padding=1),
    nn.ReLU(),
    nn.Conv2d(8, c, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    Lambda(lambda x: x.view(x.size(0), -1)),
)
with torch.no_grad():
    for i, p in enumerate(cnn.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.5 + i).reshape(p.shape) * 0.4)
print(cnn)
fit(3, cnn, F.cross_entropy, optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9), train_dl, valid_dl)
