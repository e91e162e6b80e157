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
  arrays, an optimizer's state reset, hyperparameters that change the kernel, like turning
  ``amsgrad`` on) runs without the graph once and captures again on the next call.
  Gradients the step reads are copied into the graph's own buffers (zeros when None).
- **Static outputs.** In ``mode='reduce-overhead'`` the returned tensors *are* the graph's
  output buffers: the next call overwrites them (``.clone()`` what you keep). By default
  (``mode='default'``) each call returns copies (one small device copy per output). Gradients
  left in ``.grad`` by the step are the graph's buffers in both modes: the next step overwrites
  them, as it would replace them in eager mode.
- **Warm-up, then capture.** The first call of a signature runs the plan normally (CuPy compiles
  and loads every kernel; the optimizers create their state); the second captures on a side
  stream, with a private memory pool (``cupy.cuda.MemoryPool`` through ``using_allocator``, so
  no block the graph uses is handed to other code), and every later call replays. Replays
  launch on the caller's current stream, so no extra synchronization is needed around them.
- **Host values.** A graph cannot read Python numbers at replay: Adam's bias corrections change
  every step and a scheduler changes ``lr``. Optimizer updates (``Adam``, ``AdamW``, ``SGD``)
  are therefore captured as kernels reading their hyperparameters from a small device buffer;
  before each launch the host computes them (and advances ``state['step']``) and copies them
  in from pinned memory on the same stream. Other ops with side effects cannot be replayed:
  random draws (dropout masks, ``rand``/``randn``: CuPy's generator cannot be captured),
  optimizers other than those three, an op that needs a value back on the host (``.item()``) or
  the cuRAND/cuSOLVER libraries. Such a step runs without a graph, with one warning saying why.
- **Libraries.** CuPy refuses cuBLAS calls during capture, so ``xp.matmul`` is a direct
  ``cublasGemmEx`` call (``ember.static._cublas``) while capturing; host-to-device constants
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
import math
import sys
import warnings

import numpy as np

from .. import _caches
from ..backend import arrays as _arrays
from ..backend import cuda as _cuda
from ..backend.kernels import fused as _fused
from ._cublas import CaptureUnsupported
from .ir import Assign
from .pytree import rebuild
from .trace import ArrayRef, GradRef, OptimizerUpdate

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
        if not getattr(op, "has_side_effects", False) or type(op) is Assign:
            continue
        if isinstance(op, OptimizerUpdate):
            if _update_kind(op.optimizer) is None:
                return (
                    f"{type(op.optimizer).__name__}'s update reads Python state on every step "
                    "(Adam, AdamW and SGD can be captured)"
                )
            continue
        name = getattr(op, "name", None) or type(op).__name__
        if type(op).__name__ in ("DropoutMask", "Random"):
            return (
                f"{name} draws random numbers, and CuPy's generator cannot be captured "
                "(dropout in training mode, rand/randn in the step)"
            )
        return f"{name} has effects a CUDA graph cannot replay"
    return None


def _update_kind(opt) -> str | None:
    from ..optim.adam import Adam
    from ..optim.sgd import SGD

    if isinstance(opt, Adam) and type(opt).update is Adam.update:
        return "adam"
    if isinstance(opt, SGD) and type(opt).update is SGD.update:
        return "sgd"
    return None


# -- optimizer updates reading their hyperparameters from the device ------------------------------


class _Update:
    """One captured optimizer update: the kernel variant, the state arrays it was captured
    with, and the host computation of its hyperparameters (``values``)."""

    def __init__(self, op: OptimizerUpdate) -> None:
        self.opt, self.param, self.group = op.optimizer, op.param, op.group
        self.kind = _update_kind(self.opt)
        st = self.opt.state.get(self.param)
        if st is None:
            raise CaptureUnsupported(
                f"{type(self.opt).__name__} has no state for a parameter after the warm-up"
            )
        self.state = st
        self.variant = self._variant()
        self.arrays = self._arrays()
        if self.kind == "sgd" and self.variant[0] and st.get("momentum_buffer") is None:
            raise CaptureUnsupported("SGD's momentum buffer is not there after the warm-up")
        self.names = _scalar_names(self.kind, self.variant)
        self.hyp = None  # device view of this update's hyperparameters (set by the runner)
        self.dtype = None

    def _variant(self) -> tuple:
        g = self.group
        if self.kind == "adam":
            return (
                bool(g["amsgrad"]),
                bool(self.opt.decoupled),
                bool(g.get("maximize")),
                g["weight_decay"] != 0,
            )
        return (
            g["momentum"] != 0,
            bool(g["nesterov"]),
            bool(g.get("maximize")),
            g["weight_decay"] != 0,
            g["dampening"] == 0,
        )

    def _arrays(self) -> tuple:
        st = self.state
        if self.kind == "adam":
            keys = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if self.variant[0] else ())
        else:
            keys = ("momentum_buffer",) if self.variant[0] else ()
        return tuple(st[k] for k in keys)

    def changed(self) -> str | None:
        """Why this update's captured kernel no longer fits (None when it does)."""
        st = self.opt.state.get(self.param)
        if st is not self.state:
            return f"{type(self.opt).__name__}'s state was replaced"
        if self._variant() != self.variant:
            return f"{type(self.opt).__name__}'s hyperparameters changed its kernel"
        try:
            arrays = self._arrays()
        except KeyError:
            return f"{type(self.opt).__name__}'s state was reset"
        if any(a is not b for a, b in zip(arrays, self.arrays)):
            return f"{type(self.opt).__name__}'s state arrays were replaced"
        return None

    def values(self) -> dict:
        """This step's hyperparameters (advances Adam's ``state['step']``, as ``update`` does)."""
        g = self.group
        if self.kind == "adam":
            lr, (b1, b2), eps, wd = g["lr"], g["betas"], g["eps"], g["weight_decay"]
            self.state["step"] = t = self.state["step"] + 1
            return {
                "b1": b1,
                "omb1": 1.0 - b1,
                "b2": b2,
                "omb2": 1.0 - b2,
                "wd": wd,
                "decay": 1.0 - lr * wd,
                "step_size": lr / (1.0 - b1**t),
                "bc2_sqrt": math.sqrt(1.0 - b2**t),
                "eps": eps,
            }
        return {
            "wd": g["weight_decay"],
            "momentum": g["momentum"],
            "damp": 1.0 - g["dampening"],
            "lr": g["lr"],
        }

    def forward(self, xp, p, g):
        """The update during capture (and in the fake-CuPy tests): in place on ``p`` and the
        state, hyperparameters read from ``self.hyp`` on the device."""
        if self.variant[2]:  # maximize
            g = -g
        if self.fused(xp, p, g):
            _kernel(xp, self.kind, self.variant, self.dtype)(g, self.hyp, p, *self.arrays)
            return p
        return self._reference(xp, p, g)

    def fused(self, xp, p, g) -> bool:
        """Whether the kernel takes this update: where the eager override would (the same
        dtypes, ``ember.backend.kernels.optim.serves``), so replays compute what eager does."""
        from ..backend.kernels.optim import serves

        return _fused(xp) and serves(p, g, self.state)

    def _reference(self, xp, p, g):
        """NumPy-style update (the ``ember.optim`` code, term for term) with 0-d device scalars."""
        s = {n: self.hyp[i] for i, n in enumerate(self.names)}
        if self.kind == "adam":
            amsgrad, decoupled, _, wd = self.variant
            if wd:
                if decoupled:
                    p *= s["decay"]
                else:
                    g = g + s["wd"] * p
            m, v = self.arrays[0], self.arrays[1]
            tmp = xp.multiply(g, s["omb1"], dtype=p.dtype)
            m *= s["b1"]
            m += tmp
            xp.multiply(g, g, out=tmp)
            tmp *= s["omb2"]
            v *= s["b2"]
            v += tmp
            if amsgrad:
                vmax = self.arrays[2]
                xp.maximum(vmax, v, out=vmax)
                v = vmax
            xp.sqrt(v, out=tmp)
            tmp /= s["bc2_sqrt"]
            tmp += s["eps"]
            xp.divide(m, tmp, out=tmp)
            tmp *= s["step_size"]
            p -= tmp
            return p
        momentum, nesterov, _, wd, no_damp = self.variant
        if wd:
            g = g + s["wd"] * p
        if momentum:
            buf = self.arrays[0]
            buf *= s["momentum"]
            buf += g if no_damp else s["damp"] * g
            g = g + s["momentum"] * buf if nesterov else buf
        xp.subtract(p, xp.multiply(g, s["lr"], dtype=p.dtype), out=p)
        return p


def _sources(kind: str, variant: tuple):
    from ..backend.kernels import optim as k

    if kind == "adam":
        return k.adam_source(variant[0], variant[1])
    return k.sgd_source(variant[0], variant[1])


def _scalar_names(kind: str, variant: tuple) -> list[str]:
    """The hyperparameters of the fused kernel, in its argument order."""
    ins = _sources(kind, variant)[0]
    return [p.split()[1] for p in ins.split(", ") if p.split()[0] == "A"]


def capturable_source(kind: str, variant: tuple, acc) -> tuple[str, str, str]:
    """``ember.backend.kernels.optim``'s kernel with its scalar parameters read from a device
    array instead: ``(in_params, out_params, operation)`` for ``cupy.ElementwiseKernel``.

    >>> ins, outs, op = capturable_source("sgd", (False, False, False, False, True), "float32")
    >>> ins, outs
    ('G g, raw float32 hyp', 'T p')
    >>> op.splitlines()[:3]
    ['typedef float A;', 'const A wd = hyp[0];', 'const A lr = hyp[1];']
    """
    ins, outs, op = _sources(kind, variant)
    acc = np.dtype(acc)
    params = [p.split() for p in ins.split(", ")]
    arrays = [" ".join(p) for p in params if p[0] != "A"]
    names = [p[1] for p in params if p[0] == "A"]
    ctype = "double" if acc == np.float64 else "float"
    prologue = [f"typedef {ctype} A;"] + [f"const A {n} = hyp[{i}];" for i, n in enumerate(names)]
    return ", ".join(arrays + [f"raw {acc.name} hyp"]), outs, "\n".join(prologue) + "\n" + op


_KERNELS: dict = {}
_caches.register("CUDA-graph update kernels", _KERNELS.clear, _KERNELS.__len__)


def _kernel(cp, kind: str, variant: tuple, acc):
    key = (id(cp), kind, variant[:2], np.dtype(acc).name)
    k = _KERNELS.get(key)
    if k is None:
        ins, outs, op = capturable_source(kind, variant, acc)
        k = _KERNELS[key] = cp.ElementwiseKernel(ins, outs, op, f"ember_graph_{kind}")
    return k


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
    if not _fused(cp):  # a stand-in CuPy (tests): nothing to work around
        yield
        return
    from . import _cublas

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
        self.updates: list = []
        self.keep: list = []
        self.pool = None
        self.hyp: dict = {}  # dtype name -> (device array, [pinned slots], [events], next)

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
                undo: list = []
                try:
                    self._capture_now(cp, feeds, undo)
                except Exception as e:  # noqa: BLE001 - any failure: run without a graph
                    for st, step in undo:
                        st["step"] = step
                    self._reset()
                    self.disabled = f"capture failed: {type(e).__name__}: {e}"
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
                self._prepare(cp)
            self.graph.launch()
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
    def _capture_now(self, cp, feeds, undo: list) -> None:
        entry = self.entry
        plan = entry.plan
        self.static_in = [cp.empty(f.shape, f.dtype) for f in feeds]
        arrays = [r.read() for r in entry.refs]
        self.static_state = []
        for ref, a in zip(entry.refs, arrays):
            self.static_state.append(a if isinstance(ref, ArrayRef) else cp.empty(a.shape, a.dtype))
        # the graph's optimizer updates, with their hyperparameter buffers
        subs = {}
        for k, node in enumerate(plan.nodes):
            if isinstance(node.op, OptimizerUpdate):
                u = _Update(node.op)
                u.dtype = np.float64 if node.output.dtype == np.float64 else np.float32
                self.updates.append(u)
                subs[k] = u.forward
        self._alloc_hyper(cp)
        if self._bind(feeds) is not None:
            raise CaptureUnsupported("the state changed while capturing")
        undo.extend((u.state, u.state["step"]) for u in self.updates if "step" in u.state)
        self._prepare(cp)
        steps = plan.steps_for(cp, self.static_in)  # the ops' CUDA kernels where registered
        steps = [(subs.get(k, f), ins, out, free) for k, (f, ins, out, free) in enumerate(steps)]
        self._warm_kernels(cp)
        pool = cp.cuda.MemoryPool()
        using = getattr(cp.cuda, "using_allocator", None)
        if using is None:
            raise CaptureUnsupported("this CuPy has no cupy.cuda.using_allocator")
        stream = cp.cuda.Stream(non_blocking=True)

        def body():
            with using(pool.malloc), _capture_patches(cp, self.keep):
                outs, stores = _run_steps(cp, plan, steps, self.static_in, self.static_state)
                return self._stores(cp, outs[: entry.n_out], stores)

        graph, (outs, post) = _capture(cp, stream, body)
        self.pool, self.graph, self.outs, self.post = pool, graph, outs, post
        self.captures += 1

    def _warm_kernels(self, cp) -> None:
        """Compile and load the update kernels now (not while capturing), on scratch copies."""
        if not _fused(cp):
            return
        for u in self.updates:
            data = u.param._data
            if data.size == 0 or not u.fused(cp, data, data):
                continue
            p = data.ravel()[:1].copy()
            g = p.copy()
            arrays = [a.ravel()[:1].copy() for a in u.arrays]
            _kernel(cp, u.kind, u.variant, u.dtype)(g, u.hyp, p, *arrays)

    def _alloc_hyper(self, cp) -> None:
        sizes: dict = {}
        for u in self.updates:
            key = np.dtype(u.dtype).name
            sizes[key] = sizes.get(key, 0) + len(u.names)
        for key, n in sizes.items():
            dev = cp.zeros(max(n, 1), key)
            self.hyp[key] = [dev, [], [], 0]
        offsets = dict.fromkeys(sizes, 0)
        for u in self.updates:
            key = np.dtype(u.dtype).name
            off = offsets[key]
            u.hyp = self.hyp[key][0][off : off + len(u.names)]
            u.offset = off
            offsets[key] = off + len(u.names)

    def _prepare(self, cp) -> None:
        """Host side of this step's optimizer updates: their hyperparameters, copied to the
        device on the current stream from a ring of pinned buffers."""
        if not self.updates:
            return
        from ..backend.arrays import empty_pinned

        slots_per_key = 4
        stream = cp.cuda.get_current_stream()
        staged = {}
        for key, entry in self.hyp.items():
            dev, slots, events, nxt = entry
            if len(slots) < slots_per_key:
                slots.append(empty_pinned(dev.shape, dev.dtype))
                events.append(None)
                i = len(slots) - 1
            else:
                i = nxt % slots_per_key
                if events[i] is not None:
                    events[i].synchronize()  # its last copy must have read it
            entry[3] = i + 1
            staged[key] = (slots[i], i)
        for u in self.updates:
            host = staged[np.dtype(u.dtype).name][0]
            vals = u.values()
            host[u.offset : u.offset + len(u.names)] = [vals[n] for n in u.names]
        for key, (host, i) in staged.items():
            entry = self.hyp[key]
            entry[0].set(host, stream=stream)
            entry[2][i] = stream.record()

    def _bind(self, feeds) -> str | None:
        """Copy this call's arguments and read state into the graph's buffers; a reason to
        capture again when the graph no longer fits."""
        for u in self.updates:
            why = u.changed()
            if why is not None:
                return why
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
                root = arr
                while root.base is not None:
                    root = root.base
                if id(root) in protected:
                    arr = arr.copy()
                    root = arr
                protected.add(id(root))
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


def _run_steps(xp, plan, steps, feeds, state) -> tuple[list, list]:
    """``Plan.run``'s loop over ``steps`` (some forwards swapped for capture)."""
    env = plan.template[:]
    for i, a in zip(plan.feed_slots, feeds):
        env[i] = a
    for i, a in zip(plan.state_slots, state):
        env[i] = a
    for forward, ins, out, free in steps:
        env[out] = forward(xp, *[env[i] for i in ins])
        for i in free:
            env[i] = None
    return [env[i] for i in plan.out_slots], [(v, env[i]) for v, i in plan.stores]
