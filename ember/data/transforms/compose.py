"""Putting transforms together: ``Compose`` (one after another) and ``Lambda`` (a
function as a transform).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..._errors import DTypeError

__all__ = ["Compose", "Lambda"]


class Compose:
    """Apply ``transforms`` one after the other.

    >>> import numpy as np
    >>> from ember.data.transforms import Compose, Normalize, ToTensor
    >>> t = Compose([ToTensor(), Normalize((0.5,), (0.25,))])
    >>> t(np.array([[0.5, 1.0]], dtype=np.float32))
    tensor([[[0., 2.]]])
    >>> print(t)
    Compose(
        ToTensor()
        Normalize(mean=(0.5,), std=(0.25,))
    )
    """

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)
        for t in self.transforms:
            if not callable(t):
                raise DTypeError(f"Compose: every transform must be callable, got {t!r}")

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class Lambda:
    """A transform made from a function (not picklable if it is a lambda, as in torchvision).

    >>> from ember.data.transforms import Lambda
    >>> Lambda(lambda x: x * 2)(3)
    6
    >>> Lambda(abs)
    Lambda()
    """

    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise DTypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
