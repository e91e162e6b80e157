"""DDP ``join()`` with uneven inputs at 2 ranks: rank 0 has 3 batches, rank 1 has 5. No hang;
at every step the gradients are PyTorch's (the joined rank contributes zeros; divided by the
world size with ``divide_by_initial_world_size=True``, by the ranks still training with False),
checked against NumPy's closed form; afterwards both ranks hold the last joiner's weights.
Also ``find_unused_parameters``, a broadcast buffer, ``throw_on_early_termination`` and a
non-Joinable refused."""

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed.algorithms import Join
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
B, STEPS = 4, (3, 5)


class Net(nn.Module):
    def __init__(self, with_unused: bool):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.unused = nn.Linear(2, 2) if with_unused else None
        self.register_buffer("scale", ember.ones(3))

    def forward(self, x):
        return self.fc(x) * self.scale


rng = np.random.default_rng(0)
data = [
    [(rng.standard_normal((B, 4)), rng.standard_normal((B, 3))) for _ in range(STEPS[r])]
    for r in range(N)
]


def numpy_grads(w, b, x, y):
    """d/d(W, b) of mean((x W^T + b - y)^2)."""
    d = 2 * (x @ w.T + b - y) / y.size
    return d.T @ x, d.sum(0)


def run(divide: bool, find_unused: bool) -> None:
    ember.manual_seed(7 + R)
    ddp = DDP(Net(find_unused), find_unused_parameters=find_unused)
    fc = ddp.module.fc
    w, b = (
        fc.weight.detach().numpy().astype(np.float64),
        fc.bias.detach().numpy().astype(np.float64),
    )
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join(divide_by_initial_world_size=divide):
        for step, (x, y) in enumerate(data[R]):
            opt.zero_grad()
            (
                (ddp(ember.tensor(x, dtype=ember.float32)) - ember.tensor(y, dtype=ember.float32))
                ** 2
            ).mean().backward()
            # PyTorch's rule: the sum over the ranks still training / world size (or / their count)
            training = [r for r in range(N) if step < STEPS[r]]
            gw, gb = (sum(g) for g in zip(*(numpy_grads(w, b, *data[r][step]) for r in training)))
            n = N if divide else len(training)
            what = f"step {step} rank {R} divide={divide}"
            np.testing.assert_allclose(fc.weight.grad.numpy(), gw / n, 1e-5, 1e-6, what)
            np.testing.assert_allclose(fc.bias.grad.numpy(), gb / n, 1e-5, 1e-6, what)
            assert not find_unused or ddp.module.unused.weight.grad is None
            opt.step()
            w, b = w - 0.1 * gw / n, b - 0.1 * gb / n
    for step in range(len(data[R]), max(STEPS)):  # the steps the other rank took after us
        training = [r for r in range(N) if step < STEPS[r]]
        gw, gb = (sum(g) for g in zip(*(numpy_grads(w, b, *data[r][step]) for r in training)))
        n = N if divide else len(training)
        w, b = w - 0.1 * gw / n, b - 0.1 * gb / n
    # after join: rank 0 (joined early, stale) holds the last joiner's (rank 1's) weights
    np.testing.assert_allclose(fc.weight.detach().numpy(), w, 1e-5, 1e-6, f"final rank {R}")
    np.testing.assert_allclose(fc.bias.detach().numpy(), b, 1e-5, 1e-6, f"final rank {R}")
    flat = ember.cat([p.detach().reshape(-1) for p in ddp.parameters()])
    both = [ember.zeros_like(flat) for _ in range(N)]
    dist.all_gather(both, flat)
    assert ember.equal(both[0], both[1])


run(divide=True, find_unused=False)
run(divide=False, find_unused=True)

# the join config is reset: a plain forward afterwards runs no join collectives
ddp = DDP(nn.Linear(4, 3))
with ddp.join():
    pass
ddp(ember.ones(2, 4)).sum().backward()

# throw_on_early_termination: every rank raises once rank 0 runs out
ddp = DDP(nn.Linear(4, 3))
raised = None
try:
    with ddp.join(throw_on_early_termination=True):
        for x, _ in data[R]:
            ddp(ember.tensor(x, dtype=ember.float32)).sum().backward()
except dist.DistributedError as e:
    raised = str(e)
assert raised is not None and "throw_on_early_termination" in raised, raised
assert ("rank 0 exhausted all inputs" if R == 0 else "at least one rank") in raised, raised

# bad input: a module that is not Joinable, nested joins
for bad, words in (([nn.Linear(1, 1)], "Linear is not a Joinable"), ([], "at least one")):
    try:
        Join(bad)
    except dist.DistributedError as e:
        assert words in str(e), e
    else:
        raise AssertionError(f"Join({bad}) accepted")
try:
    with ddp.join(), ddp.join():
        pass
except dist.DistributedError as e:
    assert "already inside a Join" in str(e), e
else:
    raise AssertionError("a nested join was accepted")
# eager only: a compiled step inside join() is refused, naming it; unknown hook arguments
step = ember.compile(lambda x: ddp(x).sum(), verbose=False)
try:
    with ddp.join():
        step(ember.ones(2, 4))
except dist.DistributedError as e:
    assert "DistributedDataParallel.join(): eager only" in str(e), e
else:
    raise AssertionError("join() inside ember.compile was accepted")
try:
    ddp.join_hook(divide=False)
except dist.DistributedError as e:
    assert "join_hook: unknown argument(s) ['divide']" in str(e), e
else:
    raise AssertionError("an unknown join_hook argument was accepted")
print(f"rank {R}: join == PyTorch's uneven-input semantics", flush=True)
