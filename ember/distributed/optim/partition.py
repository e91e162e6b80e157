"""How ``ZeroRedundancyOptimizer`` shares the parameters out: PyTorch's sorted-greedy rule, so
every rank owns the parameters it would own under ``torch.distributed.optim``.

Group by group (in order), the group's parameters are taken largest first (a stable sort by
element count, so equal sizes keep their order) and each goes to the rank holding the fewest
elements so far, counted over all groups, the lowest rank on a tie. Each rank gets one group per
group (possibly with no parameters) carrying the group's other settings.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence


def partition_parameters(param_groups: Sequence[dict], world_size: int) -> list[list[dict]]:
    """``out[rank]``: the parameter groups rank ``rank`` steps (PyTorch's partition).

    >>> import ember
    >>> ps = [ember.zeros(n) for n in (3, 5, 2, 4)]
    >>> parts = partition_parameters([{"params": ps, "lr": 0.1}], 2)
    >>> [[tuple(p.shape)[0] for p in groups[0]["params"]] for groups in parts]
    [[5, 2], [4, 3]]
    >>> parts[1][0]["lr"]
    0.1
    """
    if world_size < 1:
        raise ValueError(f"partition_parameters: world_size must be positive, got {world_size}")
    out: list[list[dict]] = [[] for _ in range(world_size)]
    sizes = [0] * world_size
    for group in param_groups:
        per_rank: list[list] = [[] for _ in range(world_size)]
        for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
            rank = sizes.index(min(sizes))
            per_rank[rank].append(p)
            sizes[rank] += p.numel()
        for rank, params in enumerate(per_rank):
            part = copy.copy(group)
            part["params"] = params
            out[rank].append(part)
    return out


__all__ = ["partition_parameters"]
