"""Checkpoints: ``ember.save`` / ``ember.load`` as safetensors; ``torch.save`` files read too.

- ``safetensors.py``: the raw file format (reader that treats files as hostile, and writer);
- ``structure.py``: nested objects <-> named tensors plus a JSON skeleton;
- ``atomic.py``: atomic writes (temp file, fsync, rename);
- ``torch_pickle.py``: the restricted unpickler (an allow-list of globals) for PyTorch pickles;
- ``torch_zip.py``: PyTorch's zip checkpoints (``torch.save``) read without torch;
- ``checkpoint.py``: ``save`` and ``load``.
"""

from .checkpoint import load, save
from .errors import CheckpointError

__all__ = ["CheckpointError", "load", "save"]
