"""Optimizers: SGD, Adam, AdamW, RMSprop, Adagrad, and LR schedulers in ``lr_scheduler``.

>>> import ember
>>> w = ember.nn.Parameter(ember.zeros(3))
>>> opt = ember.optim.Adam([w], lr=1e-3)
>>> opt.zero_grad()
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["lr_scheduler", "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]
