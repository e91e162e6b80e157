"""Learning-rate schedules with PyTorch's formulas, call order and state dicts, one family a file:
``decay`` (step, exponential, linear, lambda, ...), ``cyclic`` (cosine annealing, cyclic,
one-cycle), ``composite`` (sequential, chained) and ``plateau``; the base class is in ``base``.

Call ``scheduler.step()`` after ``optimizer.step()``, once per epoch (or per batch for
OneCycleLR).

>>> import ember
>>> w = ember.tensor([1.0], requires_grad=True)
>>> opt = ember.optim.SGD([w], lr=1.0)
>>> sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(4):
...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
>>> lrs
[1.0, 0.5, 0.5, 0.25]
"""

from .base import LRScheduler, _LRScheduler  # noqa: F401  (_LRScheduler: PyTorch's old name)
from .composite import ChainedScheduler, SequentialLR
from .cyclic import CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .decay import (
    ConstantLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from .plateau import ReduceLROnPlateau

__all__ = [
    "LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
    "LambdaLR", "OneCycleLR", "SequentialLR", "ReduceLROnPlateau", "MultiplicativeLR", "ConstantLR",
    "PolynomialLR", "CosineAnnealingWarmRestarts", "CyclicLR", "ChainedScheduler",
]  # fmt: skip
