"""``ember.compile``: trace eager code once per input signature, then run the graph.

The first call with a new signature (each tensor argument's shape, dtype, device and
``requires_grad``; the value of every Python number, string or None argument; the
signature of each stateful object involved: modules' ``training`` flags, optimizers' structure;
grad mode) runs the function once under the tracer:
every op, the backward pass and ``optimizer.step()`` become one graph. Later calls with the same
signature run only the graph. A new signature traces again and prints one line saying which
argument changed.

What the function touches from outside (parameters, buffers, gradients, optimizer state, any
tensor it closes over) is graph *state*: read from the same arrays on every run, and in-place
updates (``optimizer.step()``, BatchNorm's running statistics, ``p.grad`` accumulation,
``x.add_(...)``) are written back into them, so a compiled training step changes the model
exactly as the eager step would. Stateful objects (modules, optimizers: anything with the
``_compile_tensors`` / ``_compile_signature`` / ``_compile_describe`` protocol, see
``stateful``) reachable from the arguments, the function's closure and the globals it names are
found before tracing: their leaf tensors' ``.grad`` are state too, read as zeros when None, so
accumulating gradients over calls without ``zero_grad`` works as in eager mode.
``optimizer.step()`` traces the optimizer's rule (ember ops, see ``ember.optim.optimizer``):
its hyperparameters are read on every run, so a scheduler changing ``lr`` needs no retrace.

Rules of tracing:

- Python control flow runs at trace time: loops are unrolled, ``if`` on Python values picks one
  branch for this signature. Branching on a tensor's *value* (``if loss > 0``, ``loss.item()``)
  raises ``TraceError`` pointing at the line: use ``ember.where`` or a Python argument.
- Results are tensors without autograd history: compile the whole training step (forward,
  ``backward()``, ``step()``), not just the forward, to train.
- Random numbers (dropout, ``ember.rand`` / ``randn`` / ``randint``, ``normal_``...) are ops
  with side effects, drawn when the graph runs: each run draws fresh numbers, and after the
  same ``manual_seed`` a run gives the numbers eager code would. Views taken before an
  in-place write see the old value until the run ends.

>>> import ember
>>> @ember.compile
... def f(x, scale):
...     return (x * scale).sum()
>>> f(ember.ones(3), 2.0)
tensor(6.)
>>> f(ember.ones(3), 2.0)  # same signature: the cached graph runs
tensor(6.)
"""

from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from .._config import state, tracing
from .._errors import EmberError
from .._tensor import Tensor
from ..backend.arrays import owner as memory_owner
from .define import Graph
from .executor import Plan
from .pytree import flatten, out_structure, rebuild, tensor_paths
from .symbol import TraceError
from .trace import ArrayRef, GradRef, NewGrads, Tracer


def compile(  # noqa: A001
    fn=None,
    *,
    name: str | None = None,
    verbose: bool = True,
    optimize: bool = True,
    mode: str | None = None,
    cuda_graph: bool | None = None,
):
    """Compile ``fn`` (a function or a Module) into a graph, traced once per input signature.
    Each trace runs through the optimizer passes (``ember.static.passes``) unless
    ``optimize=False``.

    On cuda a compiled step is also captured as a CUDA graph after one warm-up call and
    replayed (see ``ember.static.cuda_graph``): ``mode='default'`` (or None) returns copies of
    the outputs, ``mode='reduce-overhead'`` (like ``torch.compile``) returns the graph's static
    output buffers, overwritten by the next call; ``'max-autotune-no-cudagraphs'`` or
    ``cuda_graph=False`` turns graphs off. CPU steps are unaffected.

    >>> import ember
    >>> lin = ember.nn.Linear(3, 2)
    >>> fast = ember.compile(lin)
    >>> fast(ember.ones(4, 3)).shape
    ember.Size([4, 2])
    """
    if fn is None:
        return functools.partial(
            compile,
            name=name,
            verbose=verbose,
            optimize=optimize,
            mode=mode,
            cuda_graph=cuda_graph,
        )
    return CompiledFunction(
        fn, name=name, verbose=verbose, optimize=optimize, mode=mode, cuda_graph=cuda_graph
    )


class CompiledFunction:
    """A traced, cached version of ``fn``: ``graph`` is the latest trace; ``traces`` counts them."""

    def __init__(
        self,
        fn,
        name: str | None = None,
        verbose: bool = True,
        optimize: bool = True,
        mode: str | None = None,
        cuda_graph: bool | None = None,
    ) -> None:
        from .cuda_graph import resolve

        self.optimize = optimize
        self.mode = mode
        self.cuda_graph, self._static_outputs = resolve(mode, cuda_graph)
        self.fn = fn
        self.module = fn if stateful(fn) and callable(getattr(fn, "forward", None)) else None
        self.__name__ = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        self.verbose = verbose
        self.traces = 0
        self._cache: dict = {}
        self._last = None  # (key, described leaves) of the latest call
        self._latest = None
        self._roots = None
        self._found = None  # the stateful objects reachable from fn, cached
        self._positional = None
        try:
            target = fn.forward if self.module is not None else fn
            self._signature = inspect.signature(target)
        except (TypeError, ValueError):
            self._signature = None

    def __repr__(self) -> str:
        return f"<ember.compile of {self.__name__}: {self.traces} trace(s)>"

    def __getattr__(self, name: str):
        module = self.__dict__.get("module")
        if module is None:
            raise AttributeError(name)
        attr = getattr(module, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        @functools.wraps(attr)
        def method(*args, **kwargs):  # ``fast.eval()`` returns the compiled module, not the raw one
            out = attr(*args, **kwargs)
            return self if out is module else out

        return method

    @property
    def graph(self) -> Graph:
        """The graph of the latest trace."""
        if self._latest is None:
            raise EmberError(f"{self.__name__}: not traced yet; call it once")
        return self._latest.graph

    @property
    def optimized_graph(self) -> Graph:
        """The graph the latest trace runs: ``graph`` after the optimizer passes."""
        if self._latest is None:
            raise EmberError(f"{self.__name__}: not traced yet; call it once")
        return self._latest.run_graph

    def __call__(self, *args, **kwargs):
        named = self._named_args(args, kwargs)
        leaves: list = []
        described: list = []
        for path, value in named:
            flatten(value, path, leaves, described)
        objects = tuple(d[2] for _, d in described if d[0] == "object")
        if self._found is None or self._found[0] != objects:
            self._found = (objects, self._collect(args, kwargs))
        found = self._found[1]
        keys = [_key(obj) for _, obj in found]
        key = (
            tuple(d for _, d in described),
            tuple([k[0] for k in keys]),
            state.grad_enabled,
            state.autocast.key if state.autocast is not None else None,
        )
        entry = self._cache.get(key)
        if entry is not None and entry.guards != tuple([k[1] for k in keys]):
            if self.verbose:
                print(
                    f"ember.compile: retracing {self.__name__}: {_guard_why(entry, found)}",
                    file=sys.stderr,
                )
            entry = None
        elif entry is None and self._last is not None and self.verbose:
            why = _why(self._last, (key, described), found)
            print(f"ember.compile: retracing {self.__name__}: {why}", file=sys.stderr)
        if entry is None:
            entry = self._trace(args, kwargs, named, leaves, found)
            entry.guards = _guards(found)
            self._cache[key] = entry
        self._last = (key, described)
        self._latest = entry
        tensors = [t for t in leaves if isinstance(t, Tensor)]
        if entry.runner is not None:
            return entry.runner.run(tensors)
        return entry.run(tensors)

    # -- what the function can reach -------------------------------------------------------------
    def _named_args(self, args, kwargs) -> list:
        pos = self._positional
        if pos is None and self._signature is not None:
            pos = self._positional = []
            for nm, prm in self._signature.parameters.items():
                if prm.kind not in (prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD):
                    break
                pos.append(nm)
        if not kwargs and pos is not None and len(args) == len(pos):
            return list(zip(pos, args))
        if self._signature is not None:
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{self.__name__}: {e}") from None
            out = []
            for name, value in bound.arguments.items():
                kind = self._signature.parameters[name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    out += [(f"{name}[{i}]", v) for i, v in enumerate(value)]
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    out += [(k, v) for k, v in value.items()]
                else:
                    out.append((name, value))
            return out
        return [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())

    def _collect(self, args, kwargs) -> list:
        """The stateful objects (modules, optimizers: anything with ``_compile_tensors``) in
        the arguments, the closure and the globals ``fn`` names, as ``[(name, object)]``."""
        if self._roots is None:
            found = []
            fn = self.fn
            if self.module is not None:
                found.append(("", self.module))
            target = getattr(fn, "__func__", fn)
            owner = getattr(fn, "__self__", None)
            if owner is not None:
                found.append(("self", owner))
            code = getattr(target, "__code__", None)
            if code is not None:
                for cell, nm in zip(target.__closure__ or (), code.co_freevars):
                    try:
                        found.append((nm, cell.cell_contents))
                    except ValueError:
                        pass
                glb = getattr(target, "__globals__", {})
                for nm in code.co_names:
                    if nm in glb:
                        found.append((nm, glb[nm]))
            self._roots = [(n, o) for n, o in found if stateful(o)]
        roots = list(self._roots)
        for i, a in enumerate(list(args) + list(kwargs.values())):
            if stateful(a):
                roots.append((f"arg{i}", a))
        out, seen = [], set()
        for nm, obj in roots:
            if id(obj) not in seen:
                seen.add(id(obj))
                out.append((nm, obj))
        return out

    # -- tracing ----------------------------------------------------------------------------
    def _trace(self, args, kwargs, named, leaves, found):
        graph = Graph(self.__name__)
        tracer = Tracer(graph, define=False)
        seen = set()
        for prefix, obj in found:
            for tname, t in obj._compile_tensors():
                if id(t) in seen:
                    continue
                seen.add(id(t))
                name = _join("" if obj is self.module else prefix, tname)
                tracer.names.setdefault(id(t._data), name)
                if t._requires_grad and t._node is None:
                    tracer.track_grad(t, name)
        prev = state.tracer
        if prev is not None and not getattr(prev, "define", False):
            raise TraceError(f"{self.__name__}: ember.compile functions cannot be nested")
        tensors = [(path, t) for path, t in tensor_paths(named)]
        try:
            for path, t in tensors:
                tracer.add_input(t, path)
            with tracing(tracer):
                result = self.fn(*args, **kwargs)
                outs: list = []
                structure = out_structure(result, outs, tracer)
                del result
            clears = tracer.finish()
        finally:
            tracer.restore()
            tracer.slots.clear()
        graph.outputs = outs
        _constants_from_temporaries(graph)
        graph.validate()
        self.traces += 1
        entry = _Entry(graph, structure, clears, self.optimize)
        if self.cuda_graph:
            from .cuda_graph import Runner, on_gpu

            if on_gpu([t._data for _, t in tensors] + [r.read() for r in entry.refs]):
                entry.runner = Runner(entry, self, self._static_outputs)
        return entry


class _Entry:
    """One trace: its graph, the plan to run it and how to rebuild the result."""

    def __init__(self, graph: Graph, structure, clears: list, optimize: bool = True) -> None:
        self.graph = graph  # as traced (what ``static.save`` writes)
        if optimize:
            from .passes import optimize as _optimize

            graph = _optimize(graph)
        self.run_graph = graph  # what runs
        self.structure = structure
        self.clears = clears
        effects = [n.output for n in graph.nodes if getattr(n.op, "has_side_effects", False)]
        self.plan = Plan(graph, graph.outputs + effects)
        self.n_out = len(graph.outputs)
        self.refs = [v.ref for v in self.plan.state]
        self.runner = None  # a cuda_graph.Runner for steps on the GPU
        self.guards = None  # the stateful objects' _compile_guard() when traced
        # how each of the plan's stores is written, decided once: into an argument (its index),
        # into a state array, as a new gradient (owning its memory), or through its ref
        inputs = graph.inputs
        self.stores = []
        written = []  # the state arrays the stores write into
        for v, _ in self.plan.stores:
            ref = v.ref
            if v.kind == "input":
                self.stores.append((_INPUT, inputs.index(v)))
            elif isinstance(ref, ArrayRef):
                self.stores.append((_ARRAY, ref.array))
                written.append(ref.array)
            elif isinstance(ref, GradRef) and not ref.inplace:
                self.stores.append((_NEW_GRAD, ref))
            else:
                self.stores.append((_REF, ref))
        self.written_inputs = [i for kind, i in self.stores if kind is _INPUT]
        self.written = written
        roots = [memory_owner(a) for a in written]
        # plain NumPy arrays that own their memory: an output shares memory with one exactly when
        # its own root is one of them (anything else is asked with ``may_share_memory``)
        self.written_roots = (
            {id(r) for r in roots} if all(type(r) is np.ndarray for r in roots) else None
        )

    def run(self, tensors: list):
        feeds = [t._data for t in tensors]
        state_arrays = [r.read() for r in self.refs]
        outs, stores = self.plan.run(feeds, state_arrays)
        outs = outs[: self.n_out]
        if stores:
            self._protect(outs, feeds)
            grads = None
            for (kind, where), (_, arr) in zip(self.stores, stores):
                if kind is _ARRAY:
                    if arr is not where:
                        where[...] = arr
                elif kind is _INPUT:
                    dst = feeds[where]
                    if dst is not arr:
                        dst[...] = arr
                elif kind is _NEW_GRAD:  # memory of its own, or apart from the others'
                    if grads is None:
                        protected = set(map(id, feeds))
                        protected.update(map(id, state_arrays))
                        protected.update(map(id, outs))
                        grads = NewGrads(protected)
                    where.store(grads.own(arr))
                else:
                    where.store(arr)
        for t in self.clears:
            t._grad = None
        it = iter(outs)
        return rebuild(self.structure, it)

    def _protect(self, outs: list, feeds: list) -> None:
        """Copy each output that shares memory with an array the stores write (results must not
        change when the state is written)."""
        roots = self.written_roots
        targets = [feeds[j] for j in self.written_inputs]
        for i, o in enumerate(outs):
            if o is None:
                continue
            if roots is not None and type(o) is np.ndarray:
                r = memory_owner(o)
                if type(r) is np.ndarray:
                    if id(r) in roots or any(_shares(o, t) for t in targets):
                        outs[i] = o.copy()
                    continue
            if any(_shares(o, t) for t in targets + self.written):
                outs[i] = o.copy()


_INPUT, _ARRAY, _NEW_GRAD, _REF = "input", "array", "new grad", "ref"


def _shares(a, b) -> bool:
    if type(a) is np.ndarray:
        return type(b) is np.ndarray and np.may_share_memory(a, b)
    from ..backend import xp_of

    return xp_of(a).may_share_memory(a, b)  # CuPy's own (NumPy's refuses device arrays)


# -- pytrees of arguments and results ----------------------------------------------------------


def _join(a: str, b: str) -> str:
    return f"{a}.{b}" if a and b else a or b


def stateful(obj) -> bool:
    """Whether ``obj`` speaks the protocol ``ember.compile`` finds state through
    (``_compile_tensors``, ``_compile_signature``, ``_compile_describe``; Modules and
    optimizers do: see ``ember/nn/module/compile_state.py``).

    >>> import ember
    >>> stateful(ember.nn.Linear(1, 1)), stateful(len)
    (True, False)
    """
    return not isinstance(obj, type) and hasattr(type(obj), "_compile_tensors")


def _key(obj) -> tuple:
    """``(signature, guard)`` of a stateful object: its ``_compile_key()`` where it has one (both
    in one walk), else ``_compile_signature()`` and ``_compile_guard()`` (None without one)."""
    both = getattr(type(obj), "_compile_key", None)
    if both is not None:
        return both(obj)
    g = getattr(type(obj), "_compile_guard", None)
    return obj._compile_signature(), (g(obj) if g is not None else None)


def _guards(found) -> tuple:
    """Each stateful object's guard (``_key``'s second part)."""
    return tuple(_key(obj)[1] for _, obj in found)


def _guard_why(entry, found) -> str:
    for (name, obj), old, new in zip(found, entry.guards, _guards(found)):
        if old != new:
            return f"{name or type(obj).__name__}: {type(obj).__name__}'s state was replaced"
    return "state was replaced"


def _why(last, now, found) -> str:
    """What differs between two signatures, for the retrace line."""
    (old_key, old_desc), (new_key, new_desc) = last, now
    reasons = []
    if old_key[1] != new_key[1] and len(old_key[1]) == len(new_key[1]):
        for (name, obj), a, b in zip(found, old_key[1], new_key[1]):
            if a != b:
                why = obj._compile_describe(a, b)
                reasons.append(f"{name}: {why}" if name else why)
                break
    old = dict(old_desc)
    for path, d in new_desc:
        o = old.get(path)
        if o == d:
            continue
        if o is None:
            reasons.append(f"new argument {path!r}")
        elif o[0] == d[0] == "tensor":
            for i, what in ((1, "shape"), (2, "dtype"), (3, "device"), (4, "requires_grad")):
                if o[i] != d[i]:
                    reasons.append(f"argument {path!r} {what} changed from {o[i]} to {d[i]}")
                    break
        elif o[0] == d[0] == "value":
            reasons.append(f"argument {path!r} changed from {o[2]!r} to {d[2]!r}")
        elif o[0] == d[0] == "object":
            reasons.append(f"argument {path!r} is a different {d[1]} object")
        else:
            reasons.append(f"argument {path!r} changed kind ({o[0]} -> {d[0]})")
        break
    if old_key[2] != new_key[2]:
        reasons.append(f"grad mode changed ({old_key[2]} -> {new_key[2]})")
    if old_key[3] != new_key[3]:
        reasons.append(
            f"autocast changed ({_autocast_text(old_key[3])} -> {_autocast_text(new_key[3])})"
        )
    return "; ".join(reasons) or "the argument structure changed"


def _autocast_text(key) -> str:
    return ", ".join(f"{dev} {dtype}" for dev, dtype in key) if key else "off"


def _constants_from_temporaries(graph: Graph) -> None:
    """Drop state values nothing reads; state arrays nothing outside the graph holds any more
    (made while tracing: scalars, the engine's ones...) become constants."""
    assigned = {id(n.inputs[0]) for n in graph.nodes if getattr(n.op, "has_side_effects", False)}
    used = {id(x) for n in graph.nodes for x in n.inputs} | {id(v) for v in graph.outputs}
    keep = []
    for v in graph.state:
        if id(v) not in used:
            continue  # captured but never read (an unused parameter's .grad...)
        ref = v.ref
        if isinstance(ref, ArrayRef) and id(v) not in assigned:
            arr = ref.array
            # holders: ref.array, ``arr``, getrefcount's argument
            if sys.getrefcount(arr) <= 3:
                v.kind = "const"
                v.data = arr
                v.ref = None
                graph.constants.append(v)
                continue
        keep.append(v)
    graph.state = keep


__all__ = ["CompiledFunction", "compile"]
