"""PyTorch's module paths for ember's one backend package, registered here and nowhere else.

PyTorch code writes ``torch.cuda`` (GPUs, memory, streams, seeds) and ``torch.backends.cuda`` /
``torch.backends.cudnn`` (library switches). ember keeps all of that in one package,
``ember/backend/``: ``cuda.py`` is the one CUDA module (CuPy loading, devices, memory, streams,
seeds and the cuBLAS TF32 switch), ``cudnn.py`` holds the cuDNN switches. The PyTorch spellings
are names of those same module objects, with no code of their own:

==========================  ==========================
``ember.cuda``              ``ember.backend.cuda``
``ember.backends``          ``ember.backend``
``ember.backends.cuda``     ``ember.backend.cuda``
``ember.backends.cudnn``    ``ember.backend.cudnn``
==========================  ==========================

so ``import ember.cuda``, ``import ember.backends.cuda``, ``from ember.backends import cudnn``
and attribute access all give the one module (setting ``ember.backends.cudnn.enabled`` sets
what the convolutions read).

>>> import ember, ember.backends.cudnn
>>> ember.cuda is ember.backends.cuda is ember.backend.cuda
True
>>> ember.backends.cudnn is ember.backend.cudnn
True
"""

import sys

from . import backend as backends
from .backend import cuda, cudnn

ALIASES = {
    "ember.cuda": cuda,
    "ember.backends": backends,
    "ember.backends.cuda": cuda,
    "ember.backends.cudnn": cudnn,
}
sys.modules.update(ALIASES)

__all__ = ["backends", "cuda"]
