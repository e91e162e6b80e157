# corpus: trajectory rtol=0.5 atol=1.0
"""A small variational autoencoder (the examples' VAE, shrunk): encoder to mu and
log-variance, the reparameterization trick with torch.randn_like, BCE + KL loss."""

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(1)
grid = torch.linspace(0, 1, 16)
data = torch.stack([(torch.sin(grid * 6 + k * 0.4) > 0).float() for k in range(64)])


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 12)
        self.fc21 = nn.Linear(12, 2)
        self.fc22 = nn.Linear(12, 2)
        self.fc3 = nn.Linear(2, 12)
        self.fc4 = nn.Linear(12, 16)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 16))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(1, 31):
    model.train()
    train_loss = 0
    for batch in data.split(16):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(batch)
        loss = loss_function(recon_batch, batch, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    if epoch % 10 == 0:
        print(f"====> Epoch: {epoch} Average loss: {train_loss / len(data):.4f}")
with torch.no_grad():
    sample = model.decode(torch.randn(4, 2))
print(sample.shape, bool(sample.min() >= 0), bool(sample.max() <= 1))
