"""``ember.nn``: modules, parameters, containers and initialization (PyTorch's ``torch.nn``).

>>> import ember
>>> from ember import nn
>>> net = nn.Sequential()
>>> isinstance(net, nn.Module), nn.Parameter(ember.zeros(1)).requires_grad
(True, True)
"""

from . import init, utils
from . import layers as _layers
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import *  # noqa: F403  (layers add themselves to layers/__init__.py)
from .module import Module
from .parameter import Buffer, Parameter

__all__ = [
    "init",
    "Module",
    "Parameter",
    "Buffer",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    *getattr(_layers, "__all__", []),
]


def __getattr__(name: str):
    # ``ember.nn.functional`` and ``ember.nn.parallel`` (DDP) are imported on first use, so
    # they may import ember.nn freely.
    if name in ("functional", "parallel"):
        import importlib

        return importlib.import_module(".functional", __name__)
    raise AttributeError(f"module 'ember.nn' has no attribute '{name}'")


# torch.nn.modules.* paths: built from the names above, so imported last
from . import modules  # noqa: E402
