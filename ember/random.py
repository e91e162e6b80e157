"""Random number generation: ``manual_seed``, ``seed``, ``Generator``.

One default generator (NumPy's PCG64) feeds every random op unless a ``generator=`` is given;
``manual_seed`` reseeds it (and CuPy's, when a GPU is in use), so runs are reproducible.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(2)
>>> _ = ember.manual_seed(0); b = ember.rand(2)
>>> a.tolist() == b.tolist()
True
"""

from __future__ import annotations

import contextlib

import numpy as np


class Generator:
    """A random number generator with PyTorch's ``manual_seed`` / ``get_state`` surface.

    >>> import ember
    >>> g = ember.Generator().manual_seed(1)
    >>> ember.randn(2, generator=g).shape
    ember.Size([2])
    """

    def __init__(self, device="cpu") -> None:
        from .backend import Device

        self.device = Device(device)
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self.rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns the generator so ``Generator().manual_seed(0)`` chains."""
        self._seed = int(seed) % (2**64)
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy and return the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % (2**63)))
        return self._seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> dict:
        """The generator's state as a plain dict (JSON-able, no pickle)."""
        return {"seed": self._seed, "bit_generator": self.rng.bit_generator.state}

    def set_state(self, state: dict) -> Generator:
        """Restore a state from ``get_state`` (the same numbers follow)."""
        if not isinstance(state, dict) or "bit_generator" not in state:
            from ._errors import EmberError

            raise EmberError("set_state: expected a state from Generator.get_state()")
        self._seed = state["seed"]
        self.rng.bit_generator.state = state["bit_generator"]
        return self


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
    """Seed the default generator from fresh entropy; returns the seed.

    >>> import ember
    >>> s = ember.seed(); s == ember.initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> dict:
    """The default generator's state (see ``Generator.get_state``).

    >>> import ember
    >>> state = ember.get_rng_state(); a = ember.rand(2)
    >>> ember.set_rng_state(state); a.tolist() == ember.rand(2).tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    """Restore a state from ``get_rng_state``."""
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True):
    """Run a block and then put the default generator's state back.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> with ember.random.fork_rng():
    ...     _ = ember.rand(3)
    >>> a = ember.rand(1); _ = ember.manual_seed(0); a.tolist() == ember.rand(1).tolist()
    True
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def rng(generator: Generator | None = None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (or the default one)."""
    return (generator or default_generator).rng
