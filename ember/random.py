"""Random number generation: ``manual_seed``, ``seed``, ``Generator``.

One default generator (NumPy's PCG64) feeds every random op unless a ``generator=`` is given;
``manual_seed`` reseeds it (and CuPy's, when a GPU is in use), so runs are reproducible.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(2)
>>> _ = ember.manual_seed(0); b = ember.rand(2)
>>> bool((a == b).all())
True
"""

from __future__ import annotations

import numpy as np


class Generator:
    """A random number generator with PyTorch's ``manual_seed`` / ``get_state`` surface.

    >>> import ember
    >>> g = ember.Generator().manual_seed(1)
    >>> ember.randn(2, generator=g).shape
    ember.Size([2])
    """

    def __init__(self, device="cpu") -> None:
        self.device = device
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self.rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed) % (2**64)
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy and return the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % (2**63)))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        """The generator's state as a plain dict (JSON-able, no pickle)."""
        return {"seed": self._seed, "bit_generator": self.rng.bit_generator.state}

    def set_state(self, state: dict) -> None:
        self._seed = state["seed"]
        self.rng.bit_generator.state = state["bit_generator"]


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and the GPU's, when CuPy is loaded).

    >>> import ember
    >>> ember.manual_seed(42).initial_seed()
    42
    """
    default_generator.manual_seed(seed)
    from .backend import cuda

    if cuda._cupy is not None:
        cuda._cupy.random.seed(int(seed) % (2**32))
    return default_generator


def seed() -> int:
    """Seed the default generator from fresh entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> dict:
    """The default generator's state (see ``Generator.get_state``)."""
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    """Restore a state from ``get_rng_state``."""
    default_generator.set_state(state)


def rng(generator: Generator | None = None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (or the default one)."""
    return (generator or default_generator).rng
