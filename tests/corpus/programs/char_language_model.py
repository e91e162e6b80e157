# corpus: exact
"""A tiny character-level language model: Embedding + GRU + Linear, trained on one
sentence, then greedy sampling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

text = "hello world, hello torch. "
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
vocab_size = len(chars)
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(vocab_size, "".join(chars), data[:10])


class CharRNN(nn.Module):
    def __init__(self, vocab, emb=8, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, idx, h=None):
        z, h = self.gru(self.embed(idx), h)
        return self.out(z), h


model = CharRNN(vocab_size)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.4 * torch.sin(torch.arange(p.numel()) * (0.61 + 0.1 * i)).reshape(p.shape))
optimizer = torch.optim.AdamW(model.parameters(), lr=0.03, weight_decay=0.01)
inp, tgt = data[:-1].unsqueeze(0), data[1:].unsqueeze(0)
for step in range(60):
    logits, _ = model(inp)
    loss = F.cross_entropy(logits.view(-1, vocab_size), tgt.view(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 15 == 14:
        print(f"step {step + 1}: loss {loss.item():.4f}, perplexity {loss.exp().item():.3f}")


@torch.no_grad()
def generate(start, n):
    idx = torch.tensor([[stoi[start]]])
    h = None
    out = start
    for _ in range(n):
        logits, h = model(idx, h)
        idx = logits[:, -1].argmax(dim=-1, keepdim=True)
        out += itos[idx.item()]
    return out


print(repr(generate("h", 25)))
