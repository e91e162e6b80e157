"""Reverse-mode autograd: walk the recorded nodes backwards, applying each op's vjp.

The vjps are ember ops, so with ``create_graph=True`` the backward pass records history of
its own and can be differentiated again.

The walk: an iterative depth-first topological sort from the outputs (no recursion, so RNN
graphs thousands of ops deep are fine), pruned to the nodes that lead to the requested
``inputs`` when there are some; then one pass in that order, each node's incoming gradients
summed before its vjp runs. Gradients are keyed by node, and by ``id`` for leaves.

>>> import ember
>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> (gx,) = ember.autograd.grad((x * x).sum(), x)
>>> gx
tensor([2., 4.])
"""

from __future__ import annotations

import sys
import threading

from .. import _config
from .._errors import AutogradError, EmberError
from .._node import Node
from .._tensor import POST_ACCUMULATE_HOOKS, Tensor
from ..backend import full
from ..backend.arrays import disjoint, own_copy
from ..backend.cuda import device_context
from ..dtypes import is_float_np
from ..ops import _arith_numba as _arith
from ..ops.base import apply
from ..ops.elementwise import ADD
from ..ops.indexing import GradPieces

_getrefcount = sys.getrefcount


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


class GradSlots(list):
    """The gradient of a node with several outputs (a user ``Function``): one entry per output,
    ``None`` where that output got no gradient. Each output tensor has its own small node that
    puts its gradient in its slot; the engine sums slots entry by entry."""

    __slots__ = ()

    def merged(self, other: GradSlots) -> GradSlots:
        return GradSlots(
            b if a is None else a if b is None else apply(ADD, a, b) for a, b in zip(self, other)
        )


def _add(prev, g):
    if type(prev) is GradSlots:
        return prev.merged(g)
    if type(prev) is GradPieces:
        if type(g) is GradPieces:
            return prev.merged(g)
        prev = prev.gradient()
    elif type(g) is GradPieces:
        g = g.gradient()
    return apply(ADD, prev, g)


def _whole(g):
    """A gradient as a tensor (``GradPieces`` summed)."""
    return g.gradient() if type(g) is GradPieces else g


def _toposort(roots) -> list:
    """Nodes reachable from ``roots``, each before every node it feeds (iterative DFS)."""
    order = []
    seen = set()
    stack = [(n, False) for n in roots]
    push, pop, mark, emit = stack.append, stack.pop, seen.add, order.append
    while stack:
        node, done = pop()
        if done:
            emit(node)
            continue
        if node in seen:
            continue
        mark(node)
        push((node, True))
        for n in node.edges:
            if n is not None and n not in seen and isinstance(n, Node):
                push((n, False))
    order.reverse()
    return order


def _prune(order: list, targets: set) -> set:
    """Nodes on a path to a target (targets hold nodes, and ``id``s of leaf Tensors)."""
    useful = set()
    for node in reversed(order):  # inputs before consumers
        for n in node.edges:
            if n is None:
                continue
            key = n if isinstance(n, Node) else id(n)
            if key in targets or key in useful:
                useful.add(node)
                break
    return useful


def _initial_grads(outputs, grad_outputs) -> list:
    if len(grad_outputs) > len(outputs):
        raise AutogradError(
            f"backward: got {len(grad_outputs)} gradients for {len(outputs)} outputs"
        )
    grads = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise AutogradError(f"backward: output {i} is a {type(out).__name__}, not a Tensor")
        if not out._requires_grad:
            raise AutogradError(
                f"element {i} of tensors does not require grad and does not have a grad_fn\n"
                f"element {i} (shape {tuple(out.shape)}): nothing it was computed from requires "
                "grad, or it was computed under no_grad()"
            )
        g = grad_outputs[i] if i < len(grad_outputs) else None
        if g is None:
            if out._data.size != 1:
                raise AutogradError(
                    "grad can be implicitly created only for scalar outputs\noutput "
                    f"{i} has shape {tuple(out.shape)}; pass gradient= (a tensor of that shape)"
                )
            g = Tensor._make(full(out._data.shape, 1, out._data.dtype, out.device))
        else:
            if not isinstance(g, Tensor):
                from ..functions.creation import tensor as _tensor

                g = _tensor(g, dtype=out.dtype, device=out.device)
            if tuple(g.shape) != tuple(out.shape):
                raise AutogradError(
                    f"backward: mismatch in shape: gradient {i} has shape {tuple(g.shape)} but "
                    f"output {i} has shape {tuple(out.shape)}"
                )
            if g._data.dtype != out._data.dtype:  # PyTorch casts to the output's dtype
                from ..ops.elementwise import cast

                g = cast(g, out.dtype)
        grads.append(g)
    return grads


def run_backward(
    outputs, grad_outputs, inputs, retain_graph: bool, create_graph: bool, on_final=None
):
    """``_run_backward`` with autocast off: backward runs in the forward's dtypes."""
    policy = _config.state.autocast
    if policy is None:
        return _run_backward(outputs, grad_outputs, inputs, retain_graph, create_graph, on_final)
    _config.state.autocast = None
    try:
        return _run_backward(outputs, grad_outputs, inputs, retain_graph, create_graph, on_final)
    finally:
        _config.state.autocast = policy


def _final_points(order: list) -> dict:
    """For leaves with post-accumulate-grad hooks: the last node (in ``order``) that sends
    them a gradient, mapped to those leaves. Once that node has run, their gradient is final."""
    last = {}
    for node in order:
        for n in node.edges:
            if n is not None and not isinstance(n, Node) and getattr(n, "_post_acc_hooks", None):
                last[id(n)] = (node, n)
    finals: dict = {}
    for node, leaf in last.values():
        finals.setdefault(node, []).append(leaf)
    return finals


def _run_backward(
    outputs, grad_outputs, inputs, retain_graph: bool, create_graph: bool, on_final=None
):
    """The engine: ``(leaves, leaf_grads, captured)``.

    ``leaf_grads`` maps ``id(leaf)`` to the leaf's gradient (``leaves`` maps it to the leaf);
    ``captured`` maps each non-leaf input's node to its gradient. With ``inputs`` the walk is
    pruned to nodes that lead to them; without, every leaf that requires grad is reached.
    ``on_final(leaf, grad)``, when given, takes over the gradients of leaves that have
    post-accumulate-grad hooks as soon as they are final (those leave ``leaf_grads``).
    """
    grads0 = _initial_grads(outputs, grad_outputs)
    node_grads: dict = {}
    leaf_grads: dict = {}
    leaves: dict = {}
    roots = []
    for out, g in zip(outputs, grads0):
        n = out._node
        if n is None:
            k = id(out)
            prev = leaf_grads.get(k)
            leaf_grads[k] = g if prev is None else apply(ADD, prev, g)
            leaves[k] = out
        else:
            prev = node_grads.get(n)
            node_grads[n] = g if prev is None else apply(ADD, prev, g)
            roots.append(n)
    order = _toposort(roots)
    targets = useful = None
    captured: dict = {}
    if inputs is not None:
        targets = {t._node if t._node is not None else id(t) for t in inputs}
        useful = _prune(order, targets)
    anomaly = _config.state.anomaly
    pop = node_grads.pop
    finals = _final_points(order) if on_final is not None else None
    ready = None

    def flush(ready):
        for leaf in ready:
            k = id(leaf)
            g = leaf_grads.pop(k, None)
            if g is not None:
                del leaves[k]
                on_final(leaf, _whole(g))

    with _config.set_grad_enabled(create_graph):
        for node in order:
            if finals is not None:  # the leaves the previous node was the last to feed
                if ready:
                    flush(ready)
                ready = finals.get(node)
            g = pop(node, None)
            if g is None or (targets is not None and node not in useful and node not in targets):
                continue
            if type(g) is GradPieces:
                g = g.gradient()
            if node.hooks:
                for hook in node.hooks:
                    r = hook(g)
                    if r is not None:
                        g = r
            if node.retained is not None:
                t = node.retained()
                if t is not None:
                    _accumulate_into_grad(t, g, create_graph, steal=False)
            if targets is not None:
                if node in targets:
                    captured[node] = g
                if node not in useful:
                    continue
            op = node.op
            if node.in_versions is not None or op.saves_output or node.freed:
                node.check_saved()
            inputs_ = node.inputs
            if anomaly:  # checked here, so a NaN names this node rather than an op in its vjp
                in_grads = _anomaly_vjp(node, g)
            else:
                in_grads = op.vjp(g, node.output() if op.saves_output else None, *inputs_)
            for n, ig in zip(node.edges, in_grads):
                if ig is None or n is None:
                    continue
                if not isinstance(n, Node):  # a leaf that requires grad
                    k = id(n)
                    prev = leaf_grads.get(k)
                    if prev is None:
                        leaf_grads[k] = ig
                        leaves[k] = n
                    else:
                        leaf_grads[k] = _add(prev, ig)
                else:
                    prev = node_grads.get(n)
                    node_grads[n] = ig if prev is None else _add(prev, ig)
            if not retain_graph:
                node.free()
        if ready:
            flush(ready)
        for k, g in leaf_grads.items():
            leaf_grads[k] = _whole(g)
    return leaves, leaf_grads, captured


def _anomaly_vjp(node, g) -> tuple:
    state = _config.state
    state.anomaly = False
    try:
        op = node.op
        in_grads = op.vjp(g, node.output() if op.saves_output else None, *node.inputs)
    finally:
        state.anomaly = True
    _anomaly_backward(node, in_grads)
    return in_grads


def _anomaly_backward(node, in_grads) -> None:
    if not _config.state.anomaly_check_nan:
        return
    for i, ig in enumerate(in_grads):
        if ig is None or type(ig) in (GradSlots, GradPieces):
            continue
        arr = ig._data
        xp = ig.device.xp
        if is_float_np(arr.dtype) and not bool(xp.isfinite(arr).all()):
            bad = "NaN" if bool(xp.isnan(arr).any()) else "Inf"
            raise AutogradError(
                f"anomaly: function '{node.name()}' returned {bad} values in its gradient for "
                f"input {i} (shape {tuple(arr.shape)}); the forward op was created at "
                f"{node.trace or '<unknown: enable detect_anomaly before the forward pass>'}"
            )


def _run_leaf_hooks(t: Tensor, g: Tensor) -> Tensor:
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

    ``inputs`` restricts the walk and the accumulation to those tensors (leaves or not).

    >>> import ember
    >>> x = ember.ones(3, requires_grad=True)
    >>> ember.autograd.backward((x * 2).sum()); x.grad
    tensor([2., 2., 2.])
    """
    outputs = _as_tuple(tensors)
    grad_outputs = _as_tuple(grad_tensors) if grad_tensors is not None else ()
    if retain_graph is None:
        retain_graph = create_graph
    only = None
    if inputs is not None:
        only = _as_tuple(inputs)
        if not only:
            raise AutogradError("backward: 'inputs' argument should not be empty")
    on_final = None
    if only is None and POST_ACCUMULATE_HOOKS[0]:

        def on_final(t, g):
            if t._hooks:
                g = _run_leaf_hooks(t, g)
            _accumulate_into_grad(t, g, create_graph, steal=False)
            _run_post_hooks(t)

    outer = getattr(_callbacks, "queue", None)
    _callbacks.queue = []
    try:
        leaves, leaf_grads, captured = run_backward(
            outputs, grad_outputs, only, retain_graph, create_graph, on_final
        )
        _accumulate_leaves(only, leaves, leaf_grads, captured, create_graph)
        queue = _callbacks.queue
        while queue:
            queue.pop(0)()
    finally:
        _callbacks.queue = outer


_callbacks = threading.local()  # .queue: what queue_callback added during this backward()


def queue_callback(callback) -> None:
    """Run ``callback()`` when the running ``backward()`` has accumulated every gradient
    (PyTorch's ``Variable._execution_engine.queue_callback``); only from inside a backward
    (a hook).

    >>> import ember
    >>> from ember.autograd.engine import queue_callback
    >>> w = ember.ones(1, requires_grad=True)
    >>> _ = w.register_hook(lambda g: queue_callback(lambda: print("done", w.grad)))
    >>> (w * 2).sum().backward()
    done tensor([2.])
    """
    queue = getattr(_callbacks, "queue", None)
    if queue is None:
        raise AutogradError("queue_callback: only a hook running inside backward() can queue")
    queue.append(callback)


def _run_post_hooks(t: Tensor) -> None:
    for hook in list(getattr(t, "_post_acc_hooks", None) or ()):
        hook(t)


def _accumulate_leaves(only, leaves, leaf_grads, captured, create_graph: bool) -> None:
    with _config.set_grad_enabled(create_graph):
        if only is None:
            post = POST_ACCUMULATE_HOOKS[0]
            shared = _shared_bases(leaf_grads.values())
            for key in list(leaf_grads):
                t = leaves[key]
                g = leaf_grads.pop(key)
                if t._hooks:
                    g = _run_leaf_hooks(t, g)
                _accumulate_into_grad(t, g, create_graph, steal=True, shared=shared)
                if post:
                    _run_post_hooks(t)
        else:
            for t in only:
                n = t._node
                g = leaf_grads.pop(id(t), None) if n is None else captured.get(n)
                if g is None:
                    continue
                if n is None and t._hooks:
                    g = _run_leaf_hooks(t, g)
                _accumulate_into_grad(t, g, create_graph, steal=n is None)


def _shared_bases(grads) -> dict:
    """``{id(base): n}`` for the arrays that ``n >= 2`` of these pending leaf gradients are
    disjoint views of: the pieces of one packed gradient (a normalization's weight and bias
    gradients, cut from the one array its kernel writes). Each piece may be taken over as its
    leaf's ``.grad`` when those views are all that hold the array (``_accumulate_into_grad``):
    in-place updates of one piece then cannot reach another."""
    groups: dict = {}
    for g in grads:
        base = g._data.base
        if base is not None:
            groups.setdefault(id(base), []).append(g._data)
    return {k: len(v) for k, v in groups.items() if len(v) > 1 and disjoint(v)}


def _only_view(source: Tensor, base) -> bool:
    """Whether ``source``'s array is a view of ``base`` that nothing but ``source`` holds."""
    data = source._data
    return data.base is base and _getrefcount(data) <= 3  # source's, this local's, the argument's


def _accumulate_into_grad(
    t: Tensor, g: Tensor, create_graph: bool, steal: bool, shared: dict | None = None
) -> None:
    """``t.grad += g`` with PyTorch's rules: the first gradient gets its own buffer (taken over
    from ``g`` when nothing else can see ``g``'s array, else copied), later ones are added in
    place; with ``create_graph`` the sum is out of place and differentiable. The copy and the
    sum run on ``t``'s GPU, whichever is current (CuPy copies onto the current one).
    ``shared`` (``_shared_bases``) counts the pending leaf gradients that are disjoint views of
    one array: each holds a reference to it."""
    old = t._grad
    if g._data.shape != t._data.shape or g._data.dtype != t._data.dtype:
        g = _fit(t, g)
    if old is None:
        if create_graph:
            from ..functions.conversion import clone

            t._grad = clone(g)
            return
        arr = g._data
        # Take g's array over when only this call sees it: g is referenced by the caller's local
        # and this frame's argument (+1 for getrefcount), its array by g and ``arr`` (+1), and
        # the array owns its memory. Any other holder (a user's tensor, a view, another leaf's
        # grad, a node's saved output) raises a count, and then we copy.
        base = arr.base  # a contiguous view of a temporary only it holds is as good as owned
        held = 3  # references to ``base``: arr's, this local's, getrefcount's argument
        if base is not None:
            pieces = shared.get(id(base), 1) if shared else 1
            held += pieces - 1  # ... and the other pieces' arrays (``_shared_bases``)
            source = g._base  # a view's tensor (F.linear's weight gradient: a transposed product)
            if source is not None and _getrefcount(source) <= 2 + pieces:
                if source._data is base or _only_view(source, base):
                    held += 1  # ... and that tensor's, when only the pieces hold it
        if (
            steal
            and _getrefcount(g) <= 3
            and _getrefcount(arr) <= 3
            and (base is None or (arr.flags.c_contiguous and _getrefcount(base) <= held))
            and not g._requires_grad
        ):
            t._grad = Tensor._make(arr)
        else:
            t._grad = Tensor._make(own_copy(arr))
        return
    if create_graph or old._requires_grad:
        t._grad = apply(ADD, old, g)
        return
    tracer = _config.graph_tracer(old, g)
    if tracer is not None:  # building a graph: ember.static records the update
        tracer.accumulate(old, g)
        return
    try:
        if _arith.binary("add", old._data, g._data, out=old._data) is None:  # large: threads
            with device_context(old._data):
                old._data += g._data
    except ValueError:  # a read-only or otherwise unwritable .grad set by the user
        t._grad = apply(ADD, old, g)
        return
    old._version[0] += 1


def _fit(t: Tensor, g: Tensor) -> Tensor:
    """A gradient made to match its leaf: cast to its dtype; a wrong shape is an error."""
    if g._data.shape != t._data.shape:
        raise AutogradError(
            f"backward: the gradient computed for a leaf of shape {tuple(t.shape)} has shape "
            f"{tuple(g.shape)} (an op's vjp or a hook returned the wrong shape)"
        )
    from ..ops.elementwise import cast

    return cast(g, t.dtype)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not stored in ``.grad``).

    >>> import ember
    >>> x = ember.tensor(3.0, requires_grad=True)
    >>> (g,) = ember.autograd.grad(x ** 3, x, create_graph=True)
    >>> ember.autograd.grad(g, x)[0]
    tensor(18.)
    """
    if is_grads_batched:
        raise EmberError("grad: is_grads_batched=True is not supported; loop over the batch")
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise AutogradError("grad requires at least one input")
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            raise AutogradError(f"grad: input {i} is a {type(t).__name__}, not a Tensor")
        if not t._requires_grad:
            raise AutogradError(
                "One of the differentiated Tensors does not require grad\n"
                f"grad: one of the differentiated tensors does not require grad: input {i} "
                f"(shape {tuple(t.shape)})"
            )
    gouts = _as_tuple(grad_outputs) if grad_outputs is not None else ()
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    leaves, leaf_grads, captured = run_backward(outs, gouts, ins, retain_graph, create_graph)
    result = []
    for i, t in enumerate(ins):
        g = captured.get(t._node) if t._node is not None else leaf_grads.get(id(t))
        if g is not None and t._node is None and t._hooks:
            with _config.set_grad_enabled(create_graph):
                g = _run_leaf_hooks(t, g)
        if g is None:
            if materialize_grads:
                g = Tensor._make(full(t._data.shape, 0, t._data.dtype, t.device))
            elif not allow_unused:
                raise AutogradError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.\n"
                    f"grad: input {i} (shape {tuple(t.shape)}) appears to not have been used in "
                    "the graph of the outputs; pass allow_unused=True to get None for it"
                )
        result.append(g)
    return tuple(result)


__all__ = ["backward", "grad", "queue_callback", "run_backward"]
