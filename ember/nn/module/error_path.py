"""Errors raised inside a Module's ``forward`` named by the module's path in the model
(``features.3 (Conv2d): ...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._errors import EmberError
    from .registration import Module


def _path_to(module: Module, child: Module, depth: int = 3) -> str | None:
    """The dotted name of ``child`` below ``module``: a direct child, or one reached through
    containers that are never called themselves (``layers.0`` of a ModuleList)."""
    for n, m in module._modules.items():
        if m is child:
            return n
    if depth > 1:
        for n, m in module._modules.items():
            if m is not None and not _calls_children(m):
                below = _path_to(m, child, depth - 1)
                if below is not None:
                    return f"{n}.{below}"
    return None


def _calls_children(module: Module) -> bool:
    """Whether ``module``'s own forward runs (so it names its children itself)."""
    from ..containers import ModuleDict, ModuleList

    return not isinstance(module, (ModuleList, ModuleDict))


def _name_module_path(error: EmberError, module: Module) -> None:
    """Prefix an error raised inside ``module`` with its path from the outermost module called.

    The innermost module leaves the message alone; each parent it propagates through that holds
    the previous module as a direct child prepends that child's name, so the error that reaches
    the user reads ``features.3 (Conv2d): expected input with 16 channels, got 8 (...)``.
    """
    where = getattr(error, "_ember_module_path", None)
    if where is None:
        message = str(error.args[0]) if error.args else ""
        error._ember_module_path = [module, [], type(module).__name__, message]
        return
    child, path, kind, message = where
    if child is None:
        return
    name = _path_to(module, child)
    if name is None:  # called from outside the module tree: the path ends here
        where[0] = None
        return
    path.insert(0, name)
    where[0] = module
    if message.startswith(kind + ": "):
        message = message[len(kind) + 2 :]
    error.args = (f"{'.'.join(path)} ({kind}): {message}", *error.args[1:])
