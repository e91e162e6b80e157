# corpus: exact
"""Siamese-network pieces: a shared embedding net applied to both inputs,
F.pairwise_distance with a contrastive margin loss, nn.CosineSimilarity, F.cosine_similarity,
TripletMarginLoss, CosineEmbeddingLoss, MarginRankingLoss and HingeEmbeddingLoss, trained a
few steps on pairs from formulas."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        self.fc = nn.Sequential(nn.Linear(6, 12), nn.ReLU(inplace=True), nn.Linear(12, 3))

    def forward_once(self, x):
        return self.fc(x)

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        return output1, output2


class ContrastiveLoss(torch.nn.Module):
    def __init__(self, margin=2.0):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin

    def forward(self, output1, output2, label):
        euclidean_distance = F.pairwise_distance(output1, output2, keepdim=True)
        loss_contrastive = torch.mean(
            (1 - label) * torch.pow(euclidean_distance, 2)
            + label * torch.pow(torch.clamp(self.margin - euclidean_distance, min=0.0), 2)
        )
        return loss_contrastive


net = SiameseNetwork()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(0.4 * torch.sin(torch.arange(p.numel()) * 0.9 + 2 * i).view(p.shape))
x1 = torch.cos(torch.arange(48.0).view(8, 6) * 0.3)
x2 = torch.cos(torch.arange(48.0).view(8, 6) * 0.3 + (torch.arange(8.0) % 2).view(8, 1))
label = (torch.arange(8) % 2).float().view(8, 1)
criterion = ContrastiveLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
for epoch in range(5):
    optimizer.zero_grad()
    output1, output2 = net(x1, x2)
    loss_contrastive = criterion(output1, output2, label)
    loss_contrastive.backward()
    optimizer.step()
    print("Epoch number {}\n Current loss {:.6f}".format(epoch, loss_contrastive.item()))

with torch.no_grad():
    o1, o2 = net(x1, x2)
print(F.pairwise_distance(o1, o2))
print(F.pairwise_distance(o1, o2, p=1.0, eps=1e-6).shape, nn.PairwiseDistance(p=2)(o1, o2)[:3])
cos = nn.CosineSimilarity(dim=1, eps=1e-6)
print(cos(o1, o2), F.cosine_similarity(x1[:2], x2[:2]))
anchor, positive, negative = o1[:4], o1[4:], o2[:4]
print(nn.TripletMarginLoss(margin=1.0, p=2)(anchor, positive, negative))
print(F.triplet_margin_loss(anchor, positive, negative, margin=0.5, swap=True))
target = 1 - 2 * label.view(-1)
print(nn.CosineEmbeddingLoss(margin=0.1)(o1, o2, target))
print(nn.MarginRankingLoss(margin=0.2)(o1[:, 0], o2[:, 0], target))
print(nn.HingeEmbeddingLoss(margin=1.0)(F.pairwise_distance(o1, o2), target))
