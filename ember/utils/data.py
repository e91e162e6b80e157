"""``ember.utils.data``: the same objects as ``ember.data``, for code written against
``torch.utils.data``, with PyTorch's submodule paths ``ember.utils.data.dataloader``,
``.dataset`` and ``.sampler`` holding what PyTorch's export (of what ember has).

>>> from ember.utils.data import TensorDataset, DataLoader, default_collate
>>> default_collate([1, 2])
tensor([1, 2])
>>> from ember.utils.data.dataloader import DataLoader as Loader
>>> Loader is DataLoader
True
"""

from .. import _aliases
from .. import data as _data
from ..data import *  # noqa: F403
from ..data import __all__  # noqa: F401
from ..data import dataset as _dataset
from ..data import distributed as _distributed
from ..data import sampler as _sampler

# PyTorch's submodules and their __all__ (torch 2.13): ember's modules of the same name export
# the same names, except dataloader, where PyTorch also exports the collate helpers
SUBMODULES = {
    "distributed": tuple(_distributed.__all__),
    "dataloader": ("DataLoader", "get_worker_info", "default_collate", "default_convert"),
    "dataset": tuple(_dataset.__all__),
    "sampler": tuple(_sampler.__all__),
}

for _name, _names in SUBMODULES.items():
    _aliases.namespace(f"{__name__}.{_name}", _data, _names, f"torch.utils.data.{_name}'s names.")
