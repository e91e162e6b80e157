"""Checkpoints: ``ember.save`` / ``ember.load`` as safetensors; ``torch.save`` files read too.

- ``safetensors.py``: the raw file format (reader that treats files as hostile, and writer);
- ``structure.py``: nested objects <-> named tensors plus a JSON skeleton;
- ``atomic.py``: atomic writes (temp file, fsync, rename);
- ``pickled.py``: whole objects (modules, optimizers, user classes) as a pickle whose tensors
  stay in the safetensors buffer;
- ``unpickler.py``: the weights-only unpickler (a port of PyTorch's) and the trusted one;
- ``safe_globals.py``: the user's allowlist (``add_safe_globals``, ``safe_globals``...);
- ``tensor_types.py``: the tensor classes a checkpoint holds (Parameter, Buffer: registered);
- ``torch_pickle.py``: PyTorch's pickle vocabulary (rebuild functions, storages, ``torch.X``
  as ``ember.X``); ``torch_objects.py``: PyTorch's module/optimizer state on ember's objects;
- ``torch_zip.py`` / ``torch_legacy.py``: the two file formats of ``torch.save``;
- ``checkpoint.py``: ``save`` and ``load``.
"""

from .checkpoint import load, save
from .errors import CheckpointError, WeightsOnlyError
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = [
    "CheckpointError",
    "WeightsOnlyError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]
