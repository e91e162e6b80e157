"""``ember.backends.mps`` (PyTorch's ``torch.backends.mps``): Apple's Metal backend, which ember
does not have, so scripts that test for it take their CPU or CUDA branch. ``ember.backends.mps``
is a name of this module, registered by ``ember/_aliases.py``.

>>> import ember
>>> ember.backends.mps.is_available(), ember.backends.mps.is_built()
(False, False)
"""


def is_available() -> bool:
    """Whether the MPS device can be used: never in ember.

    >>> import ember
    >>> ember.backends.mps.is_available()
    False
    """
    return False


def is_built() -> bool:
    """Whether ember was built with MPS support: it is not.

    >>> import ember
    >>> ember.backends.mps.is_built()
    False
    """
    return False


__all__ = ["is_available", "is_built"]
