"""Module hooks: forward pre-hooks and hooks (and the call that runs them), the registration of
backward hooks (run by ``backward_hooks``), state-dict and load-state-dict hooks, and
``RemovableHandle``, which takes one away."""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from .backward_hooks import BackwardHook

_MIXED = (
    "Cannot use both regular backward hooks and full backward hooks on a single Module. Please "
    "use only one of them."
)
_NON_FULL = (
    "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_input. Please use register_full_backward_hook to get the documented behavior."
)


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` takes the hook away.

    >>> import ember
    >>> m = ember.nn.Module()
    >>> h = m.register_forward_pre_hook(lambda mod, args: None)
    >>> len(m._forward_pre_hooks); h.remove(); len(m._forward_pre_hooks)
    1
    0
    """

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        extra = (
            []
            if extra_dict is None
            else (extra_dict if isinstance(extra_dict, list) else [extra_dict])
        )
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class ModuleHooks:
    """The hook half of :class:`Module`: registering hooks and calling ``forward`` with them."""

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        result = None
        called = set()
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if not (isinstance(out, tuple) and len(out) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of "
                                f"(new_args, new_kwargs), but got {out}."
                            )
                        args, kwargs = out
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            bw_hook = None
            if self._backward_hooks or self._backward_pre_hooks:
                hooks = list(self._backward_hooks.values())
                bw_hook = BackwardHook(self, hooks, list(self._backward_pre_hooks.values()))
                inputs = args
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
            if bw_hook is not None:
                if self._is_full_backward_hook is False:
                    _warn_if_several_nodes(inputs, args, result)
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            out = hook(self, args, kwargs, result)
                        else:
                            out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as e:
                        import warnings

                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before ``forward``; a returned value replaces the args.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and may return a
        ``(new_args, new_kwargs)`` pair; ``prepend=True`` runs it before the hooks already
        registered.

        >>> import ember
        >>> class Id(ember.nn.Module):
        ...     def forward(self, x): return x
        >>> m = Id(); h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 10,))
        >>> m(ember.ones(1))
        tensor([10.])
        """
        handle = RemovableHandle(
            self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs
        )
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward``; a returned value replaces it.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs, output)``;
        ``always_call=True`` runs it even when ``forward`` raises.

        >>> import ember
        >>> class Id(ember.nn.Module):
        ...     def forward(self, x): return x
        >>> m = Id(); h = m.register_forward_hook(lambda mod, args, out: out + 1)
        >>> m(ember.ones(1))
        tensor([2.])
        >>> h.remove(); m(ember.ones(1))
        tensor([1.])
        """
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False):
        """Call ``hook(module, grad_input, grad_output)`` once per backward through this
        module: the gradients w.r.t. its positional arguments (None for non-tensors) and its
        results; a returned tuple replaces ``grad_input``.

        >>> import ember
        >>> m = ember.nn.Linear(2, 2)
        >>> h = m.register_full_backward_hook(lambda mod, gin, gout: (ember.ones(1, 2),))
        >>> x = ember.ones(1, 2, requires_grad=True)
        >>> m(x).sum().backward(); x.grad
        tensor([[1., 1.]])
        """
        return self._add_backward_hook(self._backward_hooks, hook, prepend, full=True)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False):
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. this module's results
        are ready, before they flow into it; a returned tuple replaces ``grad_output``.

        >>> import ember
        >>> m = ember.nn.Linear(2, 2)
        >>> h = m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 2,))
        >>> x = ember.ones(1, 2, requires_grad=True)
        >>> m(x).sum().backward(); ember.equal(x.grad, 2 * m.weight.sum(0, keepdim=True))
        True
        """
        return self._add_backward_hook(self._backward_pre_hooks, hook, prepend, full=None)

    def register_backward_hook(self, hook: Callable):
        """Deprecated (as in PyTorch): use ``register_full_backward_hook``. ember runs it as a
        full backward hook; like PyTorch it warns (FutureWarning) at each call of a module
        whose forward is more than one autograd node, and refuses to mix with full hooks.

        >>> import ember
        >>> h = ember.nn.ReLU().register_backward_hook(lambda mod, gin, gout: None)
        """
        return self._add_backward_hook(self._backward_hooks, hook, False, full=False)

    def _add_backward_hook(self, hooks: dict, hook, prepend: bool, full) -> RemovableHandle:
        if full is not None:
            if self._is_full_backward_hook is (not full):
                raise RuntimeError(_MIXED)
            self.__dict__["_is_full_backward_hook"] = full
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module's ``state_dict``."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict``;
        it may change the dict in place and must return None."""
        hook._from_public_api = True
        return self._register_state_dict_hook(hook)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        # The private form (used by layers): the hook may return a replacement dict.
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its part of a state dict."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict``; it may edit the
        key lists in place."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle


def _warn_if_several_nodes(inputs: tuple, args: tuple, result) -> None:
    """PyTorch's warning for a non-full backward hook: unless the result is one tensor whose
    node's next functions are exactly the nodes of the tensor inputs (a leaf input counts as
    its AccumulateGrad, so it warns). ``args`` are the inputs as passed through the hook's
    identity node, which is looked through."""
    from ..._node import _edge

    node = result._node if isinstance(result, Tensor) else None
    if node is not None:
        through = {
            id(a._node): _edge(t)
            for t, a in zip(inputs, args)
            if isinstance(a, Tensor) and a is not t and a._node is not None
        }
        nexts = {id(through.get(id(e), e)) for e in node.edges}
        ins = {id(t._node) for t in inputs if isinstance(t, Tensor) and t._node is not None}
        if nexts == ins:
            return
    warnings.warn(_NON_FULL, FutureWarning, stacklevel=4)
