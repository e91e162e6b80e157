"""``ember.distributed.optim``: optimizers for data-parallel training (PyTorch's
``torch.distributed.optim``): ``ZeroRedundancyOptimizer`` (ZeRO stage 1).

>>> from ember.distributed.optim import ZeroRedundancyOptimizer
>>> ZeroRedundancyOptimizer.__name__
'ZeroRedundancyOptimizer'
"""

from .partition import partition_parameters
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer", "partition_parameters"]
