# corpus: exact
"""A two-layer graph convolutional network (GCN) on a small ring-of-cliques graph,
with a normalized sparse COO adjacency matrix and torch.sparse.mm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

n_nodes, n_feat, n_class = 12, 4, 3
edges = []
for c in range(3):
    members = list(range(4 * c, 4 * c + 4))
    edges += [(a, b) for a in members for b in members if a != b]
edges += [(3, 4), (4, 3), (7, 8), (8, 7), (11, 0), (0, 11)]
src = torch.tensor([e[0] for e in edges] + list(range(n_nodes)))
dst = torch.tensor([e[1] for e in edges] + list(range(n_nodes)))
deg = torch.zeros(n_nodes).index_add_(0, src, torch.ones(len(src)))
values = deg[src].rsqrt() * deg[dst].rsqrt()
adj = torch.sparse_coo_tensor(torch.stack([src, dst]), values, (n_nodes, n_nodes)).coalesce()
print(adj.shape, adj._nnz(), adj.is_sparse)
print(adj.to_dense()[0])

features = torch.cos(torch.arange(n_nodes * n_feat, dtype=torch.float32) * 0.3)
features = features.reshape(n_nodes, n_feat)
labels = torch.arange(n_nodes) // 4
train_mask = torch.tensor([i % 4 < 2 for i in range(n_nodes)])


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.linear(x))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gc1 = GCNLayer(n_feat, 8)
        self.gc2 = GCNLayer(8, n_class)

    def forward(self, x, adj):
        return self.gc2(F.relu(self.gc1(x, adj)), adj)


model = GCN()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 1.1 + i).reshape(p.shape) * 0.5)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
for epoch in range(40):
    model.train()
    optimizer.zero_grad()
    out = model(features, adj)
    loss = F.cross_entropy(out[train_mask], labels[train_mask])
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        model.eval()
        pred = model(features, adj).argmax(dim=1)
        acc = (pred[~train_mask] == labels[~train_mask]).float().mean().item()
        print(f"Epoch {epoch + 1:03d}, Loss: {loss.item():.4f}, Test Acc: {acc:.4f}")
print(pred)
