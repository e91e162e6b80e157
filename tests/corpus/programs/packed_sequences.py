# corpus: exact
"""Variable-length sequences through an LSTM: pad_sequence, pack_padded_sequence,
pad_packed_sequence, and reading each sequence's last real output."""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

seqs = [torch.arange(1, 6), torch.arange(6, 9), torch.arange(9, 11)]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True)
print(padded, lengths)

emb = nn.Embedding(12, 4, padding_idx=0)
lstm = nn.LSTM(4, 3, batch_first=True, bidirectional=True)
with torch.no_grad():
    for i, p in enumerate(list(emb.parameters()) + list(lstm.parameters())):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.5 + i).reshape(p.shape) * 0.5)
    emb.weight[0].zero_()

packed = pack_padded_sequence(emb(padded), lengths, batch_first=True, enforce_sorted=True)
print(type(packed).__name__, packed.batch_sizes, packed.data.shape)
out_packed, (h, c) = lstm(packed)
out, out_lengths = pad_packed_sequence(out_packed, batch_first=True)
print(out.shape, out_lengths, h.shape)
print(out[1, 2:].abs().sum())
last = out[torch.arange(3), lengths - 1, :3]
print(torch.allclose(last, h[0], atol=1e-6))
print(h)
unsorted = pack_padded_sequence(
    padded[[2, 0, 1]], lengths[[2, 0, 1]], batch_first=True, enforce_sorted=False
)
print(unsorted.sorted_indices, unsorted.unsorted_indices)
