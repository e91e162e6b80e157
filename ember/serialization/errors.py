"""The errors a bad checkpoint raises."""

from __future__ import annotations

import pickle

from .._errors import EmberError


class CheckpointError(EmberError):
    """A checkpoint file that is not a valid ember/safetensors file, or an object ember cannot save.

    The message names the file and what is wrong with it. Nothing from a rejected file is run.
    """


class WeightsOnlyError(CheckpointError, pickle.UnpicklingError):
    """``load(weights_only=True)`` met something beyond tensors, containers and allowlisted
    globals; an ``UnpicklingError`` as PyTorch's refusal is. Nothing from the file was run."""
