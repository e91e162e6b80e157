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
import types

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


def namespace(name: str, source, names, doc: str | None = None) -> types.ModuleType:
    """Register module ``name`` (a PyTorch module path such as ``ember.nn.modules.linear``)
    holding the objects ``source`` (a module) has of ``names``: the same objects, not copies.
    Names ``source`` lacks are left out (``__all__`` lists those present), so a path gains a
    name when ember does. The upper layers call this for their PyTorch paths
    (``ember.utils.data.dataloader``, ``ember.nn.modules.*``).

    >>> import ember, sys
    >>> m = namespace("ember._example", ember.nn, ["Linear", "NoSuchLayer"])
    >>> m.Linear is ember.nn.Linear, m.__all__, ember._example is m
    (True, ['Linear'], True)
    >>> del sys.modules["ember._example"], ember._example
    """
    module = types.ModuleType(name, doc)
    module.__all__ = [n for n in names if hasattr(source, n)]
    for n in module.__all__:
        setattr(module, n, getattr(source, n))
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module


__all__ = ["accelerator", "backends", "cuda"]
