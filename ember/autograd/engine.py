"""Reverse-mode autograd: walk the recorded nodes backwards, applying each op's vjp.

The vjps are ember ops, so with ``create_graph=True`` the backward pass records history of
its own and can be differentiated again.

>>> import ember
>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> (gx,) = ember.autograd.grad((x * x).sum(), x)
>>> gx
tensor([2., 4.])
"""

from __future__ import annotations

from .. import _config
from .._errors import AutogradError, EmberError
from .._tensor import Tensor
from ..ops.base import apply
from ..ops.elementwise import ADD


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _toposort(roots) -> list:
    """Nodes reachable from ``roots``, each after every node that consumes it (iterative DFS)."""
    order, seen = [], set()
    stack = [(n, False) for n in roots]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for t in node.inputs:
            n = t._node
            if n is not None and id(n) not in seen:
                stack.append((n, False))
    order.reverse()
    return order


def _prune(order: list, targets: set) -> set:
    """ids of nodes on a path to a target (a node id or the id of a leaf Tensor)."""
    useful = set()
    for node in reversed(order):  # inputs before consumers
        for t in node.inputs:
            key = id(t._node) if t._node is not None else id(t)
            if key in targets or key in useful:
                useful.add(id(node))
                break
    return useful


def _initial_grads(outputs, grad_outputs) -> list:
    grads = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise AutogradError(f"backward: output {i} is a {type(out).__name__}, not a Tensor")
        if not out._requires_grad:
            raise AutogradError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        g = grad_outputs[i] if i < len(grad_outputs) else None
        if g is None:
            if out._data.size != 1:
                raise AutogradError(
                    "grad can be implicitly created only for scalar outputs: output "
                    f"{i} has shape {tuple(out.shape)}; pass gradient= (a tensor of that shape)"
                )
            g = Tensor._make(out.device.xp.ones(out._data.shape, dtype=out._data.dtype))
        elif not isinstance(g, Tensor):
            from ..functions.creation import tensor as _tensor

            g = _tensor(g, dtype=out.dtype, device=out.device)
        elif tuple(g.shape) != tuple(out.shape):
            raise AutogradError(
                f"backward: gradient {i} has shape {tuple(g.shape)} but the output has shape "
                f"{tuple(out.shape)}"
            )
        grads.append(g)
    return grads


def _accumulate(table: dict, key, g):
    prev = table.get(key)
    table[key] = g if prev is None else apply(ADD, prev, g)


def run_backward(outputs, grad_outputs, inputs, retain_graph: bool, create_graph: bool):
    """The engine: returns {id(leaf or node): grad} for the leaves/nodes it reached.

    With ``inputs`` the walk is pruned to nodes that lead to them and only their gradients
    are kept; without, every leaf that requires grad gets its gradient (for ``backward``).
    """
    grads0 = _initial_grads(outputs, grad_outputs)
    node_grads: dict = {}
    leaf_grads: dict = {}
    leaves: dict = {}
    roots = []
    for out, g in zip(outputs, grads0):
        if out._node is None:
            _accumulate(leaf_grads, id(out), g)
            leaves[id(out)] = out
        else:
            _accumulate(node_grads, id(out._node), g)
            roots.append(out._node)
    order = _toposort(roots)
    targets = useful = None
    if inputs is not None:
        targets = {id(t._node) if t._node is not None else id(t) for t in inputs}
        useful = _prune(order, targets)
    captured = {}
    anomaly = _config.state.anomaly
    with _config.set_grad_enabled(create_graph):
        for node in order:
            key = id(node)
            g = node_grads.pop(key, None)
            if g is None:
                continue
            if node.hooks:
                for hook in node.hooks:
                    r = hook(g)
                    if r is not None:
                        g = r
            if node.retained is not None:
                t = node.retained()
                if t is not None:
                    t._grad = g if create_graph else g.detach()
            if targets is not None:
                if key in targets:
                    captured[key] = g
                if key not in useful:
                    continue
            node.check_saved()
            out = node.output() if node.op.saves_output else None
            in_grads = node.op.vjp(g, out, *node.inputs)
            if anomaly:
                _anomaly_backward(node, in_grads)
            for t, ig in zip(node.inputs, in_grads):
                if ig is None or not t._requires_grad:
                    continue
                n = t._node
                if n is None:
                    _accumulate(leaf_grads, id(t), ig)
                    leaves[id(t)] = t
                else:
                    _accumulate(node_grads, id(n), ig)
            if not retain_graph:
                node.free()
    return leaves, leaf_grads, captured


def _anomaly_backward(node, in_grads) -> None:
    for i, ig in enumerate(in_grads):
        if ig is None:
            continue
        arr = ig._data
        xp = ig.device.xp
        if arr.dtype.kind == "f" and not bool(xp.isfinite(arr).all()):
            bad = "NaN" if bool(xp.isnan(arr).any()) else "Inf"
            raise EmberError(
                f"anomaly: function '{node.name()}' returned {bad} values in its gradient for "
                f"input {i} (shape {tuple(arr.shape)}); the forward op was created at "
                f"{node.trace or '<unknown: enable detect_anomaly before the forward pass>'}"
            )


def _run_leaf_hooks(t: Tensor, g: Tensor) -> Tensor:
    if t._hooks:
        for hook in t._hooks:
            r = hook(g)
            if r is not None:
                g = r
    return g


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs=None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into each leaf's ``.grad``.

    >>> import ember
    >>> x = ember.ones(3, requires_grad=True)
    >>> ember.autograd.backward((x * 2).sum()); x.grad
    tensor([2., 2., 2.])
    """
    outputs = _as_tuple(tensors)
    grad_outputs = _as_tuple(grad_tensors) if grad_tensors is not None else ()
    if retain_graph is None:
        retain_graph = create_graph
    only = None if inputs is None else _as_tuple(inputs)
    leaves, leaf_grads, captured = run_backward(
        outputs, grad_outputs, only, retain_graph, create_graph
    )
    with _config.set_grad_enabled(create_graph):
        for key, g in leaf_grads.items():
            t = leaves[key]
            if only is not None and not any(t is i for i in only):
                continue
            _accumulate_into_grad(t, _run_leaf_hooks(t, g), create_graph)
        if only is not None:
            for t in only:
                if t._node is not None and id(t._node) in captured:
                    _accumulate_into_grad(t, captured[id(t._node)], create_graph)


def _accumulate_into_grad(t: Tensor, g: Tensor, create_graph: bool) -> None:
    if t._grad is None:
        if create_graph:
            t._grad = g
        else:  # a fresh buffer: vjps may return the same array to several inputs
            t._grad = Tensor._make(g._data.copy())
    elif create_graph or t._grad._requires_grad:
        t._grad = apply(ADD, t._grad, g)
    else:
        t._grad._data += g._data
        t._grad._version[0] += 1


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not stored in ``.grad``).

    >>> import ember
    >>> x = ember.tensor(3.0, requires_grad=True)
    >>> (g,) = ember.autograd.grad(x ** 3, x, create_graph=True)
    >>> ember.autograd.grad(g, x)[0]
    tensor(18.)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise AutogradError("grad requires at least one input")
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            raise AutogradError(f"grad: input {i} is a {type(t).__name__}, not a Tensor")
        if not t._requires_grad:
            raise AutogradError(f"grad: input {i} (shape {tuple(t.shape)}) does not require grad")
    gouts = _as_tuple(grad_outputs) if grad_outputs is not None else ()
    if retain_graph is None:
        retain_graph = create_graph
    leaves, leaf_grads, captured = run_backward(outs, gouts, ins, retain_graph, create_graph)
    result = []
    for i, t in enumerate(ins):
        g = captured.get(id(t._node)) if t._node is not None else leaf_grads.get(id(t))
        if g is not None and t._node is None and t._hooks:
            with _config.set_grad_enabled(create_graph):
                g = _run_leaf_hooks(t, g)
        if g is None:
            if materialize_grads:
                g = Tensor._make(t.device.xp.zeros(t._data.shape, dtype=t._data.dtype))
            elif not allow_unused:
                raise AutogradError(
                    f"grad: input {i} (shape {tuple(t.shape)}) was not used in the graph of the "
                    "outputs; pass allow_unused=True to get None for it"
                )
        result.append(g)
    return tuple(result)


__all__ = ["backward", "grad", "run_backward"]
