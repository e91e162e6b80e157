# corpus: exact
"""An LSTM that predicts the next value of a sine wave (sequence-to-one regression)."""

import torch
import torch.nn as nn

seq_len, n_seq = 12, 16
t = torch.arange(n_seq).unsqueeze(1) * 0.37 + torch.arange(seq_len + 1).unsqueeze(0) * 0.3
wave = torch.sin(t)
x = wave[:, :-1].unsqueeze(-1)
y = wave[:, -1:]


class SineLSTM(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1, :])


model = SineLSTM()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.3 * torch.sin(torch.arange(p.numel()) * 0.9 + i).reshape(p.shape))
print([(name, tuple(p.shape)) for name, p in model.named_parameters()])
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
loss_fn = nn.MSELoss()
for epoch in range(40):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1:3d} mse {loss.item():.6f}")
out, (h, c) = model.lstm(x[:2])
print(out.shape, h.shape, c.shape)
with torch.no_grad():
    print(model(x[:3]).squeeze(1), y[:3].squeeze(1))
