"""``torch.jit``'s entry points mapped onto ``ember.compile`` and ember's graph files.

There is no TorchScript language here: ``script`` and ``trace`` both wrap the module or
function in ``ember.compile``, which traces eager Python once per input signature (so
control flow on Python values is re-traced for each new signature, where TorchScript compiles
it once) and runs the graph; ``save``/``load`` write and read ember graph folders (not
TorchScript zip files). The decorators (``ignore``, ``unused``, ``export``), ``annotate``,
``Attribute`` and ``Final`` keep their eager meaning: they change nothing. docs/transforms.md
has the details.

>>> import ember
>>> m = ember.jit.script(ember.nn.Linear(3, 2))
>>> with ember.no_grad():
...     m(ember.ones(4, 3)).shape
ember.Size([4, 2])
>>> ember.jit.is_scripting()
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .. import _config
from .._errors import EmberError
from .script_module import LoadedModule, ScriptFunction, ScriptModule
from .serialization import load, save


def _is_module(obj) -> bool:
    return hasattr(type(obj), "_compile_tensors") and callable(getattr(obj, "forward", None))


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """``obj`` (a Module or a function) run through ``ember.compile``: a ``ScriptModule`` or
    ``ScriptFunction`` called like ``obj``. ``example_inputs`` (a list of argument tuples), if
    given, are traced right away.

    >>> import ember
    >>> f = ember.jit.script(lambda x: x + 1)
    >>> f(ember.zeros(2))
    tensor([1., 1.])
    """
    if isinstance(obj, ScriptFunction):
        return obj
    if _is_module(obj):
        wrapped = ScriptModule(obj)
    elif callable(obj):
        wrapped = ScriptFunction(obj)
    else:
        raise EmberError(f"ember.jit.script: expected a Module or a function, got {type(obj)}")
    for example in example_inputs or ():
        with _config.no_grad():
            wrapped(*(example if isinstance(example, tuple) else (example,)))
    return wrapped


def trace(func, example_inputs=None, *args: Any, example_kwarg_inputs=None, **kwargs: Any):
    """``func`` (a Module or a function) run through ``ember.compile`` and traced now on
    ``example_inputs`` (a Tensor or a tuple of them), without autograd, so ``ember.jit.save``
    can write it. Other signatures trace again when called (TorchScript's trace would not).

    >>> import ember
    >>> m = ember.nn.Linear(2, 2).eval()
    >>> traced = ember.jit.trace(m, ember.ones(1, 2))
    >>> traced._compiled.traces
    1
    """
    if example_inputs is None and example_kwarg_inputs is None:
        raise EmberError("ember.jit.trace: example_inputs (a Tensor or a tuple) is required")
    wrapped = script(func)
    call_args = (
        ()
        if example_inputs is None
        else (example_inputs if isinstance(example_inputs, tuple) else (example_inputs,))
    )
    with _config.no_grad():
        wrapped(*call_args, **(example_kwarg_inputs or {}))
    return wrapped


def trace_module(mod, inputs: dict, *args: Any, **kwargs: Any) -> ScriptModule:
    """``trace`` of ``mod``'s ``forward`` (the only method traced: ``inputs["forward"]``)."""
    return trace(mod, inputs["forward"])


def _decorator(fn=None, **_options):
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


def ignore(drop=False, **kwargs) -> Callable:
    """Leaves the function as it is (TorchScript would keep it in Python): usable as
    ``@ignore`` and ``@ignore(drop=True)``.

    >>> @ignore
    ... def f(x):
    ...     return x
    >>> f(3)
    3
    """
    return _decorator(drop)


def unused(fn: Callable) -> Callable:
    """Leaves the function as it is (TorchScript would replace it by a raise).

    >>> unused(len)([1, 2])
    2
    """
    return fn


def export(fn: Callable) -> Callable:
    """Leaves the method as it is (TorchScript would compile it too).

    >>> export(len) is len
    True
    """
    return fn


def is_scripting() -> bool:
    """False: ember never runs code as TorchScript.

    >>> is_scripting()
    False
    """
    return False


def is_tracing() -> bool:
    """Whether ``ember.compile`` (which ``ember.jit.trace`` uses) is tracing right now.

    >>> is_tracing()
    False
    """
    tracer = _config.state.tracer
    return tracer is not None and not getattr(tracer, "define", False)


def annotate(the_type: Any, the_value: Any) -> Any:
    """``the_value`` unchanged (a type hint for TorchScript).

    >>> annotate(list, [])
    []
    """
    return the_value


def Attribute(value: Any, type: Any = None) -> Any:  # noqa: N802,A002  (torch's spelling)
    """``value`` unchanged (a type hint for TorchScript).

    >>> Attribute(3, int)
    3
    """
    return value


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """``mod`` unchanged: ember's compiled graphs already fold what they can.

    >>> m = script(len); freeze(m) is m
    True
    """
    return mod


def optimize_for_inference(mod, other_methods=None):
    """``mod`` unchanged (see ``freeze``).

    >>> optimize_for_inference(len) is len
    True
    """
    return mod


__all__ = [
    "Attribute",
    "Final",
    "LoadedModule",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "freeze",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "trace",
    "trace_module",
    "unused",
]
