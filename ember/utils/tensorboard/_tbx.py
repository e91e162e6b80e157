"""Lazy access to tensorboardX's protocol buffers and record checksum (never at ``import ember``).

Importing any part of tensorboardX runs its package ``__init__``, which imports PyTorch when it is
installed (about two seconds and a few hundred MB, for a type hint). ember needs none of that, so
while tensorboardX loads for the first time ``torch`` is marked unimportable; tensorboardX then
falls back to its NumPy-only path. A process that has imported torch or tensorboardX already is
left exactly as it is.

>>> from ember.utils.tensorboard._tbx import tbx
>>> event = tbx().event_pb2.Event(step=3)
>>> event.step
3
"""

from __future__ import annotations

import sys
import threading
from types import SimpleNamespace

from ..._errors import EmberError


class MissingDependencyError(EmberError, ImportError):
    """An optional package ember needs for this feature is not installed (says what to install).

    Also an ``ImportError``, so ``except ImportError`` fallbacks keep working.
    """


_LOCK = threading.Lock()
_MODULES: SimpleNamespace | None = None


def _import() -> SimpleNamespace:
    from google.protobuf import struct_pb2
    from tensorboardX.proto import (
        api_pb2,
        event_pb2,
        plugin_hparams_pb2,
        plugin_text_pb2,
        summary_pb2,
        tensor_pb2,
        tensor_shape_pb2,
    )
    from tensorboardX.record_writer import masked_crc32c

    return SimpleNamespace(
        api_pb2=api_pb2,
        event_pb2=event_pb2,
        plugin_hparams_pb2=plugin_hparams_pb2,
        plugin_text_pb2=plugin_text_pb2,
        summary_pb2=summary_pb2,
        tensor_pb2=tensor_pb2,
        tensor_shape_pb2=tensor_shape_pb2,
        struct_pb2=struct_pb2,
        masked_crc32c=masked_crc32c,
    )


def _load() -> SimpleNamespace:
    block = "torch" not in sys.modules and "tensorboardX" not in sys.modules
    if block:
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` -> ImportError
    try:
        return _import()
    except ImportError:
        if not block:
            raise
    finally:
        if block and "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    # a tensorboardX that cannot load without torch: load it the ordinary way
    for name in [m for m in sys.modules if m == "tensorboardX" or m.startswith("tensorboardX.")]:
        del sys.modules[name]
    return _import()


def tbx() -> SimpleNamespace:
    """tensorboardX's proto modules and ``masked_crc32c``, imported on first use.

    Raises a ``MissingDependencyError`` (an ``EmberError`` and ``ImportError``) naming
    ``pip install tensorboardX`` when it is missing.
    """
    global _MODULES
    if _MODULES is None:
        with _LOCK:
            if _MODULES is None:
                try:
                    _MODULES = _load()
                except ImportError as exc:
                    raise MissingDependencyError(
                        "ember.utils.tensorboard needs tensorboardX to write TensorBoard event "
                        f"files: pip install tensorboardX (import failed: {exc})"
                    ) from exc
    return _MODULES
