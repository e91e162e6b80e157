# corpus: exact
"""pytorch/examples' word_language_model, shrunk: a Dictionary/Corpus built from text,
batchify, get_batch, an RNNModel (Embedding + LSTM/GRU/RNN_TANH + Linear decoder) with
init_hidden, repackage_hidden by detach, clip_grad_norm_, manual SGD on p.data, and
perplexity via math.exp. Weights come from formulas so the run is deterministic."""

import math
import time

import torch
import torch.nn as nn

TEXT = """the cat sat on the mat
the dog sat on the log
a cat and a dog met on the mat
the log and the mat are by the door"""


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, text):
        self.dictionary = Dictionary()
        self.train = self.tokenize(text)

    def tokenize(self, text):
        idss = []
        for line in text.split("\n"):
            words = line.split() + ["<eos>"]
            ids = []
            for word in words:
                ids.append(self.dictionary.add_word(word))
            idss.append(torch.tensor(ids).type(torch.int64))
        return torch.cat(idss)


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        with torch.no_grad():
            for i, p in enumerate(self.parameters()):
                p.copy_(0.2 * torch.sin(torch.arange(p.numel()) * 0.73 + i).view_as(p))
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return torch.nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (
                weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid),
            )
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt=5):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i : i + seq_len]
    target = source[i + 1 : i + 1 + seq_len].view(-1)
    return data, target


corpus = Corpus(TEXT)
ntokens = len(corpus.dictionary)
train_data = batchify(corpus.train, 4)
print(ntokens, corpus.train.shape, train_data.shape, train_data.dtype)
print(corpus.dictionary.idx2word[:6], train_data[:3])
criterion = nn.NLLLoss()


def evaluate(model, data_source, bsz=4):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(bsz)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, 5):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


for rnn_type, tied in [("LSTM", False), ("GRU", True), ("RNN_TANH", False)]:
    model = RNNModel(rnn_type, ntokens, 8, 8, 2, dropout=0.0, tie_weights=tied)
    lr, clip = 2.0, 0.25
    start = time.time()
    for epoch in range(1, 4):
        model.train()
        total_loss = 0.0
        hidden = model.init_hidden(4)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, 5)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
        cur_loss = total_loss / (batch + 1)
        elapsed = time.time() - start
        assert elapsed >= 0
        print(
            "| {} | epoch {:3d} | {:5d} batches | lr {:02.2f} | loss {:5.2f} | ppl {:8.2f} | "
            "norm {:.4f}".format(rnn_type, epoch, batch + 1, lr, cur_loss, math.exp(cur_loss), norm)
        )
    val_loss = evaluate(model, train_data)
    print("=" * 40)
    print(
        "| End of training | {} | val loss {:5.3f} | val ppl {:8.3f}".format(
            rnn_type, val_loss, math.exp(val_loss)
        )
    )
    print(model.decoder.weight is model.encoder.weight, sum(p.numel() for p in model.parameters()))

input = torch.tensor([[corpus.dictionary.word2idx["the"]]])
hidden = model.init_hidden(1)
words = []
with torch.no_grad():
    for i in range(6):
        output, hidden = model(input, hidden)
        word_weights = output.squeeze().div(1.0).exp()
        word_idx = torch.argmax(word_weights)
        input.fill_(word_idx)
        words.append(corpus.dictionary.idx2word[word_idx])
print(" ".join(words))
