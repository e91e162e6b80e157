"""The error a bad checkpoint raises."""

from __future__ import annotations

from .._errors import EmberError


class CheckpointError(EmberError):
    """A checkpoint file that is not a valid ember/safetensors file, or an object ember cannot save.

    The message names the file and what is wrong with it. Nothing from a rejected file is run.
    """
