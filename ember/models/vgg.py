"""VGG (Simonyan and Zisserman, 2014) with torchvision's module names and initialization.

The state dict is torchvision's key for key and shape for shape (``features.N``, ``classifier.0``,
``classifier.3``, ``classifier.6``), so weights exported from ``torchvision.models.vgg16`` into a
safetensors file load with ``load_state_dict(strict=True)``.

Building one draws ~130 million random weights (a second or two)::

    net = ember.models.vgg16(num_classes=1000)
    net.load_state_dict(ember.load("vgg16.safetensors"), strict=True)

>>> import ember.models
>>> ember.models.vgg.cfgs["A"]  # the layer table of vgg11: 3x3 conv widths and "M" for max-pools
[64, 'M', 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M']
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import nn
from .._tensor import Tensor
from ..functions.shape import flatten
from ._common import check_common

__all__ = ["VGG", "make_layers", "cfgs", "vgg11", "vgg11_bn", "vgg16", "vgg16_bn"]

#: torchvision's layer tables: an int is a 3x3 conv with that many maps, "M" a 2x2 max-pool.
cfgs: dict[str, list[int | str]] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M"]
    + [512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def make_layers(
    cfg: Sequence[int | str],
    batch_norm: bool = False,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
) -> nn.Sequential:
    """The ``features`` Sequential for a layer table (torchvision's ``make_layers``).

    With ``image_size`` given, a 2x2 max-pool that would shrink a 1-pixel-high (or wide) map
    to nothing pools only along the other axis, or becomes an ``Identity`` (no parameters,
    so the state dict is unchanged): VGG then runs on 28x28 and 8x8 images too. With
    ``image_size=None`` (or 32x32 and larger) the layers are exactly torchvision's.

    >>> import ember.models
    >>> f = ember.models.vgg.make_layers([8, "M", 16, "M"], batch_norm=True, in_channels=1)
    >>> [type(m).__name__ for m in f]
    ['Conv2d', 'BatchNorm2d', 'ReLU', 'MaxPool2d', 'Conv2d', 'BatchNorm2d', 'ReLU', 'MaxPool2d']
    """
    layers: list[nn.Module] = []
    h, w = (None, None) if image_size is None else image_size
    for v in cfg:
        if v == "M":
            if h is None:
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
                continue
            kernel = (2 if h >= 2 else 1, 2 if w >= 2 else 1)
            if kernel == (2, 2):
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            elif kernel == (1, 1):
                layers.append(nn.Identity())
            else:
                layers.append(nn.MaxPool2d(kernel_size=kernel, stride=kernel))
            h, w = h // kernel[0], w // kernel[1]
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    """VGG: ``features`` (convs and pools), ``avgpool`` (``AdaptiveAvgPool2d((7, 7))``) and
    ``classifier`` (Linear 25088 -> 4096, ReLU, Dropout, Linear 4096 -> 4096, ReLU, Dropout,
    Linear 4096 -> ``num_classes``), initialized as torchvision does (Kaiming-normal fan-out
    convs with zero bias, BatchNorm weight 1 and bias 0, Linear weights normal(0, 0.01) with
    zero bias) when ``init_weights``.

    >>> import ember.models
    >>> from ember.models.vgg import VGG, make_layers
    >>> features = make_layers([16, "M", 512, "M"], in_channels=1)
    >>> net = VGG(features, num_classes=3, init_weights=False)
    >>> net.eval()(ember.zeros(1, 1, 8, 8)).shape  # features must end with 512 maps
    ember.Size([1, 3])
    """

    def __init__(
        self,
        features: nn.Module,
        num_classes: int = 1000,
        init_weights: bool = True,
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        x = self.features(x)
        x = self.avgpool(x)
        x = flatten(x, 1)
        return self.classifier(x)


def _vgg(
    name: str,
    cfg: str,
    batch_norm: bool,
    num_classes: int,
    in_channels: int,
    image_size: Sequence[int] | None,
    **kwargs,
) -> VGG:
    size = check_common(name, num_classes, in_channels, image_size)
    features = make_layers(cfgs[cfg], batch_norm, in_channels, size)
    return VGG(features, num_classes=num_classes, **kwargs)


def vgg11(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> VGG:
    """VGG-11 (configuration "A"), torchvision's ``vgg11`` layout.

    ``kwargs`` go to ``VGG`` (``init_weights``, ``dropout``); ``image_size`` only matters for
    inputs under 32x32 (see ``make_layers``).

    >>> import ember.models
    >>> # init_weights=False skips torchvision's init (quicker when weights will be loaded)
    >>> net = ember.models.vgg11(
    ...     num_classes=10, in_channels=1, image_size=(28, 28), init_weights=False
    ... )
    >>> type(net.features[-1]).__name__  # 28 -> 14 -> 7 -> 3 -> 1: the last pool is skipped
    'Identity'
    >>> net.eval()(ember.zeros(2, 1, 28, 28)).shape
    ember.Size([2, 10])
    """
    return _vgg("vgg11", "A", False, num_classes, in_channels, image_size, **kwargs)


def vgg11_bn(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> VGG:
    """VGG-11 with BatchNorm after every conv, torchvision's ``vgg11_bn`` layout.

    >>> import ember.models
    >>> from ember.models.vgg import cfgs, make_layers
    >>> f = make_layers(cfgs["A"][:2], batch_norm=True)  # the first layers of vgg11_bn's features
    >>> [type(m).__name__ for m in f]
    ['Conv2d', 'BatchNorm2d', 'ReLU', 'MaxPool2d']
    """
    return _vgg("vgg11_bn", "A", True, num_classes, in_channels, image_size, **kwargs)


def vgg16(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> VGG:
    """VGG-16 (configuration "D"), torchvision's ``vgg16`` layout.

    >>> import ember.models
    >>> from ember.models.vgg import cfgs
    >>> sum(isinstance(v, int) for v in cfgs["D"])  # 13 convs (+ 3 Linear = 16 weight layers)
    13
    """
    return _vgg("vgg16", "D", False, num_classes, in_channels, image_size, **kwargs)


def vgg16_bn(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> VGG:
    """VGG-16 with BatchNorm after every conv, torchvision's ``vgg16_bn`` layout.

    >>> import ember.models
    >>> from ember.models.vgg import cfgs, make_layers
    >>> len(make_layers(cfgs["D"], batch_norm=True))  # vgg16_bn's features: 13 x 3 layers + 5 pools
    44
    """
    return _vgg("vgg16_bn", "D", True, num_classes, in_channels, image_size, **kwargs)
