"""2 ranks: ZeroRedundancyOptimizer(Adam) + DDP trains as plain Adam + DDP and as 1-rank Adam
on the combined batch (5 steps, 1e-5), in both storage modes; each rank holds the state of its
own share only; the consolidated state dict equals plain Adam's and loads back; a group added
later and a changed learning rate reach the ranks' optimizers; misuse gives clear errors."""

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed.optim import ZeroRedundancyOptimizer, partition_parameters
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
R, N = dist.get_rank(), dist.get_world_size()
assert N == 2, N
TOL = {"rtol": 1e-5, "atol": 1e-5}


def make_net(seed):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 9), nn.Tanh(), nn.Linear(9, 3))


def batches(steps, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (
            ember.tensor(rng.standard_normal((8, 6), np.float32)),
            ember.tensor(rng.standard_normal((8, 3), np.float32)),
        )
        for _ in range(steps)
    ]


def loss_of(model, x, y):
    return ((model(x) - y) ** 2).mean()


def train_ddp(model, opt, data, lr_at=None):
    """DDP steps, rank r on its half of each batch; ``lr_at``: {step: lr} set before it."""
    ddp = DDP(model)
    for step, (x, y) in enumerate(data):
        if lr_at and step in lr_at:
            for g in opt.param_groups:
                g["lr"] = lr_at[step]
        opt.zero_grad()
        loss_of(ddp, x[4 * R : 4 * R + 4], y[4 * R : 4 * R + 4]).backward()
        opt.step()


def train_one_rank(model, opt, data, lr_at=None):
    for step, (x, y) in enumerate(data):
        if lr_at and step in lr_at:
            for g in opt.param_groups:
                g["lr"] = lr_at[step]
        opt.zero_grad()
        (
            sum(loss_of(model, x[4 * r : 4 * r + 4], y[4 * r : 4 * r + 4]) for r in range(N)) / N
        ).backward()
        opt.step()


def assert_same(a, b, what, exact=False):
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        if exact:
            assert np.array_equal(p.detach().numpy(), q.detach().numpy()), (
                f"{what}: {n} on rank {R}"
            )
        else:
            np.testing.assert_allclose(
                p.detach().numpy(), q.detach().numpy(), **TOL, err_msg=f"{what}: {n} on rank {R}"
            )


def assert_same_on_every_rank(model, what):
    flat = ember.cat([p.detach().reshape(-1) for p in model.parameters()])
    both = [ember.zeros_like(flat) for _ in range(N)]
    dist.all_gather(both, flat)
    assert ember.equal(both[0], both[1]), f"{what}: the ranks' weights differ"


LR = {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.01}
DATA = batches(5)

# -- training: ZeRO(Adam) + DDP == Adam + DDP == 1-rank Adam, both storage modes --------------
plain = make_net(1)
plain_opt = ember.optim.Adam(plain.parameters(), **LR)
train_ddp(plain, plain_opt, DATA, lr_at={3: 0.005})
single = make_net(1)
train_one_rank(single, ember.optim.Adam(single.parameters(), **LR), DATA, lr_at={3: 0.005})
assert_same(plain, single, "Adam + DDP vs 1-rank Adam")

for as_views in (False, True):
    zero_net = make_net(100 + R if R else 1)  # DDP copies rank 0's weights
    zero = ZeroRedundancyOptimizer(
        zero_net.parameters(), ember.optim.Adam, parameters_as_bucket_view=as_views, **LR
    )
    train_ddp(zero_net, zero, DATA, lr_at={3: 0.005})
    what = f"ZeRO(bucket views={as_views})"
    assert_same(zero_net, plain, f"{what} vs Adam + DDP", exact=True)
    assert_same(zero_net, single, f"{what} vs 1-rank Adam")
    assert_same_on_every_rank(zero_net, what)
    assert zero.param_groups[0]["lr"] == 0.005 == zero.optim.param_groups[0]["lr"]
    if as_views:  # the parameters live in the all-gather's buffer
        base = zero._shards.buffer._data
        assert all(np.shares_memory(p._data, base) for p in zero_net.parameters())

# -- the state is sharded: this rank's entries are its partition's, and only those ----------
params = list(zero_net.parameters())
mine = partition_parameters([{"params": params}], N)[R][0]["params"]
assert set(map(id, zero.optim.state)) == set(map(id, mine)), "state of parameters not owned"
state_bytes = sum(
    v._data.nbytes for s in zero.optim.state.values() for v in s.values() if v._data.ndim
)
assert state_bytes == 2 * 4 * sum(p.numel() for p in mine), state_bytes  # exp_avg, exp_avg_sq
full_bytes = 2 * 4 * sum(p.numel() for p in params)
owned = [None] * N
position = {id(p): i for i, p in enumerate(params)}
dist.all_gather_object(owned, sorted(position[id(p)] for p in mine))
assert sorted(owned[0] + owned[1]) == list(range(len(params))), owned  # each owned once
assert not set(owned[0]) & set(owned[1]), owned
print(f"rank {R}: state {state_bytes} of {full_bytes} bytes, parameters {owned[R]}", flush=True)

# -- consolidated state dict == plain Adam's; loads back and trains on the same ---------------
try:
    zero.state_dict()
except dist.DistributedError as e:
    assert "consolidate_state_dict(to=" in str(e), e
else:
    raise AssertionError("state_dict() before consolidate_state_dict() gave no error")
zero.consolidate_state_dict(to=0)
want = plain_opt.state_dict()
if R == 0:
    got = zero.state_dict()
    assert got["param_groups"] == want["param_groups"], (got["param_groups"], want["param_groups"])
    assert list(got["state"]) == list(want["state"]), (list(got["state"]), list(want["state"]))
    for i, entries in want["state"].items():
        assert list(got["state"][i]) == list(entries), (i, list(got["state"][i]))
        for k, v in entries.items():
            assert np.array_equal(got["state"][i][k].numpy(), v.numpy()), (i, k)
else:
    got = None
    try:
        zero.state_dict()  # consolidated on rank 0 only
    except dist.DistributedError as e:
        assert "consolidate_state_dict(to=1)" in str(e), e
    else:
        raise AssertionError("rank 1's state_dict() after consolidating to 0 gave no error")
box = [got]
dist.broadcast_object_list(box, src=0)
saved = box[0]

MORE = batches(2, seed=1)
resumed = make_net(7)
with ember.no_grad():
    for p, q in zip(resumed.parameters(), plain.parameters()):
        p.copy_(q)
resumed_opt = ZeroRedundancyOptimizer(resumed.parameters(), ember.optim.Adam, lr=0.5)
resumed_opt.load_state_dict(saved)
assert (
    resumed_opt.param_groups[0]["lr"] == 0.005 and resumed_opt.optim.param_groups[0]["lr"] == 0.005
)
assert len(resumed_opt.optim.state) == len(mine)
train_ddp(resumed, resumed_opt, MORE)
train_ddp(plain, plain_opt, MORE)
assert_same(resumed, plain, "ZeRO loaded from the consolidated state vs Adam continued", exact=True)

# consolidated on rank 1 this time: the same dict there
resumed_opt.consolidate_state_dict(to=1)
if R == 1:
    again = resumed_opt.state_dict()
    want = plain_opt.state_dict()
    assert again["param_groups"] == want["param_groups"]
    for i, entries in want["state"].items():
        for k, v in entries.items():
            assert np.array_equal(again["state"][i][k].numpy(), v.numpy()), (i, k)


# -- a group added later: the earlier owners stay, the new group trains as in plain Adam ------
def two_groups(seed):
    net = make_net(seed)
    head = nn.Linear(3, 3)
    with ember.no_grad():
        head.weight.copy_(ember.arange(9.0).reshape(3, 3) / 10)
        head.bias.fill_(0.1)
    return nn.Sequential(net, head), net, head


grown, g_body, g_head = two_groups(3)
z = ZeroRedundancyOptimizer(g_body.parameters(), ember.optim.Adam, lr=0.01)
before = [p for g in z.optim.param_groups for p in g["params"]]
z.add_param_group({"params": list(g_head.parameters()), "lr": 0.02})
assert [p for p in z.optim.param_groups[0]["params"]] == before
assert len(z.param_groups) == 2 == len(z.optim.param_groups)
ref, r_body, r_head = two_groups(3)
ref_opt = ember.optim.Adam(
    [{"params": list(r_body.parameters())}, {"params": list(r_head.parameters()), "lr": 0.02}],
    lr=0.01,
)
train_ddp(grown, z, DATA)
train_ddp(ref, ref_opt, DATA)
assert_same(grown, ref, "ZeRO with an added group vs Adam", exact=True)
assert_same_on_every_rank(grown, "ZeRO with an added group")


# -- misuse -------------------------------------------------------------------------------
def refused(fn, *words):
    try:
        fn()
    except (ember.EmberError, ValueError, TypeError) as e:
        for w in words:
            assert w in str(e), (w, str(e))
    else:
        raise AssertionError(f"no error (expected one saying {words})")


refused(lambda: ember.compile(zero.step)(), "ZeroRedundancyOptimizer.step: not supported inside")
refused(lambda: zero.consolidate_state_dict(to=2), "consolidate_state_dict: to=2", "group of 2")
refused(
    lambda: zero.add_param_group({"params": [nn.Parameter(ember.ones(2, dtype=ember.float64))]}),
    "same dtype and device",
)
assert len(zero.param_groups) == 1 == len(zero.optim.param_groups)  # nothing half added
refused(
    lambda: zero.load_state_dict({"state": {}, "param_groups": []}),
    "load_state_dict",
    "0 parameter groups",
)

print(f"rank {R}: ZeRO == Adam + DDP == 1-rank Adam", flush=True)
