"""``ember.jit.save`` / ``ember.jit.load``: a traced ScriptModule to an ember graph folder
(``ember.static.files``: graph text plus safetensors weights, no pickle, no code) and back,
runnable in a process without the Python that built it. Unlike TorchScript's zip files, the
path is a folder, and what is saved is the graph of the latest inference call (grad off or
nothing requiring grad), for that input signature only: the loaded graph takes inputs of
the traced shapes and dtypes.

>>> import os, tempfile, ember
>>> f = ember.jit.trace(lambda x: x.exp(), ember.zeros(2))
>>> path = os.path.join(tempfile.mkdtemp(), "f.pt")
>>> save(f, path)
>>> load(path)(ember.zeros(2))
tensor([1., 1.])
"""

from __future__ import annotations

import os

from .._errors import EmberError
from ..static import files
from .script_module import LoadedModule, ScriptFunction


def save(m: ScriptFunction, f) -> None:
    """Write ``m`` (from ``ember.jit.trace`` or ``ember.jit.script``, called at least once in
    inference) to the graph folder ``f``."""
    if not isinstance(m, ScriptFunction):
        raise EmberError(
            f"ember.jit.save: expected what ember.jit.script or ember.jit.trace returned, got "
            f"{type(m).__name__}"
        )
    if not isinstance(f, (str, os.PathLike)):
        raise EmberError(
            "ember.jit.save: f must be a path (ember writes a graph folder, not a file object), "
            f"got {type(f).__name__}"
        )
    if m._compiled._latest is None:
        raise EmberError(
            "ember.jit.save: this module has no traced graph yet; ember traces per input "
            "signature, so call it once under ember.no_grad() (or use ember.jit.trace)"
        )
    files.save(m._compiled, os.fspath(f))


def load(f, map_location=None, _extra_files=None) -> LoadedModule:
    """Read a graph folder written by ``ember.jit.save``. ``map_location`` other than None or
    ``'cpu'`` is not supported (the graph runs where its weights are: the CPU)."""
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise EmberError(f"ember.jit.load: map_location={map_location!r} is not supported")
    if not isinstance(f, (str, os.PathLike)):
        raise EmberError(f"ember.jit.load: f must be a path, got {type(f).__name__}")
    return LoadedModule(files.load(os.fspath(f)))


__all__ = ["load", "save"]
