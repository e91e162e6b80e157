"""ResNet (He et al., 2015) with torchvision's module names and initialization.

The state dict is torchvision's key for key and shape for shape (``conv1``, ``bn1``,
``layerK.i.conv1/bn1/conv2/bn2(/conv3/bn3)``, ``layerK.0.downsample.0/1``, ``fc``, with the
BatchNorm buffers ``running_mean``, ``running_var`` and ``num_batches_tracked``), so weights
exported from ``torchvision.models.resnet50`` into a safetensors file load with
``load_state_dict(strict=True)``.

>>> import ember.models
>>> net = ember.models.resnet18(num_classes=10)
>>> net.eval()(ember.zeros(1, 3, 32, 32)).shape
ember.Size([1, 10])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import nn
from .._tensor import Tensor
from ..functions.shape import flatten
from ._common import check_common

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50"]


def conv3x3(
    in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1
) -> nn.Conv2d:
    """3x3 convolution with padding and no bias.

    >>> conv3x3(4, 8, stride=2)
    Conv2d(4, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)
    """
    return nn.Conv2d(
        in_planes,
        out_planes,
        kernel_size=3,
        stride=stride,
        padding=dilation,
        groups=groups,
        bias=False,
        dilation=dilation,
    )


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution with no bias.

    >>> conv1x1(4, 8)
    Conv2d(4, 8, kernel_size=(1, 1), stride=(1, 1), bias=False)
    """
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convs with BatchNorm and a residual connection (ResNet-18/34).

    >>> import ember.models
    >>> block = ember.models.BasicBlock(8, 8)
    >>> block(ember.zeros(2, 8, 4, 4)).shape
    ember.Size([2, 8, 4, 4])
    """

    expansion: int = 1

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        groups: int = 1,
        base_width: int = 64,
        dilation: int = 1,
        norm_layer: Callable[[int], nn.Module] | None = None,
    ) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise ValueError("BasicBlock: dilation > 1 is not supported")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided here, as in torchvision's "ResNet V1.5"), 1x1 expand by 4, with
    BatchNorm and a residual connection (ResNet-50 and deeper).

    >>> import ember.models
    >>> down = ember.nn.Sequential(ember.models.resnet.conv1x1(8, 16), ember.nn.BatchNorm2d(16))
    >>> block = ember.models.Bottleneck(8, 4, downsample=down)
    >>> block(ember.zeros(2, 8, 4, 4)).shape
    ember.Size([2, 16, 4, 4])
    """

    expansion: int = 4

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        groups: int = 1,
        base_width: int = 64,
        dilation: int = 1,
        norm_layer: Callable[[int], nn.Module] | None = None,
    ) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    """ResNet: a 7x7 stride-2 stem (``conv1``, ``bn1``, ``relu``, ``maxpool``), four stages
    ``layer1``..``layer4`` of ``block`` (64, 128, 256, 512 planes, the last three strided),
    global average pooling and ``fc``. Arguments and initialization are torchvision's
    (Kaiming-normal fan-out convs, BatchNorm weight 1 and bias 0, ``fc`` keeps Linear's
    default, ``zero_init_residual`` zeroes each block's last BatchNorm weight); ``in_channels``
    sets the stem's input channels. Any input of at least 1x1 pixels runs (the strided stages
    keep 1-pixel maps at 1 pixel).

    >>> import ember.models
    >>> from ember.models import ResNet, BasicBlock
    >>> net = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=5, in_channels=1)
    >>> net.eval()(ember.zeros(2, 1, 8, 8)).shape
    ember.Size([2, 5])
    """

    def __init__(
        self,
        block: type[BasicBlock] | type[Bottleneck],
        layers: Sequence[int],
        num_classes: int = 1000,
        zero_init_residual: bool = False,
        groups: int = 1,
        width_per_group: int = 64,
        replace_stride_with_dilation: Sequence[bool] | None = None,
        norm_layer: Callable[[int], nn.Module] | None = None,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError(
                "ResNet: replace_stride_with_dilation should be None or a 3-element tuple, "
                f"got {replace_stride_with_dilation!r}"
            )
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(
            in_channels, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False
        )
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(
            block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0]
        )
        self.layer3 = self._make_layer(
            block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1]
        )
        self.layer4 = self._make_layer(
            block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2]
        )
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(
        self,
        block: type[BasicBlock] | type[Bottleneck],
        planes: int,
        blocks: int,
        stride: int = 1,
        dilate: bool = False,
    ) -> nn.Sequential:
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )
        layers = [
            block(
                self.inplanes,
                planes,
                stride,
                downsample,
                self.groups,
                self.base_width,
                previous_dilation,
                norm_layer,
            )
        ]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(
                block(
                    self.inplanes,
                    planes,
                    groups=self.groups,
                    base_width=self.base_width,
                    dilation=self.dilation,
                    norm_layer=norm_layer,
                )
            )
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        return self.fc(flatten(x, 1))


def _resnet(
    name: str,
    block: type[BasicBlock] | type[Bottleneck],
    layers: list[int],
    num_classes: int,
    in_channels: int,
    image_size: Sequence[int] | None,
    **kwargs,
) -> ResNet:
    check_common(name, num_classes, in_channels, image_size)
    return ResNet(block, layers, num_classes=num_classes, in_channels=in_channels, **kwargs)


def resnet18(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> ResNet:
    """ResNet-18 (BasicBlock, [2, 2, 2, 2]), torchvision's ``resnet18`` layout.

    ``kwargs`` go to ``ResNet`` (``zero_init_residual``, ``norm_layer``...); ``image_size`` is
    checked only: every input size runs.

    >>> import ember.models
    >>> net = ember.models.resnet18(num_classes=10, in_channels=1)
    >>> net.conv1.weight.shape, net.fc.weight.shape
    (ember.Size([64, 1, 7, 7]), ember.Size([10, 512]))
    """
    return _resnet(
        "resnet18", BasicBlock, [2, 2, 2, 2], num_classes, in_channels, image_size, **kwargs
    )


def resnet34(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> ResNet:
    """ResNet-34 (BasicBlock, [3, 4, 6, 3]), torchvision's ``resnet34`` layout.

    >>> import ember.models
    >>> len(ember.models.resnet34(num_classes=10).layer3)
    6
    """
    return _resnet(
        "resnet34", BasicBlock, [3, 4, 6, 3], num_classes, in_channels, image_size, **kwargs
    )


def resnet50(
    *,
    num_classes: int = 1000,
    in_channels: int = 3,
    image_size: Sequence[int] | None = None,
    **kwargs,
) -> ResNet:
    """ResNet-50 (Bottleneck, [3, 4, 6, 3]), torchvision's ``resnet50`` layout.

    >>> import ember.models
    >>> ember.models.resnet50(num_classes=10).fc.weight.shape
    ember.Size([10, 2048])
    """
    return _resnet(
        "resnet50", Bottleneck, [3, 4, 6, 3], num_classes, in_channels, image_size, **kwargs
    )
