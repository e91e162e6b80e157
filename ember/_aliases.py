"""PyTorch's module paths for ember's one backend package, registered here and nowhere else.

PyTorch code writes ``torch.cuda`` (GPUs, memory, streams, seeds) and ``torch.backends.cuda`` /
``torch.backends.cudnn`` (library switches). ember keeps all of that in one package,
``ember/backend/``: ``cuda.py`` is the one CUDA module (CuPy loading, devices, memory, streams,
seeds and the cuBLAS TF32 switch), ``cudnn.py`` holds the cuDNN switches, ``mps.py`` says there
is no Metal backend and ``accelerator.py`` is ``torch.accelerator`` (CUDA's answers under
device-neutral names). The PyTorch spellings
are names of those same module objects, with no code of their own:

==========================  ==========================
``ember.cuda``              ``ember.backend.cuda``
``ember.backends``          ``ember.backend``
``ember.backends.cuda``     ``ember.backend.cuda``
``ember.backends.cudnn``    ``ember.backend.cudnn``
``ember.backends.mps``      ``ember.backend.mps``
``ember.accelerator``       ``ember.backend.accelerator``
==========================  ==========================

so ``import ember.cuda``, ``import ember.backends.cuda``, ``from ember.backends import cudnn``
and attribute access all give the one module (setting ``ember.backends.cudnn.enabled`` sets
what the convolutions read).

>>> import ember, ember.backends.cudnn
>>> ember.cuda is ember.backends.cuda is ember.backend.cuda
True
>>> ember.backends.cudnn is ember.backend.cudnn
True
>>> ember.accelerator is ember.backend.accelerator, ember.backends.mps.is_built()
(True, False)
"""

import sys

from . import backend as backends
from .backend import accelerator, cuda, cudnn, mps

ALIASES = {
    "ember.cuda": cuda,
    "ember.backends": backends,
    "ember.backends.cuda": cuda,
    "ember.backends.cudnn": cudnn,
    "ember.backends.mps": mps,
    "ember.accelerator": accelerator,
}
sys.modules.update(ALIASES)

__all__ = ["accelerator", "backends", "cuda"]
