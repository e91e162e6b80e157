"""Random-number states as plain values and uint8 state tensors (for ``ember.save``), captured
and restored. ember's generators are stored as ``get_state`` tensors; checkpoints written when
they were dicts still load (``set_state`` takes both).

What is captured: ember's default generator, Python's ``random``, NumPy's legacy global state
(``np.random.seed`` / ``np.random.rand``), and any explicit ``ember.Generator`` a DataLoader or
its sampler holds. CuPy's generator is not: ember's random ops (dropout masks included) draw on
the host from ember's generators.
"""

from __future__ import annotations

import random as _pyrandom

import numpy as np

from .. import random as _random


def loader_generators(loader) -> list:
    """The distinct explicit ``ember.Generator`` objects behind a DataLoader's order, in a fixed
    order (the loader's own, its sampler's, its batch sampler's sampler's)."""
    found: list = []
    candidates = [getattr(loader, "generator", None)]
    sampler = getattr(loader, "sampler", None)
    candidates.append(getattr(sampler, "generator", None))
    batch_sampler = getattr(loader, "batch_sampler", None)
    candidates.append(getattr(batch_sampler, "generator", None))
    candidates.append(getattr(getattr(batch_sampler, "sampler", None), "generator", None))
    for g in candidates:
        if (
            isinstance(g, _random.Generator)
            and g is not _random.default_generator
            and all(g is not f for f in found)
        ):
            found.append(g)
    return found


def capture(generators: list) -> dict:
    """Every generator's state: ember's as ``get_state`` tensors, Python's and NumPy's as lists."""
    name, keys, pos, has_gauss, gauss = np.random.get_state()
    version, internal, gauss_next = _pyrandom.getstate()
    return {
        "ember": _random.get_rng_state(),
        "python": [version, list(internal), gauss_next],
        "numpy": [name, keys.tolist(), int(pos), int(has_gauss), float(gauss)],
        "generators": [g.get_state() for g in generators],
    }


def restore(state: dict, generators: list, *, explicit: bool = True) -> None:
    """Put back a ``capture``d state; ``explicit=False`` leaves the loader's own generators."""
    _random.set_rng_state(state["ember"])
    version, internal, gauss_next = state["python"]
    _pyrandom.setstate((version, tuple(internal), gauss_next))
    name, keys, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, gauss))
    if explicit:
        saved = state.get("generators", [])
        if len(saved) != len(generators):
            from .._errors import EmberError

            raise EmberError(
                f"resume: the checkpoint holds the states of {len(saved)} data-loader "
                f"generator(s), but this training loader has {len(generators)}; build the "
                "loader as in the run that wrote it"
            )
        for g, s in zip(generators, saved):
            g.set_state(s)
