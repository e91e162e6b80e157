"""``ember.models``: a model zoo (torchvision's ``models`` for the classic image classifiers).

``vgg*`` and ``resnet*`` have torchvision's state-dict keys and shapes, so weights exported
from PyTorch into a safetensors file load directly::

    net = ember.models.resnet18(num_classes=1000)
    net.load_state_dict(ember.load("resnet18.safetensors"), strict=True)

``get_model(name, num_classes, in_channels, image_size)`` builds any of them by name for a
data set's geometry (digits 1x8x8, MNIST 1x28x28, CIFAR-10 3x32x32).

>>> import ember.models
>>> ember.models.list_models()  # doctest: +NORMALIZE_WHITESPACE
['cnn', 'lenet5', 'mlp', 'resnet18', 'resnet34', 'resnet50',
 'vgg11', 'vgg11_bn', 'vgg16', 'vgg16_bn']
>>> net = ember.models.get_model("lenet5", num_classes=10, in_channels=1, image_size=(28, 28))
>>> net(ember.zeros(2, 1, 28, 28)).shape
ember.Size([2, 10])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import resnet, simple, vgg
from .resnet import BasicBlock, Bottleneck, ResNet, resnet18, resnet34, resnet50
from .simple import MLP, LeNet5, SmallCNN, cnn, lenet5, mlp
from .vgg import VGG, vgg11, vgg11_bn, vgg16, vgg16_bn

__all__ = [
    "list_models",
    "get_model",
    "MLP",
    "SmallCNN",
    "LeNet5",
    "VGG",
    "ResNet",
    "BasicBlock",
    "Bottleneck",
    "mlp",
    "cnn",
    "lenet5",
    "vgg11",
    "vgg11_bn",
    "vgg16",
    "vgg16_bn",
    "resnet18",
    "resnet34",
    "resnet50",
]

_MODELS: dict[str, Callable] = {
    "cnn": cnn,
    "lenet5": lenet5,
    "mlp": mlp,
    "resnet18": resnet18,
    "resnet34": resnet34,
    "resnet50": resnet50,
    "vgg11": vgg11,
    "vgg11_bn": vgg11_bn,
    "vgg16": vgg16,
    "vgg16_bn": vgg16_bn,
}


def list_models() -> list[str]:
    """The names ``get_model`` accepts, sorted.

    >>> import ember.models
    >>> "resnet18" in ember.models.list_models()
    True
    """
    return sorted(_MODELS)


def get_model(
    name: str,
    num_classes: int = 10,
    in_channels: int = 3,
    image_size: Sequence[int] = (32, 32),
    **kwargs,
):
    """Build the model called ``name`` for images of ``in_channels x image_size`` and
    ``num_classes`` classes; ``kwargs`` go to the model's builder (``hidden`` for ``mlp``,
    ``dropout`` for ``cnn``, ``zero_init_residual`` for ``resnet*``...).

    Names are matched ignoring case, ``-`` standing for ``_``. An unknown name raises
    ``ValueError`` listing the known ones.

    >>> import ember.models
    >>> net = ember.models.get_model("cnn", num_classes=10, in_channels=1, image_size=(8, 8))
    >>> net(ember.zeros(3, 1, 8, 8)).shape
    ember.Size([3, 10])
    >>> ember.models.get_model("resnet9")
    Traceback (most recent call last):
    ...
    ValueError: get_model: unknown model 'resnet9'; known models: cnn, lenet5, mlp, ...
    """
    if not isinstance(name, str):
        raise TypeError(f"get_model: name must be a str, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    builder = _MODELS.get(key)
    if builder is None:
        raise ValueError(
            f"get_model: unknown model {name!r}; known models: {', '.join(list_models())}"
        )
    try:
        return builder(
            num_classes=num_classes, in_channels=in_channels, image_size=image_size, **kwargs
        )
    except TypeError as e:
        if "unexpected keyword argument" in str(e):
            raise TypeError(f"get_model({key!r}): {e}") from None
        raise
