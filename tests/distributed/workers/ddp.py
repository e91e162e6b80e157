"""2-rank DDP training equals 1-rank training on the combined batch: 5 SGD-momentum steps,
one of them accumulating two micro-batches under ``no_sync()``, a parameter only rank 0 uses
and a layer no rank uses (``find_unused_parameters``), tiny buckets so several run during
backward. Each rank also trains the 1-rank reference itself and compares (1e-5)."""

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.extra = nn.Parameter(ember.ones(3) * 0.5)  # used by rank 0's half only
        self.unused = nn.Linear(3, 3)  # used by nobody
        self.register_buffer("calls", ember.zeros(1))

    def forward(self, x, with_extra):
        y = self.fc2(ember.tanh(self.fc1(x)))
        return y * self.extra if with_extra else y


def loss_of(model, x, y, with_extra):
    return ((model(x, with_extra) - y) ** 2).mean()


ember.manual_seed(100 + R)  # different initial weights: DDP must copy rank 0's
local = Net()
ember.manual_seed(100)
reference = Net()  # what rank 0 starts from
ddp = DDP(local, bucket_cap_mb=0.0001, find_unused_parameters=True)
assert ddp.module is local and len(ddp.reducer.buckets) > 2, ddp.reducer.buckets
for (n, p), q in zip(local.named_parameters(), reference.parameters()):
    assert np.array_equal(p.detach().numpy(), q.detach().numpy()), n

opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
rng = np.random.default_rng(0)
for step in range(5):
    micro = 2 if step == 2 else 1
    batches = [
        (
            ember.tensor(rng.standard_normal((8, 4), np.float32)),
            ember.tensor(rng.standard_normal((8, 3), np.float32)),
        )
        for _ in range(micro)
    ]
    # 1 rank, the combined batch: mean of the two halves' losses (rank 0's half uses extra)
    ref_opt.zero_grad()
    for x, y in batches:
        halves = [
            loss_of(reference, x[4 * r : 4 * r + 4], y[4 * r : 4 * r + 4], r == 0) for r in range(N)
        ]
        (sum(halves) / N).backward()
    ref_opt.step()
    # 2 ranks: rank r trains on its half
    opt.zero_grad()
    for i, (x, y) in enumerate(batches):
        xs, ys = x[4 * R : 4 * R + 4], y[4 * R : 4 * R + 4]
        if i < micro - 1:
            with ddp.no_sync():
                loss_of(ddp, xs, ys, R == 0).backward()
        else:
            loss_of(ddp, xs, ys, R == 0).backward()
    assert local.unused.weight.grad is None, "a parameter no rank used got a gradient"
    assert local.extra.grad is not None
    opt.step()
    for (n, p), q in zip(local.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(
            p.detach().numpy(),
            q.detach().numpy(),
            rtol=1e-5,
            atol=1e-5,
            err_msg=f"step {step}: {n} on rank {R}",
        )

# the same weights on every rank, bit for bit
flat = ember.cat([p.detach().reshape(-1) for p in local.parameters()])
both = [ember.zeros_like(flat) for _ in range(N)]
dist.all_gather(both, flat)
assert ember.equal(both[0], both[1])

# broadcast_buffers: rank 0's buffers reach every rank at each forward
with ember.no_grad():
    local.calls.fill_(float(R + 7))
    ddp(ember.zeros(1, 4), False)
assert local.calls.item() == 7.0, local.calls

# without find_unused_parameters, a skipped parameter is an error naming it
strict = DDP(nn.Linear(2, 2))
strict.module.weight.grad = None
try:
    out = strict(ember.ones(1, 2))
    (out.detach() * 0 + strict.module.bias).sum().backward()  # weight not used
except dist.DistributedError as e:
    assert "weight" in str(e) and "find_unused_parameters" in str(e), e
else:
    raise AssertionError("no error for an unused parameter")

print(f"rank {R}: DDP == 1-rank training", flush=True)
