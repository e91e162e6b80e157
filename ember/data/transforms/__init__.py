"""Image transforms with torchvision's semantics: ``Compose``, ``ToTensor``, ``Normalize``,
``Resize``, ``CenterCrop``, ``RandomCrop``, ``RandomHorizontalFlip`` and ``Lambda``.

Images are NumPy arrays (``HxW`` or ``HxWxC``, as ember's datasets return them), Pillow images,
or ``CxHxW`` ember tensors (after ``ToTensor``). Random transforms draw from ember's default
generator (``ember.manual_seed`` makes them reproducible); inside a DataLoader *thread* worker
they draw from that worker's own generator (``get_worker_info().rng.ember``) so that workers
neither share nor reseed the main generator. Tensors that require grad or live on a GPU go
through ember ops; CPU tensors and arrays take a NumPy fast path (a few microseconds a sample).

>>> import numpy as np, ember
>>> from ember.data import transforms as T
>>> t = T.Compose([T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize((0.5,), (0.5,))])
>>> _ = ember.manual_seed(0)
>>> x = t(np.full((4, 4), 255, dtype=np.uint8))
>>> x.shape, x.dtype, float(x.max())
(ember.Size([1, 4, 4]), ember.float32, 1.0)
"""

from .compose import Compose, Lambda
from .crop import CenterCrop, RandomCrop
from .flip import RandomHorizontalFlip
from .images import TransformError
from .normalize import Normalize
from .resize import Resize
from .to_tensor import ToTensor

__all__ = [
    "CenterCrop",
    "Compose",
    "Lambda",
    "Normalize",
    "RandomCrop",
    "RandomHorizontalFlip",
    "Resize",
    "ToTensor",
    "TransformError",
]
