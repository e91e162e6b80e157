"""Image datasets: the bundled ``Digits``, ``MNIST``/``FashionMNIST`` (IDX files),
``CIFAR10`` (binary batches) and ``ImageFolder`` (Pillow), and ``open_dataset`` to open any
of them from ``"digits"`` or a folder, with a ``DatasetInfo`` (classes, channels, size, mean,
std). ember downloads nothing: the files are yours to place. Every reading problem raises
``DatasetError`` with one line naming the path.

Samples are ``(image, label)``: ``label`` a Python int, ``image`` a NumPy array (``HxW`` uint8
for MNIST, ``HxWx3`` uint8 for CIFAR10 and ImageFolder, ``HxW`` float32 in [0, 1] for Digits)
until a ``transform`` (see ``ember.data.transforms``) makes it a tensor.

>>> from ember.data.datasets import open_dataset
>>> from ember.data.transforms import Compose, Normalize, ToTensor
>>> ds, info = open_dataset("digits")
>>> ds.transform = Compose([ToTensor(), Normalize(info.mean, info.std)])
>>> x, y = ds[0]
>>> x.shape, x.dtype, y
(ember.Size([1, 8, 8]), ember.float32, 1)
"""

from ._common import SPLIT_SEED, DatasetError, DatasetInfo, VisionDataset
from ._open import detect_format, open_dataset
from .cifar import CIFAR10
from .digits import Digits
from .folder import IMG_EXTENSIONS, ImageFolder
from .mnist import MNIST, FashionMNIST

__all__ = [
    "CIFAR10",
    "IMG_EXTENSIONS",
    "SPLIT_SEED",
    "DatasetError",
    "DatasetInfo",
    "Digits",
    "FashionMNIST",
    "ImageFolder",
    "MNIST",
    "VisionDataset",
    "detect_format",
    "open_dataset",
]
