# corpus: exact
"""The 'Classifying Names with a Character-Level RNN' tutorial, shrunk: unicodeToAscii via
unicodedata, letterToIndex / lineToTensor one-hot tensors of shape (len, 1, n_letters),
a hand-written RNN cell (i2h / h2o on torch.cat((input, hidden), 1), LogSoftmax),
initHidden, a per-name training step updating p.data.add_(p.grad.data, alpha=-lr),
categoryFromOutput with topk, and an nn.RNN version of the same model."""

import string
import unicodedata

import torch
import torch.nn as nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)


def unicodeToAscii(s):
    return "".join(
        c
        for c in unicodedata.normalize("NFD", s)
        if unicodedata.category(c) != "Mn" and c in all_letters
    )


print(n_letters, unicodeToAscii("Ślusàrski"))
category_lines = {
    "English": ["Smith", "Jones", "Brown"],
    "French": ["Dubois", "Lefèvre", "Moreau"],
    "Japanese": ["Satō", "Suzuki", "Tanaka"],
}
category_lines = {k: [unicodeToAscii(n) for n in v] for k, v in category_lines.items()}
all_categories = list(category_lines)
n_categories = len(all_categories)


def letterToIndex(letter):
    return all_letters.find(letter)


def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(letterToTensor("J").nonzero(), lineToTensor("Jones").size())


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.h2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 16
rnn = RNN(n_letters, n_hidden, n_categories)
with torch.no_grad():
    for i, p in enumerate(rnn.parameters()):
        p.copy_(0.1 * torch.cos(torch.arange(p.numel()) * 0.41 + i).view_as(p))


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


criterion = nn.NLLLoss()
learning_rate = 0.02


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


current_loss = 0
for it in range(1, 46):
    category = all_categories[it % n_categories]
    line = category_lines[category][(it // n_categories) % 3]
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    output, loss = train(category_tensor, lineToTensor(line))
    current_loss += loss
    if it % 15 == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = "✓" if guess == category else "✗ (%s)" % category
        print(
            "%d %d%% %.4f %s / %s %s" % (it, it / 45 * 100, current_loss / 15, line, guess, correct)
        )
        current_loss = 0

confusion = torch.zeros(n_categories, n_categories)
with torch.no_grad():
    for category in all_categories:
        for line in category_lines[category]:
            hidden = rnn.initHidden()
            lt = lineToTensor(line)
            for i in range(lt.size(0)):
                output, hidden = rnn(lt[i], hidden)
            confusion[all_categories.index(category)][categoryFromOutput(output)[1]] += 1
print(confusion)

model = nn.RNN(n_letters, n_hidden, nonlinearity="tanh")
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(0.1 * torch.cos(torch.arange(p.numel()) * 0.41 + i).view_as(p))
out, h = model(lineToTensor("Tanaka"))
print(out.shape, h.shape, torch.equal(out[-1], h[0]), h[0, 0, :4])
