# corpus: exact
"""pytorch/examples' dcgan, shrunk to 8x8 images: Generator of ConvTranspose2d +
BatchNorm2d + ReLU + Tanh, Discriminator of Conv2d + LeakyReLU(0.2, inplace=True) +
Sigmoid, weights_init dispatching on m.__class__.__name__.find('Conv'), BCELoss with
real_label/fill_, two Adam optimizers with betas. Weights and noise come from formulas."""

import torch
import torch.nn as nn
import torch.optim as optim

nz, ngf, ndf, nc = 4, 4, 4, 1
device = torch.device("cpu")


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        with torch.no_grad():
            w = torch.cos(torch.arange(m.weight.numel()) * 0.61).view_as(m.weight)
            m.weight.copy_(0.05 * w)
    elif classname.find("BatchNorm") != -1:
        nn.init.constant_(m.weight, 1.0)
        m.weight.data.mul_(1.02)
        nn.init.constant_(m.bias, 0)


class Generator(nn.Module):
    def __init__(self, ngpu):
        super(Generator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 3, 1, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super(Discriminator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


netG = Generator(0).to(device)
netG.apply(weights_init)
print(netG)
netD = Discriminator(0).to(device)
netD.apply(weights_init)
print(netD)

criterion = nn.BCELoss()
fixed_noise = torch.sin(torch.arange(2 * nz, dtype=torch.float32)).view(2, nz, 1, 1)
real_label, fake_label = 1, 0
optimizerD = optim.Adam(netD.parameters(), lr=0.002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.002, betas=(0.5, 0.999))

xs = torch.linspace(-1, 1, 8)
images = torch.stack([torch.tanh(torch.outer(xs * (k + 1), xs)) for k in range(8)]).unsqueeze(1)
batches = images.split(4)
for epoch in range(2):
    for i, data in enumerate(batches, 0):
        netD.zero_grad()
        real_cpu = data.to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        step = epoch * len(batches) + i
        noise = torch.cos(torch.arange(batch_size * nz) * 0.3 + step).view(batch_size, nz, 1, 1)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        print(
            "[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f"
            % (epoch, 2, i, len(batches), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2)
        )

fake = netG(fixed_noise)
print(fake.shape, fake.detach()[0, 0, :2])
print(netD.main[3].running_mean, netD.main[3].num_batches_tracked)
