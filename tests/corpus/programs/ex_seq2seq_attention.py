# corpus: exact
"""The 'NLP From Scratch: Translation with a Sequence to Sequence Network and Attention'
tutorial, shrunk: EncoderRNN (Embedding + GRU, batch_first), a BahdanauAttention module
(Wa, Ua, Va; scores.squeeze(2).unsqueeze(1); F.softmax; torch.bmm), an AttnDecoderRNN
that loops over MAX_LENGTH steps with teacher forcing, topk(1) for its own input,
detach(), and NLLLoss over log_softmax outputs. Weights come from formulas."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

SOS_token, EOS_token, MAX_LENGTH = 0, 1, 5
device = torch.device("cpu")


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


def fill(module, k):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(0.3 * torch.sin(torch.arange(p.numel()) * (0.5 + 0.1 * k) + i).view_as(p))


# "translate" a sequence to its reverse; tokens 2..6, padded with EOS
src = torch.tensor([[2, 3, 4, 1, 1], [5, 6, 2, 3, 1], [4, 4, 6, 1, 1], [3, 5, 2, 6, 1]])
tgt = torch.tensor([[4, 3, 2, 1, 1], [3, 2, 6, 5, 1], [6, 4, 4, 1, 1], [6, 2, 5, 3, 1]])
encoder = EncoderRNN(7, 8, dropout_p=0.0).to(device)
decoder = AttnDecoderRNN(8, 7, dropout_p=0.0).to(device)
fill(encoder, 0)
fill(decoder, 1)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(1, 31):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    encoder_outputs, encoder_hidden = encoder(src)
    decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, tgt)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), tgt.view(-1))
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    if epoch % 10 == 0:
        print("epoch %d loss %.4f" % (epoch, loss.item()))

with torch.no_grad():
    encoder_outputs, encoder_hidden = encoder(src)
    decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
    _, topi = decoder_outputs.topk(1)
    decoded_ids = topi.squeeze()
print(decoded_ids)
print(decoder_attn.shape, decoder_attn[0, 0], decoder_hidden.shape)
