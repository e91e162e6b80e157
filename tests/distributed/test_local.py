"""The parts of data parallelism that need no MPI: DistributedSampler's indices against
PyTorch's, and the post-accumulate-grad hook against PyTorch's timing."""

import torch
from ember.utils.data.distributed import DistributedSampler

import ember


def test_sampler_indices_equal_pytorch_without_shuffling():
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for n in (1, 2, 5, 7, 10, 11):
        for replicas in (1, 2, 3, 4):
            for drop_last in (False, True):
                for rank in range(replicas):
                    args = (range(n), replicas, rank)
                    ours = DistributedSampler(*args, shuffle=False, drop_last=drop_last)
                    theirs = TorchSampler(*args, shuffle=False, drop_last=drop_last)
                    assert list(ours) == list(theirs), (n, replicas, rank, drop_last)
                    assert len(ours) == len(theirs)


def test_sampler_shuffles_by_epoch_the_same_on_every_rank():
    orders = []
    for epoch in (0, 0, 1):
        s = DistributedSampler(range(10), num_replicas=2, rank=0, seed=3)
        s.set_epoch(epoch)
        orders.append(list(s))
    assert orders[0] == orders[1] != orders[2]
    halves = [set(DistributedSampler(range(10), 2, r, seed=3)) for r in (0, 1)]
    assert halves[0] | halves[1] == set(range(10)) and not halves[0] & halves[1]


def _chain(lib, hook_log):
    lib.manual_seed(0)
    first = lib.ones(3, requires_grad=True)
    last = lib.ones(3, requires_grad=True)

    def hook(t):  # when last's gradient is final, first's is not computed yet
        hook_log.append((t is last, first.grad is None, t.grad.tolist()))

    for p in (first, last):
        p.register_post_accumulate_grad_hook(hook)
    return first, last


def test_post_accumulate_grad_hook_runs_when_the_gradient_is_final_as_in_pytorch():
    logs = []
    for lib in (ember, torch):
        log = []
        first, last = _chain(lib, log)
        y = (first * 2).exp()
        ((y * last) ** 2).sum().backward()
        logs.append([(a, b, [round(v, 3) for v in g]) for a, b, g in log])
    assert logs[0] == logs[1], logs
    assert logs[0][0][:2] == (True, True)  # last's hook ran before first had a gradient


def test_post_accumulate_grad_hook_sees_accumulated_grad_and_can_be_removed():
    w = ember.ones(2, requires_grad=True)
    seen = []
    h = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    h.remove()
    (w * 3).sum().backward()
    assert seen == [[3.0, 3.0], [6.0, 6.0]]
    x = ember.ones(2, requires_grad=True) * 2
    try:
        x.register_post_accumulate_grad_hook(print)
    except ember.AutogradError as e:
        assert "non-leaf" in str(e)
    else:
        raise AssertionError("no error")
