"""``ember.nn.parallel``: ``DistributedDataParallel`` (PyTorch's ``torch.nn.parallel``).

>>> from ember.nn.parallel import DistributedDataParallel
>>> DistributedDataParallel.__name__
'DistributedDataParallel'
"""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
