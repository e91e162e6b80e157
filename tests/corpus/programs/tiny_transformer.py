# corpus: exact
"""A tiny transformer: token + position embeddings, a TransformerEncoder with a causal
mask, and scaled-dot-product attention checked against nn.MultiheadAttention."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

vocab, d_model, seq = 11, 16, 8


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx):
        T = idx.shape[1]
        h = self.tok(idx) + self.pos(torch.arange(T))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        h = self.encoder(h, mask=mask, is_causal=True)
        return self.head(self.ln(h))


model = TinyTransformer()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.37 + i).reshape(p.shape) * 0.3)
print(sum(p.numel() for p in model.parameters()))
print(nn.Transformer.generate_square_subsequent_mask(4))

# task: copy the previous token
x = (torch.arange(4 * seq).reshape(4, seq) * 7) % vocab
y = torch.roll(x, 1, dims=1)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(30):
    logits = model(x)
    loss = F.cross_entropy(logits[:, 1:].reshape(-1, vocab), y[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 9:
        print(f"step {step + 1} loss {loss.item():.4f}")

q = torch.linspace(-1, 1, 2 * 4 * 8).reshape(2, 4, 8)
k = torch.cos(q * 3)
v = torch.sin(q * 2)
attn = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1) @ v
print(torch.allclose(attn, F.scaled_dot_product_attention(q, k, v), atol=1e-6))
mha = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
with torch.no_grad():
    for p in mha.parameters():
        p.copy_(torch.cos(torch.arange(p.numel()) * 0.5).reshape(p.shape) * 0.2)
out, weights = mha(q, k, v)
print(out.shape, weights.shape)
print(weights[0].detach())
