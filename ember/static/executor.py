"""The executor: runs a graph on raw arrays, with no Tensor objects and no autograd.

``Plan(graph, targets, feeds)`` is built once: the nodes the targets need (in graph order; a
fed value cuts the graph there), one slot per value, and for each step the op's ``forward``,
its input slots, its output slot and the slots whose last use it is (freed right after, so
intermediate arrays live no longer than needed). ``Plan.run(feeds, state)`` is then one loop of
``op.forward(xp, *arrays)`` calls; on a device where an op has a registered kernel
(``ember.backend.overrides``), that step calls the kernel first (``steps_for``: the steps of
each device type are bound once and kept).

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
        self.template = [None] * self.size
        for i, data in consts:
            self.template[i] = data

    def run(self, feeds, state) -> tuple[list, list]:
        """``(outputs, stores)``: the targets' arrays, and ``(target value, array)`` for each
        ``Assign`` that ran."""
        env = self.template[:]
        for i, a in zip(self.feed_slots, feeds):
            env[i] = a
        for i, a in zip(self.state_slots, state):
            env[i] = a
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
        steps = self.steps_for(xp, feeds)
        k = 0
        try:
            for k, (forward, ins, out, free) in enumerate(steps):  # noqa: B007 (k: errors)
                n = len(ins)
                if n == 2:
                    r = forward(xp, env[ins[0]], env[ins[1]])
                elif n == 1:
                    r = forward(xp, env[ins[0]])
                else:
                    r = forward(xp, *[env[i] for i in ins])
                if type(r) is not _ndarray and r is not None and xp is np:
                    r = np.asarray(r)
                env[out] = r
                for i in free:
                    env[i] = None
        except EmberError:
            raise
        except Exception as e:  # noqa: BLE001 - name the node that failed
            raise GraphError(
                f"{self.graph.name}: running node {format_node(self.nodes[k])} failed: "
                f"{type(e).__name__}: {e}"
            ) from e
        return [env[i] for i in self.out_slots], [(v, env[i]) for v, i in self.stores]

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


__all__ = ["Plan"]
