# corpus: exact
"""TransformerDecoder and nn.Transformer with causal and padding masks; causal SDPA."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def fill(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(0.2 * torch.sin(torch.arange(p.numel()) * 0.37 + i).reshape(p.shape))


mask = nn.Transformer.generate_square_subsequent_mask(4)
print(mask)

layer = nn.TransformerDecoderLayer(
    d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True
)
decoder = nn.TransformerDecoder(layer, num_layers=2)
fill(decoder)
tgt = torch.sin(torch.arange(32.0) * 0.5).reshape(1, 4, 8)
memory = torch.cos(torch.arange(24.0) * 0.3).reshape(1, 3, 8)
out = decoder(tgt, memory, tgt_mask=mask)
print(out.shape)
print(out[0, :, :4])
pad = torch.tensor([[False, False, False, True]])
out2 = decoder(tgt, memory, tgt_mask=mask, tgt_key_padding_mask=pad)
print(out2[0, :3, :4])
print(len(decoder.layers), sum(p.numel() for p in decoder.parameters()))

model = nn.Transformer(
    d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, dropout=0.0
)
fill(model)
src = torch.cos(torch.arange(40.0) * 0.2).reshape(5, 1, 8)
tgt2 = torch.sin(torch.arange(24.0) * 0.4).reshape(3, 1, 8)
y = model(src, tgt2, tgt_mask=model.generate_square_subsequent_mask(3))
print(y.shape)
print(y[:, 0, :4])
y.pow(2).mean().backward()
print(model.encoder.layers[0].linear1.bias.grad[:4])

q = torch.sin(torch.arange(24.0)).reshape(1, 2, 3, 4)
k = torch.cos(torch.arange(24.0)).reshape(1, 2, 3, 4)
v = torch.linspace(-1, 1, 24).reshape(1, 2, 3, 4)
causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print(causal)
explicit = F.scaled_dot_product_attention(
    q, k, v, attn_mask=torch.ones(3, 3, dtype=torch.bool).tril()
)
print(torch.allclose(causal, explicit))
print(F.scaled_dot_product_attention(q, k, v, scale=0.5)[0, 0])
