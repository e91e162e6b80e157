"""2-rank DDP under ``ember.compile``: a compiled SGD-momentum step (forward, backward with the
bucketed all-reduces, ``step()``) gives the weights of the eager 2-rank step and of PyTorch
training 1 process on the combined batch: NumPy's closed-form gradients of the 2-layer net
and PyTorch's SGD rule (1e-5); the buffer broadcast runs on every call; the graph that runs
starts each bucket's all-reduce before the next bucket's backward work and waits after.
(NumPy, not torch: importing torch costs each rank ~10 s here.)
"""

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
B = 4  # rows per rank


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("scale", ember.ones(3))

    def forward(self, x):
        return self.fc2(ember.tanh(self.fc1(x))) * self.scale


def make(seed):
    ember.manual_seed(seed)
    net = Net()
    ddp = DDP(net, bucket_cap_mb=0.0001)  # several buckets: several all-reduces in the graph
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = ((ddp(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    return net, ddp, step


eager_net, _, eager_step = make(100 + R)  # rank-dependent init: DDP copies rank 0's
net, ddp, step = make(200 + R)
with ember.no_grad():
    for p, q in zip(net.parameters(), eager_net.parameters()):
        p.copy_(q)
compiled = ember.compile(step, verbose=False)

# 1 process, the combined batch, in NumPy (float64)
ref = [q.detach().numpy().astype(np.float64) for q in eager_net.parameters()]  # W1 b1 W2 b2
bufs = None


def numpy_step(x, y):
    """Mean squared error of fc2(tanh(fc1(x))); SGD with momentum 0.9 as PyTorch's
    (buf = g on the first step, then 0.9 * buf + g; p -= lr * buf)."""
    global bufs
    w1, b1, w2, b2 = ref
    h = np.tanh(x @ w1.T + b1)
    d = 2 * (h @ w2.T + b2 - y) / y.size
    dz = (d @ w2) * (1 - h**2)
    grads = [dz.T @ x, dz.sum(0), d.T @ h, d.sum(0)]
    bufs = grads if bufs is None else [0.9 * b + g for b, g in zip(bufs, grads)]
    for p, b in zip(ref, bufs):
        p -= 0.1 * b


rng = np.random.default_rng(0)
for i in range(5):
    x = rng.standard_normal((N * B, 4)).astype(np.float32)
    y = rng.standard_normal((N * B, 3)).astype(np.float32)
    numpy_step(x.astype(np.float64), y.astype(np.float64))
    xs, ys = ember.tensor(x[R * B : R * B + B]), ember.tensor(y[R * B : R * B + B])
    eager_step(xs, ys)
    if R == 1:  # the graph's broadcast must overwrite it with rank 0's ones on every call
        net.scale.fill_(3.0)
    compiled(xs, ys)
    assert net.scale.tolist() == [1.0, 1.0, 1.0], (i, net.scale)
    for (n, p), q, r in zip(net.named_parameters(), eager_net.parameters(), ref):
        what = f"step {i}: {n} on rank {R}"
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), 1e-5, 1e-5, what)
        np.testing.assert_allclose(p.detach().numpy(), r, 1e-5, 1e-5, what)
assert compiled.traces == 2, compiled.traces  # the momentum buffers appear after step 1
ops = [type(n.op).__name__ for n in compiled.graph.nodes]
assert ops.count("AllReduceStart") == ops.count("AllReduceWait") == len(ddp.reducer.buckets) > 2
assert "AllReduce" not in ops, ops
# the graph that runs starts each bucket's all-reduce before the backward work of the next
# bucket (passes.start_collectives_early) and waits for them all only after the last start
nodes = compiled.optimized_graph.nodes
at = {n.output.id: i for i, n in enumerate(nodes)}
starts = [i for i, n in enumerate(nodes) if type(n.op).__name__ == "AllReduceStart"]
waits = [i for i, n in enumerate(nodes) if type(n.op).__name__ == "AllReduceWait"]
assert len(starts) == len(waits) == len(ddp.reducer.buckets) and max(starts) < min(waits)
for k in range(len(starts) - 1):
    made = [at[x.id] for x in nodes[starts[k + 1]].inputs if x.id in at]
    assert max(made) > starts[k], (k, starts, made)  # bucket k+1's gradient is made after
matmuls = [i for i, n in enumerate(nodes) if type(n.op).__name__ == "MatMul"]
assert starts[0] < max(matmuls), (starts, matmuls)

# the same weights on every rank, bit for bit
flat = ember.cat([p.detach().reshape(-1) for p in net.parameters()])
both = [ember.zeros_like(flat) for _ in range(N)]
dist.all_gather(both, flat)
assert ember.equal(both[0], both[1])

# no_sync() is part of the step's signature: a step traced with sync on is not reused
with ddp.no_sync():
    compiled(xs, ys)
assert compiled.traces == 3, compiled.traces
assert "AllReduceStart" not in [type(n.op).__name__ for n in compiled.graph.nodes]
print(f"rank {R}: compiled DDP == eager DDP == 1-rank NumPy", flush=True)
