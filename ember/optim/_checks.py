"""Hyperparameter checks shared by the optimizers, with PyTorch's messages.

>>> from ember.optim._checks import check_hyper
>>> check_hyper("SGD", lr=0.1)
"""

from __future__ import annotations


def check_hyper(name: str, betas=None, **values: float) -> None:
    """Raise ``ValueError`` for a negative learning rate, epsilon, weight decay (or any other
    named value) and for betas outside [0, 1)."""
    for key, v in values.items():
        if v is not None and v < 0.0:
            label = "learning rate" if key == "lr" else f"{key} value"
            raise ValueError(f"{name}: invalid {label}: {v}")
    for i, b in enumerate(betas or ()):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"{name}: invalid beta parameter at index {i}: {b}")
