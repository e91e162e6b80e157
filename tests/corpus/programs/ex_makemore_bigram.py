# corpus: exact
"""makemore part 1 (bigram character model), on a built-in word list: counts in a
torch.zeros((27, 27), dtype=torch.int32) with N[ix1, ix2] += 1, stoi/itos, smoothed
P = (N+1).float(); P /= P.sum(1, keepdims=True), the average negative log likelihood, then
the one-layer neural net with F.one_hot(...).float() @ W, softmax by exp/sum, and manual
gradient descent with W.data += -lr * W.grad. W starts from a formula, not a generator."""

import torch
import torch.nn.functional as F

words = "emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily".split()
print(len(words), min(len(w) for w in words), max(len(w) for w in words))

N = torch.zeros((27, 27), dtype=torch.int32)
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
print(len(stoi), chars[:5])
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1
print(N.dtype, N.sum(), N[0, :8], N.max())
print(N[0].float() / N[0].sum())

P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(P.shape, P[0].sum(), P[0, 1].item())

log_likelihood = 0.0
n = 0
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        prob = P[ix1, ix2]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
print(f"{log_likelihood=}")
nll = -log_likelihood
print(f"{nll=}")
print(f"{nll / n}")

# greedy "sampling": follow the most likely next character
for start in range(1, 4):
    out, ix = [itos[start]], start
    while True:
        ix = torch.argmax(P[ix]).item()
        if ix == 0 or len(out) > 8:
            break
        out.append(itos[ix])
    print("".join(out))

xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print("number of examples: ", num)
xenc = F.one_hot(xs, num_classes=27).float()
print(xenc.shape, xenc.dtype, F.one_hot(torch.tensor([0, 2])).shape)

W = (0.1 * torch.sin(torch.arange(27 * 27, dtype=torch.float32) * 1.37)).view(27, 27)
W.requires_grad = True
for k in range(20):
    xenc = F.one_hot(xs, num_classes=27).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
    if k % 5 == 0:
        print(k, loss.item())
    W.grad = None
    loss.backward()
    W.data += -10 * W.grad
print(F.cross_entropy(xenc @ W, ys).item(), W.grad.abs().max().item())
