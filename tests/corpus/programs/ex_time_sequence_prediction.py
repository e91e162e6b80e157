# corpus: exact
"""pytorch/examples' time_sequence_prediction, shrunk: sine waves in float64, a Sequence
model of two nn.LSTMCell run step by step over the input and then `future` steps on its own
output, torch.cat of outputs, optim.LBFGS with a closure, and a test without gradients."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 12)
        self.lstm2 = nn.LSTMCell(12, 12)
        self.linear = nn.Linear(12, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 12, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 12, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 12, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 12, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


T, L, N = 20, 30, 8
x = np.empty((N, L), np.int64)
x[:] = np.array(range(L)) + np.array([3 * k for k in range(N)]).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype("float64")
input = torch.from_numpy(data[2:, :-1])
target = torch.from_numpy(data[2:, 1:])
test_input = torch.from_numpy(data[:2, :-1])
test_target = torch.from_numpy(data[:2, 1:])
print(input.dtype, input.shape, test_target.shape)

seq = Sequence()
seq.double()
with torch.no_grad():
    for i, p in enumerate(seq.parameters()):
        p.copy_(0.2 * torch.cos(torch.arange(p.numel(), dtype=torch.double) * 0.7 + i).view_as(p))
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=6)
for i in range(3):
    print("STEP: ", i)

    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        print("loss:", "%.8f" % loss.item())
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        future = 5
        pred = seq(test_input, future=future)
        loss = criterion(pred[:, :-future], test_target)
        print("test loss:", "%.8f" % loss.item())
        y = pred.detach().numpy()
print(y.shape, y.dtype, np.round(y[0, -5:], 5))
print(sorted(optimizer.state_dict()["state"][0].keys()))
