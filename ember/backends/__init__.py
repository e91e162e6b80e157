"""``ember.backends``: switches for the GPU libraries, PyTorch's ``torch.backends`` names.

- ``ember.backends.cuda.matmul.allow_tf32`` (default False): float32 matrix products on cuBLAS
  may round their inputs to TensorFloat-32 (10-bit mantissa, float32 range and accumulation) on
  GPUs with compute capability 8.0 or more. ``ember.set_float32_matmul_precision`` is the same
  switch by name: ``"highest"`` (the default: full float32), ``"high"`` or ``"medium"`` (TF32
  allowed; ember has no bfloat16-based float32 matmul, so "medium" means TF32 too).
- ``ember.backends.cudnn.enabled`` (True), ``allow_tf32`` (True: convolutions may use TF32, as
  in PyTorch), ``deterministic`` (False), ``benchmark`` (False): the cuDNN frontend path of GPU
  convolutions (``nvidia-cudnn-frontend``, when installed).

The switches only change GPU numerics; the CPU (NumPy) always computes in full precision.

>>> import ember
>>> ember.backends.get_float32_matmul_precision()
'highest'
>>> ember.backends.cuda.matmul.allow_tf32
False
>>> ember.backends.cudnn.allow_tf32
True
"""

from __future__ import annotations

from . import cuda, cudnn
from .cuda import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["cuda", "cudnn", "get_float32_matmul_precision", "set_float32_matmul_precision"]
