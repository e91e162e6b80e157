"""The tensor classes a checkpoint can hold, by tag: ``Tensor`` here, ``Parameter`` and
``Buffer`` registered by ``ember.nn`` (a layer above, so it registers them with this one).

Each class has a tag, the one flag its file records (``requires_grad`` for Tensor and
Parameter, ``persistent`` for Buffer) and a maker ``make(tensor, flag)`` wrapping a plain
tensor's storage.

>>> import ember
>>> from ember.serialization import tensor_types
>>> tag, flag = tensor_types.describe(ember.nn.Parameter(ember.ones(1)))
>>> tag, flag
('parameter', True)
>>> type(tensor_types.make(tag, ember.ones(1), flag)).__name__
'Parameter'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .._tensor import Tensor
from .errors import CheckpointError


class TensorType(NamedTuple):
    cls: type
    flag_of: Callable[[Any], bool]
    make: Callable[[Tensor, bool], Tensor]


def _plain(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


TYPES: dict[str, TensorType] = {"tensor": TensorType(Tensor, lambda t: t.requires_grad, _plain)}


def register(
    tag: str, cls: type, flag_of: Callable[[Any], bool], make: Callable[[Tensor, bool], Tensor]
) -> None:
    """Let checkpoints hold instances of the Tensor subclass ``cls`` under ``tag``.

    >>> from ember.serialization import tensor_types
    >>> "parameter" in tensor_types.TYPES
    True
    """
    TYPES[tag] = TensorType(cls, flag_of, make)


def describe(t: Tensor) -> tuple[str, bool]:
    """The tag and flag of a tensor to save; ``CheckpointError`` for a class with no tag."""
    for tag, entry in TYPES.items():
        if type(t) is entry.cls:
            return tag, bool(entry.flag_of(t))
    raise CheckpointError(
        f"save: cannot save a tensor of class {type(t).__qualname__}; checkpoints hold "
        f"{', '.join(e.cls.__name__ for e in TYPES.values())}"
    )


def make(tag: str, t: Tensor, flag: bool) -> Tensor:
    """A tensor of the class of ``tag`` over ``t``'s storage (``KeyError``: unknown tag)."""
    return TYPES[tag].make(t, flag)
