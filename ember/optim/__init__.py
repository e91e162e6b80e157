"""Optimizers: SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad, Adadelta, Rprop, ASGD,
LBFGS, and LR schedulers in ``lr_scheduler``.

>>> import ember
>>> w = ember.nn.Parameter(ember.zeros(3))
>>> opt = ember.optim.Adam([w], lr=1e-3)
>>> opt.zero_grad()
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "lr_scheduler", "swa_utils", "Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
    "RMSprop", "Adagrad", "Adadelta", "Rprop", "ASGD", "LBFGS",
]  # fmt: skip
