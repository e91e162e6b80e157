"""The executor: runs a graph on raw arrays, with no Tensor objects and no autograd.

``Plan(graph, targets, feeds)`` is built once: the nodes the targets need (in graph order; a
fed value cuts the graph there), one slot per value, and for each step the op's ``forward``,
its input slots, its output slot and the slots whose last use it is (freed right after, so
intermediate arrays live no longer than needed). ``Plan.run(feeds, state)`` is then one loop of
``op.forward(xp, *arrays)`` calls; on a device where an op has a registered kernel
(``ember.backend.overrides``), that step calls the kernel first (``steps_for``: the steps of
each device type are bound once and kept). The loop is interpreted for the first runs and then
generated as Python source for those steps (values in local variables: a step costs one call),
where runs of steps with numba forms become one numba call each (``ember.static.native``).

``Assign`` nodes are not run: their value's slot stands for their output, and ``run`` returns
``(target value, array)`` pairs for the caller to store once the run ends (so every read in a
run sees the state from before it).

>>> import numpy as np
>>> from ember.static import Graph
>>> from ember.static.executor import Plan
>>> from ember.ops.elementwise import MUL
>>> g = Graph()
>>> x = g.add_input((2,), np.float32)
>>> y = g.add_node(MUL, [x, x], (2,), np.float32)
>>> Plan(g, [y]).run([np.array([2.0, 3.0], np.float32)], [])[0]
[array([4., 9.], dtype=float32)]
"""

from __future__ import annotations

import numpy as np

from .._errors import EmberError
from ..backend import overrides, xp_of
from ..backend.arrays import writeable
from .ir import Assign, Graph, GraphError, Value, format_node

_ndarray = np.ndarray


class Plan:
    """What running ``targets`` of ``graph`` takes, given values for ``feeds`` (default: the
    graph's inputs). ``missing`` lists needed inputs that are not fed; ``state`` the state
    values to pass to ``run``, in order."""

    def __init__(self, graph: Graph, targets, feeds=None) -> None:
        self.graph = graph
        targets = list(targets)
        feeds = list(graph.inputs) if feeds is None else list(feeds)
        fed = {v.id for v in feeds}
        needed: set = set()
        stack = list(targets)
        while stack:
            v = stack.pop()
            if v.id in needed:
                continue
            needed.add(v.id)
            if v.id in fed or v.kind != "node":
                continue
            node = v.node
            stack.extend(node.inputs[1:] if type(node.op) is Assign else node.inputs)
        self.missing = [v for v in graph.inputs if v.id in needed and v.id not in fed]
        self.state = [v for v in graph.state if v.id in needed and v.id not in fed]
        nodes = [n for n in graph.nodes if n.output.id in needed and n.output.id not in fed]

        index: dict = {}

        def slot(v: Value) -> int:
            i = index.get(v.id)
            if i is None:
                i = index[v.id] = len(index)
            return i

        self.feed_slots = [slot(v) for v in feeds]
        self.state_slots = [slot(v) for v in self.state]
        consts = [(slot(v), v.data) for v in graph.constants if v.id in needed]
        stores = []
        steps = []
        self.nodes = []
        for node in nodes:
            if type(node.op) is Assign:
                target, value = node.inputs
                index[node.output.id] = slot(value)
                stores.append((target, slot(value)))
                continue
            steps.append((node.op.forward, tuple(slot(x) for x in node.inputs), slot(node.output)))
            self.nodes.append(node)
        self.out_slots = [slot(v) for v in targets]
        self.stores = stores
        keep = set(self.out_slots) | {s for _, s in stores}
        last: dict = {}
        for k, (_, ins, out) in enumerate(steps):
            for i in ins:
                last[i] = k
            last.setdefault(out, k)
        frees: list = [[] for _ in steps]
        for i, k in last.items():
            if i not in keep:
                frees[k].append(i)
        self.steps = [(f, ins, out, tuple(fr)) for (f, ins, out), fr in zip(steps, frees)]
        self.size = len(index)
        from .dims import has_dims

        self._dynamic = [k for k, node in enumerate(self.nodes) if has_dims(node.op)]
        self._fed_at = {id(v): i for i, v in enumerate(feeds)}
        self._specialized: dict = {}
        self._bound: dict = {}  # device type -> steps with each op bound for it
        self._loops: dict = {}  # id(steps) -> [steps, runs so far, their generated loop or None]
        self.template = [None] * self.size
        for i, data in consts:
            self.template[i] = data

    def run(self, feeds, state) -> tuple[list, list]:
        """``(outputs, stores)``: the targets' arrays, and ``(target value, array)`` for each
        ``Assign`` that ran."""
        xp = np
        for a in feeds:
            if type(a) is not _ndarray:
                xp = xp_of(a)
            break
        else:
            for a in state:
                if type(a) is not _ndarray:
                    xp = xp_of(a)
                break
        return self.run_steps(xp, self.steps_for(xp, feeds), feeds, state)

    def run_steps(self, xp, steps: list, feeds, state) -> tuple[list, list]:
        """``run`` with the given ``steps`` (``steps_for``'s, or some swapped for a capture)."""
        known = self._loops.get(id(steps))
        if known is None or known[0] is not steps:
            known = self._loops[id(steps)] = [steps, 0, None]
        loop = known[2]
        if loop is None:
            known[1] += 1
            if known[1] < GENERATE_AFTER:
                loop = _interpreted(self, steps)
            else:
                loop = known[2] = _generated(self, steps, xp is np)
        at = [0]
        try:
            outs, stored = loop(xp, feeds, state, at)
        except EmberError:
            raise
        except Exception as e:  # noqa: BLE001 - name the node that failed
            raise GraphError(
                f"{self.graph.name}: running node {format_node(self.nodes[at[0]])} failed: "
                f"{type(e).__name__}: {e}"
            ) from e
        return outs, [(v, a) for (v, _), a in zip(self.stores, stored)]

    def native_runs(self) -> list:
        """The ``ember.static.native.Run``s of this plan's generated loops (their ``fn`` is set
        where the run is one numba call)."""
        from .native import Run

        return [
            v
            for _, _, loop in self._loops.values()
            if loop is not None and hasattr(loop, "__globals__")
            for v in loop.__globals__.values()
            if isinstance(v, Run)
        ]

    def steps_for(self, xp, feeds) -> list:
        """The steps that run this plan on ``xp``'s device for ``feeds``: each op's registered
        kernel for that device type, or its ``forward``, with unknown sizes specialized."""
        device = overrides.device_type(xp)
        if self._dynamic:
            return self._specialize(feeds, device)
        steps = self._bound.get(device)
        if steps is None:
            steps = self._bound[device] = [
                (overrides.bind(node.op, device), ins, out, free)
                for node, (_, ins, out, free) in zip(self.nodes, self.steps)
            ]
        return steps

    def _specialize(self, feeds, device: str = "cpu") -> list:
        """The steps with every unknown size in an op's attributes replaced by the fed one."""
        from .dims import substitute

        def size_of(value, axis):
            i = self._fed_at.get(id(value))
            if i is None:
                raise GraphError(f"{self.graph.name}: the size {value!r}[{axis}] is not fed")
            return feeds[i].shape[axis]

        key = (device,) + tuple(tuple(a.shape) for a in feeds)
        steps = self._specialized.get(key)
        if steps is None:
            steps = [
                (overrides.bind(node.op, device), ins, out, free)
                for node, (_, ins, out, free) in zip(self.nodes, self.steps)
            ]
            for k in self._dynamic:
                op = substitute(self.nodes[k].op, size_of)
                _, ins, out, free = steps[k]
                steps[k] = (overrides.bind(op, device), ins, out, free)
            self._specialized[key] = steps
        return steps


GENERATE_AFTER = 3  # runs of a list of steps before its loop is generated (``_generated``)


def _interpreted(plan: Plan, steps: list):
    """The loop that runs ``steps``: ``loop(xp, feeds, state, at)`` returns ``(outputs, stored
    arrays)``. Each step reads its inputs' slots and fills its output's; a slot is emptied after
    its last use, and ``at[0]`` holds the index of the step running when an exception leaves.
    On NumPy a step's scalar result becomes a 0-d array."""

    def loop(xp, feeds, state, at):
        env = plan.template[:]
        for i, a in zip(plan.feed_slots, feeds):
            env[i] = a
        for i, a in zip(plan.state_slots, state):
            env[i] = a
        on_numpy = xp is np
        for k, (forward, ins, out, free) in enumerate(steps):
            at[0] = k
            r = forward(xp, *[env[i] for i in ins])
            if on_numpy and type(r) is not _ndarray and r is not None:
                r = np.asarray(r)
            env[out] = r
            for i in free:
                env[i] = None
        return [env[i] for i in plan.out_slots], [env[s] for _, s in plan.stores]

    return loop


def _generated(plan: Plan, steps: list, on_numpy: bool):
    """``_interpreted``'s loop as Python source generated for ``steps`` and compiled: each value
    lives in a local variable, so a step costs a call and no slot indexing (a step bound to a
    device override calls it, and the op's forward where it declines, with no wrapper between).
    Compiling costs about as much as a hundred runs save, so a plan generates it once the same
    steps ran ``GENERATE_AFTER`` times. On NumPy with numba, each run of steps with numba forms
    is one call of its numba function once that is compiled (``ember.static.native``), its steps
    one at a time until then."""
    fed = dict(zip(plan.feed_slots, range(len(plan.feed_slots))))
    held = dict(zip(plan.state_slots, range(len(plan.state_slots))))
    made = {out for _, _, out, _ in steps}
    read = {i for _, ins, _, _ in steps for i in ins}
    read |= set(plan.out_slots) | {s for _, s in plan.stores}
    lines = ["def loop(xp, feeds, state, at):"]
    for i in sorted(read - made):
        if i in fed:
            lines.append(f"    v{i} = feeds[{fed[i]}]")
        elif i in held:
            lines.append(f"    v{i} = state[{held[i]}]")
        else:
            lines.append(f"    v{i} = template[{i}]")
    lines.append("    k = 0")
    lines.append("    try:")
    lines.append("        pass")
    scope = {}

    def step(k: int, pad: str) -> None:
        f, ins, out, free = steps[k]
        args = "".join(f", v{i}" for i in ins)
        lines.append(f"{pad}k = {k}")
        pair = overrides.unbind(f)
        if pair is None:
            scope[f"f{k}"] = f
            lines.append(f"{pad}v{out} = f{k}(xp{args})")
        else:  # the override, then the op's forward where it declines (no wrapper between)
            scope[f"o{k}"], scope[f"p{k}"] = pair
            scope[f"f{k}"] = pair[1].forward
            lines.append(f"{pad}v{out} = o{k}(p{k}, xp{args})")
            lines.append(f"{pad}if v{out} is NI:")
            lines.append(f"{pad}    v{out} = f{k}(xp{args})")
        if on_numpy:
            lines.append(f"{pad}if v{out}.__class__ is not nd and v{out} is not None:")
            lines.append(f"{pad}    v{out} = asarray(v{out})")
        lines.extend(f"{pad}v{i} = None" for i in free)

    k = 0
    runs = _native_runs(plan, steps) if on_numpy else {}
    while k < len(steps):
        run = runs.get(k)
        if run is None:
            step(k, "        ")
            k += 1
            continue
        # one numba call once the run's function is ready (``native.Run``); until then, or
        # where numba refuses the arrays, its steps one at a time
        scope[f"R{k}"] = run
        ins = ", ".join(f"v{i}" for i in run.ins)
        owns = "".join(f", own(v{i})" for i in run.reused)
        outs = "".join(f"v{o}, " for o in run.outs)
        end = k + len(run.nodes)
        dead = {i for _, _, _, fr in steps[k:end] for i in fr} & (set(run.ins) | set(run.outs))
        lines.append(f"        k = {k}")
        lines.append("        try:")
        lines.append(f"            {outs}= R{k}.fn(*R{k}.gemms, {ins}{owns})")
        lines.append("        except TypeError as e:")
        lines.append(f"            if R{k}.fn is not None:")
        lines.append(f"                R{k}.refused(e)")
        lines.append(f"            elif not R{k}.done:")
        lines.append(f"                R{k}.ask({ins})")
        for j in range(k, end):
            step(j, "            ")
        if dead:
            lines.append("        else:")
            lines.extend(f"            v{i} = None" for i in sorted(dead))
        scope["own"] = _owns
        k = end
    lines.append("    except BaseException:")
    lines.append("        at[0] = k")
    lines.append("        raise")
    outs = ", ".join(f"v{i}" for i in plan.out_slots)
    stored = ", ".join(f"v{s}" for _, s in plan.stores)
    lines.append(f"    return [{outs}], [{stored}]")
    scope.update(nd=_ndarray, asarray=np.asarray, template=plan.template, NI=NotImplemented)
    exec(compile("\n".join(lines), f"<ember plan of {plan.graph.name}>", "exec"), scope)  # noqa: S102
    return scope["loop"]


def _native_runs(plan: Plan, steps: list) -> dict:
    """``{first step: native.Run}`` for the runs of ``steps`` that may become one numba call
    each (with numba on, sizes known and the generated loop's plain NumPy steps)."""
    from ..backend import jit

    if not jit.enabled() or plan._dynamic:
        return {}
    from . import native

    keep = set(plan.out_slots) | {s for _, s in plan.stores}
    return {run.first: run for run in native.runs(plan.nodes, steps, keep)}


def _owns(a) -> bool:
    """Whether an op may write into ``a``: a NumPy array of its own, C-contiguous, writeable."""
    return a.base is None and a.flags.c_contiguous and writeable(a)


__all__ = ["Plan"]
