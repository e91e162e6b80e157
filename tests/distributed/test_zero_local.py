"""ZeroRedundancyOptimizer without MPI: its partition (the ranks own the parameters they own
under PyTorch, whose ``_partition_parameters`` runs here on a bare instance: it reads only
``param_groups`` and ``world_size``; plus hand-checked cases of the sorted-greedy rule) and
what it refuses before it needs a process group. The 2-rank tests are workers/zero.py."""

import pytest
import torch
from torch.distributed.optim import ZeroRedundancyOptimizer as TorchZero

import ember
from ember.distributed import DistributedError
from ember.distributed.optim import ZeroRedundancyOptimizer, partition_parameters

TABLE = [
    ([[10]], 2),
    ([[3, 5, 2, 4]], 2),
    ([[1, 1, 1, 1, 1]], 2),
    ([[7, 7, 3, 3, 3, 1]], 3),
    ([[100, 1, 1, 1, 1, 1, 1]], 2),
    ([[4, 4], [4, 4, 1]], 2),
    ([[6, 2, 9], [5], [1, 8, 8, 3]], 3),
    ([[2, 3]], 4),
    ([[64 * 128, 128, 10 * 128, 10, 5, 5 * 128]], 2),
    ([[12, 0, 5, 5, 7]], 3),
    ([[1000, 999, 998, 3, 2, 1]], 5),
]


def _torch_partition(sizes: list, world_size: int) -> list:
    """PyTorch's partition of groups of tensors with these sizes: per rank, per group, the
    (group, position) of each parameter it owns, in its order."""
    z = TorchZero.__new__(TorchZero)
    z._partition_parameters_cache = []
    z.world_size = world_size
    z.param_groups = [{"params": [torch.zeros(n) for n in g], "lr": 0.1} for g in sizes]
    where = {
        id(p): (gi, i) for gi, g in enumerate(z.param_groups) for i, p in enumerate(g["params"])
    }
    return [
        [[where[id(p)] for p in g["params"]] for g in groups]
        for groups in z._partition_parameters()
    ]


def _ember_partition(sizes: list, world_size: int) -> list:
    groups = [{"params": [ember.zeros(n) for n in g], "lr": 0.1} for g in sizes]
    where = {id(p): (gi, i) for gi, g in enumerate(groups) for i, p in enumerate(g["params"])}
    parts = partition_parameters(groups, world_size)
    for per_rank in parts:  # every rank has one group per group, with its settings
        assert [g["lr"] for g in per_rank] == [0.1] * len(sizes)
    return [[[where[id(p)] for p in g["params"]] for g in groups] for groups in parts]


@pytest.mark.parametrize("sizes,world_size", TABLE)
def test_partition_equals_pytorch(sizes, world_size):
    assert _ember_partition(sizes, world_size) == _torch_partition(sizes, world_size)


def _owned_sizes(sizes, world_size, partition):
    return [
        [[sizes[gi][i] for gi, i in g] for g in groups] for groups in partition(sizes, world_size)
    ]


@pytest.mark.parametrize("partition", [_ember_partition, _torch_partition])
def test_partition_hand_checked(partition):
    # largest first, each to the emptiest rank, the lowest on a tie
    assert _owned_sizes([[3, 5, 2, 4]], 2, partition) == [[[5, 2]], [[4, 3]]]
    # counts carry over groups: the second group's 4 goes to the rank left lighter (2 < 6),
    # then the 1 to rank 0 on the 6 == 6 tie
    assert _owned_sizes([[6, 2], [4, 1]], 2, partition) == [[[6], [1]], [[2], [4]]]
    # equal sizes keep their order (stable sort)
    assert partition([[1, 1, 1]], 2) == [[[(0, 0), (0, 2)]], [[(0, 1)]]]
    # more ranks than parameters: the extra ranks own nothing
    assert _owned_sizes([[2, 3]], 4, partition) == [[[3]], [[2]], [[]], [[]]]


def test_partition_refuses_no_ranks():
    with pytest.raises(ValueError, match="partition_parameters: world_size must be positive"):
        partition_parameters([{"params": [ember.zeros(2)]}], 0)


def test_refusals_name_the_optimizer_and_the_problem():
    w = ember.nn.Parameter(ember.ones(3))
    Adam = ember.optim.Adam
    with pytest.raises(DistributedError, match="ZeroRedundancyOptimizer: overlap_with_ddp=True"):
        ZeroRedundancyOptimizer([w], Adam, overlap_with_ddp=True)
    with pytest.raises(TypeError, match="optimizer_class must be an optimizer class"):
        ZeroRedundancyOptimizer([w], "adam")
    with pytest.raises(TypeError, match="optimizer_class must be an optimizer class"):
        ZeroRedundancyOptimizer([w], torch.optim.Adam)
    wide = ember.nn.Parameter(ember.ones(2, dtype=ember.float64))
    with pytest.raises(
        ValueError, match="same dtype and device, got ember.float32 on cpu and ember.float64"
    ):
        ZeroRedundancyOptimizer([w, wide], Adam)
    with pytest.raises(ValueError, match="ZeroRedundancyOptimizer: got an empty parameter list"):
        ZeroRedundancyOptimizer([], Adam)
    with pytest.raises(ValueError, match="ZeroRedundancyOptimizer: got an empty parameter list"):
        ZeroRedundancyOptimizer([{"params": []}], Adam)
    with pytest.raises(DistributedError, match="default process group has not been initialized"):
        ZeroRedundancyOptimizer([w], Adam, lr=0.1)
