# corpus: exact
"""pytorch/examples' fast_neural_style transformer net, shrunk: ConvLayer with
ReflectionPad2d, InstanceNorm2d(affine=True), ResidualBlock, UpsampleConvLayer with
F.interpolate(mode='nearest', scale_factor=2), gram_matrix with bmm, normalize_batch, and a
content + style loss step with Adam."""

import torch


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode="nearest", scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 4, kernel_size=5, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(4, affine=True)
        self.conv2 = ConvLayer(4, 8, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(8, affine=True)
        self.res1 = ResidualBlock(8)
        self.deconv1 = UpsampleConvLayer(8, 4, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(4, affine=True)
        self.deconv3 = ConvLayer(4, 3, kernel_size=5, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res1(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.deconv3(y)
        return y


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


transformer = TransformerNet()
with torch.no_grad():
    for i, p in enumerate(transformer.parameters()):
        p.copy_(
            0.2 * torch.sin(torch.arange(p.numel()) * 0.53 + i).view_as(p) + (p.dim() == 1) * 0.9
        )
print(transformer.in1, transformer.res1.conv1.reflection_pad)
print(sum(p.numel() for p in transformer.parameters() if p.requires_grad))

g = torch.arange(8.0)
x = 127.5 * (
    1 + torch.stack([torch.sin(g[:, None] * 0.4 * c + g[None, :] * 0.3) for c in range(1, 4)])
)
x = x.unsqueeze(0).repeat(2, 1, 1, 1)
x[1] = x[1].flip(-1)
style = normalize_batch(x[:1].clone())
gram_style = gram_matrix(style)
print(gram_style.shape, gram_style[0, 0])
optimizer = torch.optim.Adam(transformer.parameters(), 1e-2)
mse_loss = torch.nn.MSELoss()
content_weight, style_weight = 1.0, 10.0
for e in range(4):
    optimizer.zero_grad()
    y = transformer(x.clone())
    y = normalize_batch(y * 1.0)
    xc = normalize_batch(x.clone())
    content_loss = content_weight * mse_loss(y, xc)
    gm_y = gram_matrix(y)
    style_loss = style_weight * mse_loss(gm_y, gram_style[: len(x)].expand_as(gm_y))
    total_loss = content_loss + style_loss
    total_loss.backward()
    optimizer.step()
    print(
        "Epoch {}:\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
            e + 1, content_loss.item(), style_loss.item(), total_loss.item()
        )
    )
with torch.no_grad():
    output = transformer(x[:1]).clamp(0, 255)
img = output[0].clone().clamp(0, 255).numpy()
img = img.transpose(1, 2, 0).astype("uint8")
print(img.shape, img.dtype, img[0, :3].tolist())
