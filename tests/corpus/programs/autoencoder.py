# corpus: trajectory rtol=0.5 atol=0.02
"""A fully connected autoencoder (random init) compressing 16-d signals to 3 numbers."""

import torch
import torch.nn as nn

torch.manual_seed(42)
t = torch.linspace(0, 1, 16)
freqs = torch.rand(128, 1) * 3 + 1
phases = torch.rand(128, 1) * 6.28
data = torch.sin(freqs * t * 6.28 + phases)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 12), nn.ReLU(), nn.Linear(12, 16), nn.Tanh())

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = AutoEncoder()
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)
criterion = nn.MSELoss()
for epoch in range(60):
    for batch in data.split(32):
        recon = model(batch)
        loss = criterion(recon, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if epoch % 20 == 0 or epoch == 59:
        with torch.no_grad():
            full = criterion(model(data), data).item()
        print(f"Epoch:{epoch + 1}, Loss:{full:.4f}")
code = model.encoder(data[:4])
print(code.shape, model(data[:4]).shape)
