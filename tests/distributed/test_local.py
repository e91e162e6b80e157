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


def test_start_collectives_early_moves_starts_up_with_what_they_need():
    """``passes.start_collectives_early`` (DDP's bucket starts under ember.compile): a start
    moves up with the pure nodes it needs, never past a side effect, starts keep their order,
    and a fused node writing a state array in place is not pulled along."""
    from dataclasses import dataclass

    import numpy as np

    from ember.ops.base import Op, Spec
    from ember.ops.elementwise import Exp, Neg
    from ember.static import Graph
    from ember.static.passes import start_collectives_early

    @dataclass(frozen=True, eq=False)
    class Start(Op):
        has_side_effects = True
        schedule_early = True

        def forward(self, xp, x):
            return x

        def infer(self, x):
            return Spec(tuple(x.shape), x.dtype)

    @dataclass(frozen=True, eq=False)
    class Effect(Start):
        schedule_early = False

    def graph(effect: bool = False):
        g = Graph("s")
        x = g.add_input((2,), np.float32, "x")
        f32 = np.float32
        names = {}
        a = g.add_node(Exp(), [x], (2,), f32)  # the rest of backward
        if effect:
            g.add_node(Effect(), [a], (2,), f32)
        b = g.add_node(Exp(), [a], (2,), f32)
        w1 = g.add_node(Neg(), [x], (2,), f32)  # bucket 1's gradient (made late in the trace)
        w2 = g.add_node(Neg(), [w1], (2,), f32)  # bucket 2's
        s1 = g.add_node(Start(), [w1], (2,), f32)
        s2 = g.add_node(Start(), [w2], (2,), f32)
        g.outputs += [b, s1, s2]
        for v, n in ((a, "a"), (b, "b"), (w1, "w1"), (w2, "w2"), (s1, "s1"), (s2, "s2")):
            names[v.id] = n
        return g, names

    def order(g, names):
        return [names.get(n.output.id, type(n.op).__name__) for n in g.nodes]

    g, names = graph()
    assert order(start_collectives_early(g), names) == ["w1", "s1", "w2", "s2", "a", "b"]
    assert order(g, names) == ["a", "b", "w1", "w2", "s1", "s2"]  # the input is not changed
    g, names = graph(effect=True)  # a side effect before the starts: they wait for it
    assert order(start_collectives_early(g), names) == ["a", "Effect", "w1", "s1", "w2", "s2", "b"]
