"""Optimizers: SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad, Adadelta, Rprop, ASGD,
LBFGS, and LR schedulers in ``lr_scheduler``.

>>> import ember
>>> w = ember.nn.Parameter(ember.zeros(3))
>>> opt = ember.optim.Adam([w], lr=1e-3)
>>> opt.zero_grad()
"""

from . import lr_scheduler
from .adadelta import ASGD, Adadelta, Rprop
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .lbfgs import LBFGS
from .nadam import NAdam, RAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "lr_scheduler", "Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
    "Adagrad", "Adadelta", "Rprop", "ASGD", "LBFGS",
]  # fmt: skip
