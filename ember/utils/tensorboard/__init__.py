"""TensorBoard logging with PyTorch's ``torch.utils.tensorboard`` interface.

``SummaryWriter`` writes real event files (through tensorboardX, imported on first use, never by
``import ember``) that ``tensorboard --logdir runs`` shows.

>>> import tempfile
>>> import ember
>>> from ember.utils.tensorboard import SummaryWriter
>>> with SummaryWriter(tempfile.mkdtemp()) as writer:
...     writer.add_scalar("loss", ember.tensor(0.5), 0)
"""

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
