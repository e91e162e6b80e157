"""Checkpoints: ``ember.save`` / ``ember.load`` in the safetensors format, never pickle.

- ``safetensors.py``: the raw file format (reader that treats files as hostile, and writer);
- ``structure.py``: nested objects <-> named tensors plus a JSON skeleton;
- ``atomic.py``: atomic writes (temp file, fsync, rename);
- ``checkpoint.py``: ``save`` and ``load``.
"""

from .checkpoint import load, save
from .errors import CheckpointError

__all__ = ["CheckpointError", "load", "save"]
