"""``ScriptModule`` / ``ScriptFunction``: what ``ember.jit.script`` and ``ember.jit.trace``
return, and ``LoadedModule``: what ``ember.jit.load`` returns.

A ScriptModule wraps the module itself (not a copy, as TorchScript makes: ``eval()`` on it
switches the original too) and ``ember.compile`` of it. Calls that build autograd history (grad
mode on and a parameter or argument requiring grad) run the module eagerly, so training through
it works and outputs carry ``grad_fn`` as TorchScript's do; other calls (``no_grad``,
inference) run the compiled graph, traced once per input signature. A function whose control
flow depends on tensor values can't be traced (``TraceError``): it then runs eagerly.

>>> import ember
>>> lin = ember.nn.Linear(2, 1)
>>> scripted = ScriptModule(lin)
>>> with ember.no_grad():
...     bool((scripted(ember.ones(3, 2)) == lin(ember.ones(3, 2))).all())
True
"""

from __future__ import annotations

import functools

from .. import _config
from .._tensor import Tensor
from ..static import compile as _compile
from ..static.files import LoadedGraph
from ..static.symbol import TraceError


def _needs_history(args, kwargs, params) -> bool:
    if not _config.state.grad_enabled:
        return False
    values = list(args) + list(kwargs.values())
    return any(isinstance(a, Tensor) and a._requires_grad for a in values) or any(
        p._requires_grad for p in params()
    )


class ScriptFunction:
    """A function run through ``ember.compile`` (eagerly where it can't be traced).

    >>> import ember
    >>> f = ScriptFunction(lambda x: x * 2)
    >>> f(ember.ones(2))
    tensor([2., 2.])
    """

    def __init__(self, fn) -> None:
        self._fn = fn
        self._compiled = _compile(fn, verbose=False)
        self._eager = False
        functools.update_wrapper(self, fn, updated=())

    def _params(self):
        return ()

    def __call__(self, *args, **kwargs):
        if self._eager or _needs_history(args, kwargs, self._params):
            return self._fn(*args, **kwargs)
        try:
            return self._compiled(*args, **kwargs)
        except TraceError:
            self._eager = True
            return self._fn(*args, **kwargs)

    @property
    def graph(self):
        """The latest traced graph (ember's IR, not TorchScript's)."""
        return self._compiled.graph

    def save(self, f) -> None:
        """``ember.jit.save(self, f)``."""
        from .serialization import save

        save(self, f)


class ScriptModule(ScriptFunction):
    """A module run through ``ember.compile``; attribute reads, ``parameters()``,
    ``state_dict()``, ``eval()``/``train()`` reach the wrapped module (``eval()`` returns this
    ScriptModule).

    >>> import ember
    >>> m = ScriptModule(ember.nn.Linear(2, 3))
    >>> m.eval() is m, len(list(m.parameters())), m.training
    (True, 2, False)
    """

    def __init__(self, module) -> None:
        self.__dict__["_module"] = module
        super().__init__(module)

    def _params(self):
        return self._module.parameters()

    def forward(self, *args, **kwargs):
        """Calls this ScriptModule (TorchScript's ``forward`` method)."""
        return self(*args, **kwargs)

    def __getattr__(self, name: str):
        module = self.__dict__.get("_module")
        if module is None:
            raise AttributeError(name)
        attr = getattr(module, name)
        if not callable(attr) or isinstance(attr, type) or not hasattr(attr, "__self__"):
            return attr

        @functools.wraps(attr)
        def method(*args, **kwargs):
            out = attr(*args, **kwargs)
            return self if out is module else out

        return method

    def __setattr__(self, name: str, value) -> None:
        if name.startswith("_") or name in ("graph",) or "_module" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            setattr(self._module, name, value)

    def __repr__(self) -> str:
        return f"RecursiveScriptModule(original_name={type(self._module).__name__})"


class LoadedModule:
    """A graph file read by ``ember.jit.load``: called with tensors like the traced module
    (of the shapes and dtypes it was traced with: the graph is fixed);
    ``state_dict()``/``parameters()`` give the weights it holds. The graph is fixed: ``eval()``
    and ``train()`` only set the flag.

    >>> import os, tempfile, ember
    >>> m = ember.nn.Linear(2, 1).eval()
    >>> with ember.no_grad():
    ...     traced = ember.jit.trace(m, ember.ones(1, 2))
    >>> path = os.path.join(tempfile.mkdtemp(), "m.pt")
    >>> ember.jit.save(traced, path)
    >>> loaded = ember.jit.load(path)
    >>> bool((loaded(ember.ones(1, 2)) == m(ember.ones(1, 2))).all())
    True
    """

    def __init__(self, graph: LoadedGraph) -> None:
        self._graph = graph
        self.training = False

    def __call__(self, *args):
        return self._graph(*args)

    forward = __call__

    @property
    def graph(self):
        """The graph's IR."""
        return self._graph.graph

    def state_dict(self) -> dict:
        """The weights the graph reads, by their names."""
        return {v.name or f"state.{v.id}": Tensor._make(v.ref) for v in self._graph.graph.state}

    def parameters(self):
        """The weights the graph reads, as tensors."""
        return iter(self.state_dict().values())

    def eval(self) -> LoadedModule:
        """Sets ``training`` to False; the graph is unchanged."""
        self.training = False
        return self

    def train(self, mode: bool = True) -> LoadedModule:
        """Sets ``training``; the graph is unchanged (it was traced in one mode)."""
        self.training = mode
        return self

    def __repr__(self) -> str:
        return f"RecursiveScriptModule(ember graph {self._graph.graph.name!r})"


__all__ = ["LoadedModule", "ScriptFunction", "ScriptModule"]
