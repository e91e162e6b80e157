# corpus: trajectory rtol=0.6 atol=0.05
"""RNN and GRU sequence classifiers (randomly initialised) on a sign-of-the-sum task."""

import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(64, 10, 3)
y = (x.sum(dim=(1, 2)) > 0).long()


class SeqClassifier(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(input_size=3, hidden_size=16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


for cell in (nn.RNN, nn.GRU):
    model = SeqClassifier(cell)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(30):
        logits = model(x)
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % 10 == 0 or epoch == 29:
            acc = (logits.argmax(1) == y).float().mean().item()
            print(f"{cell.__name__} epoch {epoch}: loss {loss.item():.4f} acc {acc:.3f}")
    print(cell.__name__, sum(p.numel() for p in model.parameters()))
    out, h = model.rnn(x[:5])
    print(out.shape, h.shape)
