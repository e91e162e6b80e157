# corpus: exact
"""The loss functions of nn on fixed inputs, with their reductions and options."""

import torch
import torch.nn as nn
import torch.nn.functional as F

logits = torch.tensor([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0], [-1.0, 1.5, 0.0], [0.3, 0.3, 0.3]])
target = torch.tensor([0, 2, 1, 2])
print(nn.CrossEntropyLoss()(logits, target))
print(nn.CrossEntropyLoss(reduction="none")(logits, target))
print(nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))(logits, target))
print(nn.CrossEntropyLoss(ignore_index=2)(logits, target))
print(nn.CrossEntropyLoss(label_smoothing=0.1)(logits, target))
print(F.cross_entropy(logits, F.softmax(logits * 0.5, dim=1)))
print(nn.NLLLoss()(F.log_softmax(logits, dim=1), target))
pred = torch.linspace(-1, 2, 6)
tgt = torch.linspace(0, 1, 6)
print(nn.MSELoss()(pred, tgt), nn.L1Loss(reduction="sum")(pred, tgt))
print(nn.SmoothL1Loss(beta=0.5)(pred, tgt), nn.HuberLoss(delta=0.3)(pred, tgt))
probs = torch.sigmoid(pred)
print(nn.BCELoss()(probs, tgt), nn.BCEWithLogitsLoss(pos_weight=torch.tensor(2.0))(pred, tgt))
log_p = F.log_softmax(logits, dim=1)
q = F.softmax(logits.flip(0), dim=1)
print(nn.KLDivLoss(reduction="batchmean")(log_p, q))
a, b = logits[:2], logits[2:]
print(nn.CosineEmbeddingLoss()(a, b, torch.tensor([1, -1])))
print(nn.MarginRankingLoss(margin=0.5)(pred[:3], pred[3:], torch.tensor([1.0, -1.0, 1.0])))
print(nn.TripletMarginLoss(margin=1.0)(logits[:2], logits[1:3], logits[2:]))
print(nn.HingeEmbeddingLoss()(pred, torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])))
print(nn.PoissonNLLLoss()(pred, tgt), nn.GaussianNLLLoss()(pred, tgt, torch.ones(6)))
print(nn.MultiLabelSoftMarginLoss()(logits, (logits > 0).float()))
x = logits.clone().requires_grad_()
F.cross_entropy(x, target).backward()
print(x.grad)
print(F.one_hot(target, num_classes=3))
