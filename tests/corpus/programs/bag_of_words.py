# corpus: exact
"""Text classification with a bag of embeddings: a vocabulary built from sentences,
EmbeddingBag with offsets (and the padded Embedding equivalent), a linear classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F

train = [
    ("the movie was great and fun", 1),
    ("a great fun film", 1),
    ("i loved the acting", 1),
    ("what a wonderful story", 1),
    ("the movie was boring", 0),
    ("a dull and boring film", 0),
    ("i hated the plot", 0),
    ("what a terrible story", 0),
]
vocab = {"<unk>": 0, "<pad>": 1}
for sentence, _ in train:
    for word in sentence.split():
        vocab.setdefault(word, len(vocab))
print(len(vocab), list(vocab)[:6])


def encode(sentence):
    return torch.tensor([vocab.get(w, 0) for w in sentence.split()], dtype=torch.long)


def collate_batch(batch):
    labels, texts, offsets = [], [], [0]
    for sentence, label in batch:
        ids = encode(sentence)
        labels.append(label)
        texts.append(ids)
        offsets.append(ids.size(0))
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    return torch.tensor(labels, dtype=torch.int64), torch.cat(texts), offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_class)
        initrange = 0.5
        with torch.no_grad():
            w = self.embedding.weight
            w.copy_(torch.sin(torch.arange(w.numel()) * 0.77).reshape(w.shape) * initrange)
            self.fc.weight.copy_(torch.cos(torch.arange(self.fc.weight.numel())).reshape(2, -1))
            self.fc.bias.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


model = TextClassificationModel(len(vocab), 6, 2)
labels, text, offsets = collate_batch(train)
print(labels, text.shape, offsets)
optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
for epoch in range(20):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(text, offsets), labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
    if epoch % 5 == 4:
        acc = (model(text, offsets).argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch + 1}: loss {loss.item():.5f} accuracy {acc:.3f}")

with torch.no_grad():
    test = ["a great story", "boring plot", "unknown words here"]
    _, t, o = collate_batch([(s, 0) for s in test])
    print(model(t, o).argmax(1))
    padded = nn.utils.rnn.pad_sequence([encode(s) for s in test], batch_first=True, padding_value=1)
    print(padded)
    emb = nn.Embedding(len(vocab), 6, padding_idx=1)
    emb.weight.copy_(model.embedding.weight)
    mask = (padded != 1).unsqueeze(-1).float()
    mean = (emb(padded) * mask).sum(1) / mask.sum(1)
    print(torch.allclose(mean, model.embedding(t, o), atol=1e-6))
