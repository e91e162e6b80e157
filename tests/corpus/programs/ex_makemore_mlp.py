# corpus: trajectory rtol=0.3 atol=0.05
"""makemore part 2 (an MLP language model, Bengio et al. 2003) on a built-in word list:
build_dataset with a block_size context window, g = torch.Generator().manual_seed(...),
torch.randn(..., generator=g), C[X] embedding lookup, emb.view(-1, 6) @ W1 + b1, tanh,
F.cross_entropy, minibatches with torch.randint(..., generator=g), a learning-rate decay,
and sampling with torch.multinomial(..., generator=g)."""

import random

import torch
import torch.nn.functional as F

words = (
    "emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily "
    "elizabeth mila ella avery sofia camila aria scarlett victoria madison luna grace"
).split()
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


random.seed(42)
random.shuffle(words)
n1 = int(0.8 * len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:])

g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, 2), generator=g)
W1 = torch.randn((block_size * 2, 64), generator=g) * 0.3
b1 = torch.randn(64, generator=g) * 0.01
W2 = torch.randn((64, vocab_size), generator=g) * 0.01
b2 = torch.zeros(vocab_size)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

lossi = []
for i in range(300):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, block_size * 2) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 200 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    lossi.append(loss.log10().item())
    if i % 100 == 99:
        print(f"{i:7d}/{300:7d}: {sum(lossi[-100:]) / 100:.4f}")


@torch.no_grad()
def split_loss(X, Y):
    emb = C[X]
    h = torch.tanh(emb.view(emb.shape[0], -1) @ W1 + b1)
    logits = h @ W2 + b2
    return F.cross_entropy(logits, Y).item()


print("train", round(split_loss(Xtr, Ytr), 1))
print(len(lossi), torch.tensor(lossi).view(-1, 100).mean(1).shape)

g = torch.Generator().manual_seed(2147483647 + 10)
samples = []
for _ in range(5):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0 or len(out) > 20:
            break
    samples.append("".join(itos[i] for i in out))
print(len(samples), all(s.endswith(".") or len(s) == 21 for s in samples))
