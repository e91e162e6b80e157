"""Where one training step's time and memory go: inside the ops' array kernels, or outside them.

The benchmarks' "Python share" is ``1 - (seconds inside op bodies) / (wall seconds)``, both
taken from the same instrumented run of the step (so machine noise hits both alike; the
repeat with the shortest wall time is kept):

- **ember**: every op body is wrapped with a ``perf_counter`` pair for the run: each ``Op``
  subclass's ``forward`` and every CPU override in ``ember.backend.overrides`` (fused
  elementwise programs, max-pool kernels, the optimizers' per-parameter ``update`` kernels),
  and a compiled plan's numba runs (``ember.static.native``: one body each).
  A body called from inside another (a fused program falling back to its ops' ``forward``) is
  counted once, by the outer one. The wrappers' own cost outside the bodies (calibrated on a
  no-op, times the number of calls) is taken off the wall time. Eager steps reach the bodies
  through ``apply``, compiled steps through the executor's bound steps, so a compiled step
  must be built while the wrappers are on (``ember_inside`` takes a function that builds it).
  Python code inside an op body (im2col's block loop, a fused program's dispatch) counts as
  array work, so the share is a lower bound on the time ember spends in Python.
- **PyTorch**: ``torch.profiler``'s outermost op events (an ``aten::`` call made from Python,
  including those of the optimizer's Python loop, or one autograd node evaluated by the engine
  during ``backward()``) are "inside"; the rest (Python, and the C++ autograd engine between
  nodes) is outside. The
  profiler's own cost per event lands partly inside, so PyTorch's share is slightly understated.

Peak memory of one step (after a warm-up step), measured the same way the issue's figures were:
ember with ``tracemalloc`` (NumPy registers its array buffers with it; Python objects count too),
PyTorch with the profiler's allocation events (``profile_memory=True``: every allocation and
free of its CPU allocator, summed in time order; tensor storage only, not Python objects).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator

from _timing import with_native_runs

_clock = time.perf_counter


class _Inside:
    """Seconds spent in, and calls of, the outermost wrapped bodies since the counts were zeroed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.depth = 0

    def wrap(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            if self.depth:
                return fn(*args, **kwargs)
            self.depth = 1
            t0 = _clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += _clock() - t0
                self.calls += 1
                self.depth = 0

        return timed


def _wrapper_cost(calls: int = 20000) -> float:
    """Seconds a wrapper adds per call, outside the body it times (best of 5, on a no-op)."""

    def noop(x):
        return x

    timed, best = _Inside().wrap(noop), float("inf")
    for _ in range(5):
        t0 = _clock()
        for i in range(calls):
            noop(i)
        t1 = _clock()
        for i in range(calls):
            timed(i)
        t2 = _clock()
        best = min(best, ((t2 - t1) - (t1 - t0)) / calls)
    return max(0.0, best)


def _op_classes(base) -> list:
    """``base`` and all its subclasses, each once."""
    seen: dict = {}
    stack = [base]
    while stack:
        cls = stack.pop()
        if cls not in seen:
            seen[cls] = None
            stack.extend(cls.__subclasses__())
    return list(seen)


@contextlib.contextmanager
def _ember_wrapped() -> Iterator[_Inside]:
    """Wrap ember's op bodies and CPU overrides for the duration; restores them after."""
    import ember.static.passes  # noqa: F401  (fused ops and their CPU override register here)
    from ember.backend import overrides
    from ember.ops.base import Op
    from ember.static import native

    inside = _Inside()
    ask = native.Run.ask

    def ask_timed(run, *arrays):  # a compiled plan's numba run is one body
        ask(run, *arrays)
        if run.fn is not None:
            run.fn = inside.wrap(run.fn)

    native.Run.ask = ask_timed
    saved_forward = []
    for cls in _op_classes(Op):
        if "forward" in cls.__dict__:
            saved_forward.append((cls, cls.__dict__["forward"]))
            cls.forward = inside.wrap(cls.__dict__["forward"])
    live = overrides.live("cpu")
    saved_overrides = dict(live)
    for key, fn in saved_overrides.items():
        live[key] = inside.wrap(fn)
    overrides._changed()  # the lookup tables refill with the wrapped overrides
    try:
        yield inside
    finally:
        native.Run.ask = ask
        for cls, fn in saved_forward:
            cls.forward = fn
        live.update(saved_overrides)
        overrides._changed()


def ember_inside(build_step: Callable[[], Callable], repeats: int, steps: int) -> tuple:
    """``(seconds inside ember's op bodies, wall seconds)`` per step, from the repeat with the
    shortest wall time, for the step that ``build_step()`` returns, built and run with the
    bodies wrapped; the wall time has the wrappers' own cost taken off."""
    cost = _wrapper_cost()
    best = (float("inf"), float("inf"))
    with _ember_wrapped() as inside:
        step = build_step()
        with_native_runs(step)
        for _ in range(repeats):
            inside.seconds, inside.calls = 0.0, 0
            t0 = _clock()
            for _ in range(steps):
                step()
            wall = _clock() - t0 - inside.calls * cost
            if wall < best[1] * steps:
                best = (inside.seconds / steps, wall / steps)
    return best


def _torch_profile(step: Callable, steps: int, memory: bool) -> tuple:
    """``(profiler, wall seconds of the steps)``: the steps run under ``torch.profiler``."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=memory) as prof:
        t0 = _clock()
        for _ in range(steps):
            step()
        wall = _clock() - t0
    return prof, wall


def _outermost_op_us(events) -> float:
    """Microseconds in the outermost op events: top-level ones, and the children of user
    annotations (``Optimizer.step#SGD.step`` covers Python code, so its ops count instead)."""
    total, stack = 0.0, [e for e in events if e.cpu_parent is None]
    while stack:
        e = stack.pop()
        if e.is_user_annotation:
            stack.extend(e.cpu_children)
        else:
            total += e.cpu_time_total
    return total


def torch_inside(step: Callable, repeats: int, steps: int) -> tuple:
    """``(seconds inside PyTorch's top-level profiler events, wall seconds)`` per step, from
    the profiled repeat with the shortest wall time."""
    step()
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        prof, wall = _torch_profile(step, steps, memory=False)
        wall /= steps
        if wall < best[1]:
            best = (_outermost_op_us(prof.events()) * 1e-6 / steps, wall)
    return best


def torch_peak_bytes(step: Callable) -> int:
    """Peak bytes held by PyTorch's CPU allocator during one step, above the level before it."""
    step()
    results = _torch_profile(step, 1, memory=True)[0].profiler.kineto_results
    held = peak = 0
    for _, nbytes in sorted(
        (e.start_ns(), e.nbytes()) for e in results.events() if e.name() == "[memory]"
    ):
        held += nbytes
        peak = max(peak, held)
    return peak


def python_share(inside: float, wall: float) -> float:
    """The fraction of a step's wall time outside op bodies, clipped to [0, 1]."""
    return min(1.0, max(0.0, 1.0 - inside / wall))
