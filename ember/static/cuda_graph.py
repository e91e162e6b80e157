"""CUDA graphs for ``ember.compile``: a compiled step on the GPU captured once, then replayed.

A compiled step on cuda is a flat list of kernel launches, each costing the CPU a few
microseconds of Python and driver work, so a small model's step is bound by launches, not by
the GPU. A CUDA graph records those launches once (CuPy's stream capture:
``Stream.begin_capture()`` ... ``end_capture()`` gives a ``cupy.cuda.Graph``) and replays the
whole step with one ``graph.launch()``. As in PyTorch's CUDA graphs (and ``torch.compile``'s
``mode='reduce-overhead'``), a graph reads and writes fixed addresses, so:

- **Static inputs.** Each call copies the tensor arguments into buffers the graph owns (one
  device copy per argument), and the state it reads (parameters, optimizer state) must be the
  same arrays on every call: a call that finds them replaced (``load_state_dict`` into new
  arrays, an optimizer's state reset) runs without the graph once and captures again on the
  next call (a change of structure, like turning ``amsgrad`` on, retraces).
  Gradients the step reads are copied into the graph's own buffers (zeros when None).
- **Static outputs.** In ``mode='reduce-overhead'`` the returned tensors *are* the graph's
  output buffers: the next call overwrites them (``.clone()`` what you keep). By default
  (``mode='default'``) each call returns copies (one small device copy per output). Gradients
  left in ``.grad`` by the step are the graph's buffers in both modes: the next step overwrites
  them, as it would replace them in eager mode.
- **Warm-up, then capture.** The first call of a signature runs the plan normally (CuPy compiles
  and loads every kernel); the second captures on a side
  stream, with a private memory pool (``cupy.cuda.MemoryPool`` through ``using_allocator``, so
  no block the graph uses is handed to other code), and every later call replays. Replays
  launch on the caller's current stream, so no extra synchronization is needed around them.
- **Host values.** A graph cannot read Python numbers at replay. An optimizer's step is its
  rule in ember ops, traced like the rest: the step count is a device tensor the graph
  advances, bias corrections are computed on the device, and the hyperparameters a scheduler
  may change (``lr``...) are ``HostRef`` state values, written into their device buffers (a
  fill on the stream) before each launch. Other ops with side effects cannot be replayed:
  random draws (dropout masks, ``rand``/``randn``: CuPy's generator cannot be captured), an op
  that needs a value back on the host (``.item()``) or the cuRAND/cuSOLVER libraries. Checks
  of device data (a class index out of range) wait for no host: their flags are recomputed by
  each replay and decided at the next read from the device (``ember.backend.checks``). Such a
  step runs without a graph, with one warning saying why.
- **Libraries.** CuPy refuses cuBLAS calls during capture (``@`` and ``einsum`` too, so ops
  call ``xp.matmul``), so ``xp.matmul`` is a direct ``cublasGemmEx`` call
  (``ember.backend.kernels.cublas``) while capturing; host-to-device constants
  made inside ops (``xp.asarray(0.5)``) are copied once, outside the capture, into buffers the
  graph keeps. Both replacements hold on the capturing thread only (other threads, such as a
  DataLoader's workers, keep CuPy's functions; ``ember.backend.arrays.capture_overrides``).

Select with ``ember.compile(fn, mode=...)`` (``'default'``: graphs, outputs copied;
``'reduce-overhead'`` / ``'max-autotune'``: graphs, static outputs;
``'max-autotune-no-cudagraphs'``: no graphs) or ``cuda_graph=True/False``. CPU steps never
use any of this.

>>> resolve("reduce-overhead", None), resolve(None, False)
((True, True), (False, False))
"""

from __future__ import annotations

import contextlib
import sys
import warnings

from ..backend import arrays as _arrays
from ..backend import checks as _checks
from ..backend import cuda as _cuda
from ..backend.kernels.cublas import CaptureUnsupported
from .ir import GraphError
from .pytree import rebuild
from .trace import ArrayRef, GradRef, HostRef, NewGrads

__all__ = ["MODES", "CaptureUnsupported", "Runner", "resolve", "unsupported"]

# mode -> (capture CUDA graphs, return static output buffers)
MODES = {
    None: (True, False),
    "default": (True, False),
    "reduce-overhead": (True, True),
    "max-autotune": (True, True),
    "max-autotune-no-cudagraphs": (False, False),
}
WARMUP_CALLS = 1  # calls that run without a graph before the capture


def resolve(mode: str | None, cuda_graph: bool | None) -> tuple[bool, bool]:
    """``(capture, static outputs)`` for ``ember.compile``'s ``mode`` and ``cuda_graph``."""
    if mode not in MODES:
        raise ValueError(
            f"ember.compile: unknown mode {mode!r}; expected one of {sorted(m for m in MODES if m)}"
        )
    capture, static = MODES[mode]
    if cuda_graph is not None:
        capture = bool(cuda_graph)
    return capture, static


def on_gpu(arrays) -> bool:
    """Whether any of ``arrays`` is a CuPy array."""
    return any(_cuda.is_cupy_array(a) for a in arrays)


def unsupported(graph) -> str | None:
    """Why ``graph`` cannot be replayed as a CUDA graph (None if it may be)."""
    for n in graph.nodes:
        op = n.op
        if not getattr(op, "has_side_effects", False) or getattr(op, "replayable", False):
            continue
        name = getattr(op, "name", None) or type(op).__name__
        if type(op).__name__ in ("DropoutMask", "Random"):
            return (
                f"{name} draws random numbers, and CuPy's generator cannot be captured "
                "(dropout in training mode, rand/randn in the step)"
            )
        return f"{name} has effects a CUDA graph cannot replay"
    return None


# -- the runner ------------------------------------------------------------------------------


def _capture(cp, stream, body):
    """``(graph, body())`` with ``body``'s GPU work recorded on ``stream`` (not run)."""
    with stream:
        stream.begin_capture()
        try:
            result = body()
        except BaseException:
            with contextlib.suppress(Exception):
                stream.end_capture()
            raise
        graph = stream.end_capture()
    return graph, result


@contextlib.contextmanager
def _capture_patches(cp, keep: list):
    """While this thread captures: ``xp.matmul`` through cuBLAS directly, and host data turned
    into device arrays outside the capture (kept alive in ``keep`` for the graph's lifetime).
    The replacements are this thread's only (``arrays.capture_overrides``): other threads,
    a DataLoader's workers among them, keep CuPy's functions."""
    from ..backend.kernels import cublas as _cublas

    side = cp.cuda.Stream(non_blocking=True)

    def matmul(a, b, out=None, **kwargs):
        if kwargs:
            raise CaptureUnsupported(f"matmul{tuple(kwargs)} during capture")
        return _cublas.matmul(cp, a, b, out=out)

    def host_to_device(name):
        fn = _arrays.ordinary(getattr(cp, name))

        def convert(obj, *args, **kwargs):
            if isinstance(obj, cp.ndarray):
                return fn(obj, *args, **kwargs)
            with side:  # not the capturing stream: runs now, once
                arr = fn(obj, *args, **kwargs)
            side.synchronize()
            keep.append(arr)
            return arr

        return convert

    overrides = {"matmul": matmul, "asarray": host_to_device("asarray")}
    overrides["array"] = host_to_device("array")
    with _arrays.capture_overrides(overrides):
        yield


def _where(error: BaseException) -> str:
    """`` (op NAME, in ember/path.py:LINE)``: the innermost op running and frame of ember's own
    code when ``error`` was raised (where a step did what a capture refuses), or empty."""
    import traceback

    from ..ops.base import Op

    op, here = None, None
    for frame, line in traceback.walk_tb(error.__traceback__):
        path = frame.f_code.co_filename.replace("\\", "/")
        if "/ember/" not in path or path.endswith("/ember/static/cuda_graph.py"):
            continue
        here = f"ember/{path.rsplit('/ember/', 1)[1]}:{line}"
        if isinstance(frame.f_locals.get("op"), Op):
            op = frame.f_locals["op"].name
    if here is None:
        return ""
    return f" (op {op}, in {here})" if op else f" (in {here})"


class Runner:
    """Runs one trace (``compile._Entry``) of a cuda step through a CUDA graph (see the module
    docstring); ``entry.run`` is the path without a graph."""

    def __init__(self, entry, owner, static_outputs: bool) -> None:
        self.entry = entry
        self.owner = owner  # the CompiledFunction: its name, and the warn-once flag
        self.static_outputs = static_outputs
        self.disabled = unsupported(entry.run_graph)
        self.calls = 0  # calls since the last (re)capture was dropped
        self.captures = 0
        self.replays = 0
        self.graph = None
        self._reset()

    def _reset(self) -> None:
        self.graph = None
        self.static_in: list = []
        self.static_state: list = []
        self.outs: list = []
        self.post: list = []
        self.keep: list = []
        self.checks: list = []  # device checks the graph recomputes (ember.backend.checks)
        self.pool = None

    # -- calls ------------------------------------------------------------------------------
    def run(self, tensors: list):
        entry = self.entry
        if self.disabled is not None:
            self._warn()
            return entry.run(tensors)
        if self.graph is None and self.calls < WARMUP_CALLS:
            self.calls += 1
            return entry.run(tensors)
        feeds = [t._data for t in tensors]
        cp = _cuda.xp()
        with cp.cuda.Device(self._device(feeds)):
            if self.graph is None:
                try:
                    self._capture_now(cp, feeds)
                except Exception as e:  # noqa: BLE001 - any failure: run without a graph
                    self._reset()
                    if isinstance(e, GraphError) and e.__cause__ is not None:
                        e = e.__cause__  # the op's own error (``_where`` names the op)
                    self.disabled = f"capture failed: {type(e).__name__}: {e}{_where(e)}"
                    self._warn()
                    return entry.run(tensors)
            else:
                why = self._bind(feeds)
                if why is not None:  # run this call without the graph, capture again next
                    self._reset()
                    self.calls = 0
                    if self.owner.verbose:
                        print(
                            f"ember.compile: recapturing the CUDA graph of "
                            f"{self.owner.__name__}: {why}",
                            file=sys.stderr,
                        )
                    return entry.run(tensors)
            self.graph.launch()
            _checks.requeue(self.checks)  # their flags were just recomputed
            self.replays += 1
            return self._finish(cp, feeds)

    def _device(self, feeds) -> int:
        for a in list(feeds) + [r.read() for r in self.entry.refs[:1]]:
            i = _cuda.index_of(a)
            if i is not None:
                return i
        return _cuda.current_device()

    def _warn(self) -> None:
        if not getattr(self.owner, "_cuda_graph_warned", False):
            self.owner._cuda_graph_warned = True
            warnings.warn(
                f"ember.compile: {self.owner.__name__} runs without a CUDA graph: {self.disabled}",
                RuntimeWarning,
                stacklevel=4,
            )

    # -- capture ----------------------------------------------------------------------------
    def _capture_now(self, cp, feeds) -> None:
        entry = self.entry
        plan = entry.plan
        self.static_in = [cp.empty(f.shape, f.dtype) for f in feeds]
        arrays = [r.read() for r in entry.refs]
        self.static_state = []
        for ref, a in zip(entry.refs, arrays):
            self.static_state.append(a if isinstance(ref, ArrayRef) else cp.empty(a.shape, a.dtype))
        if self._bind(feeds) is not None:
            raise CaptureUnsupported("the state changed while capturing")
        steps = plan.steps_for(cp, self.static_in)  # the ops' CUDA kernels where registered
        pool = cp.cuda.MemoryPool()
        using = getattr(cp.cuda, "using_allocator", None)
        if using is None:
            raise CaptureUnsupported("this CuPy has no cupy.cuda.using_allocator")
        stream = cp.cuda.Stream(non_blocking=True)

        def body():
            with using(pool.malloc), _capture_patches(cp, self.keep):
                outs, stores = plan.run_steps(cp, steps, self.static_in, self.static_state)
                return self._stores(cp, outs[: entry.n_out], stores)

        earlier = _checks.take()  # checks queued before the capture stay queued
        try:
            graph, (outs, post) = _capture(cp, stream, body)
        finally:
            self.checks = _checks.take()  # the step's own: queued again after each replay
            _checks.requeue(earlier)
        self.pool, self.graph, self.outs, self.post = pool, graph, outs, post
        self.captures += 1

    def _bind(self, feeds) -> str | None:
        """Copy this call's arguments and read state into the graph's buffers; a reason to
        capture again when the graph no longer fits."""
        for src, dst in zip(feeds, self.static_in):
            if src is not dst:
                dst[...] = src
        for ref, dst in zip(self.entry.refs, self.static_state):
            if isinstance(ref, ArrayRef):
                if ref.array is not dst:
                    return "a state array was replaced"
                continue
            if isinstance(ref, GradRef) and ref.tensor._grad is None:
                dst.fill(0)
                continue
            if isinstance(ref, HostRef):  # a hyperparameter: written on the stream, no sync
                dst.fill(ref.value())
                continue
            src = ref.read()
            if src is not dst:
                dst[...] = src
        return None

    def _stores(self, cp, outs: list, stores: list):
        """The end of a run (``compile._Entry.run``) inside the capture: protective copies and
        stores into state arrays and input buffers are recorded; what needs Python after each
        replay (gradients as new ``.grad`` tensors, inputs written back) goes to ``post``."""
        inputs = self.entry.run_graph.inputs
        targets = []
        for v, _ in stores:
            if v.kind == "input":
                targets.append(self.static_in[inputs.index(v)])
            elif isinstance(v.ref, ArrayRef):
                targets.append(v.ref.array)
        outs = list(outs)
        for i, o in enumerate(outs):
            if o is not None and any(cp.may_share_memory(o, t) for t in targets):
                outs[i] = o.copy()
        protected = {id(a) for a in self.static_in} | {id(a) for a in self.static_state}
        protected |= {id(o) for o in outs}
        grads = NewGrads(protected)
        post = []
        for v, arr in stores:
            if v.kind == "input":
                i = inputs.index(v)
                if self.static_in[i] is not arr:
                    self.static_in[i][...] = arr
                post.append(("input", i, None))
                continue
            ref = v.ref
            if isinstance(ref, ArrayRef):
                ref.store(arr)
                continue
            if isinstance(ref, GradRef) and not ref.inplace:
                arr = grads.own(arr)
            post.append(("ref", ref, arr))
        return outs, post

    def _finish(self, cp, feeds):

        ins = {id(a): i for i, a in enumerate(self.static_in)}
        state_ids = {id(a) for a in self.static_state}
        outs = []
        for o in self.outs:
            if o is not None and id(o) in ins:  # an argument returned as it is
                o = feeds[ins[id(o)]]
            elif o is not None and not self.static_outputs and id(o) not in state_ids:
                o = o.copy()  # mode='default': the caller's own copy of the graph's output
            outs.append(o)
        for kind, what, arr in self.post:
            if kind == "input":
                dst = feeds[what]
                if dst is not self.static_in[what]:
                    dst[...] = self.static_in[what]
            else:
                what.store(arr)
        for t in self.entry.clears:
            t._grad = None
        return rebuild(self.entry.structure, iter(outs))
