"""What ``ember.compile`` asks a Module (the stateful-object protocol of ``ember.static``).

A compiled function finds the modules and optimizers it can reach (its arguments, closure and
globals) by these three methods, not by class, so ``ember.static`` imports neither ``nn`` nor
``optim``:

- ``_compile_tensors()``: ``[(name, tensor)]``, the state a step reads and writes (parameters
  and buffers here); leaves that require grad have their ``.grad`` tracked;
- ``_compile_signature()``: a hashable summary of what a trace fixes (here each submodule's
  training flag); a change retraces;
- ``_compile_describe(old, new)``: the retrace line's reason for a changed signature.

Optional: ``_compile_guard()``, what must stay the same objects (an optimizer's state tensors; a
change retraces), and ``_compile_key()``, the signature and the guard from one walk (asked on
every call where an object has it).

>>> import ember
>>> net = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Dropout())
>>> [n for n, _ in net._compile_tensors()]
['0.weight', '0.bias']
>>> net._compile_describe(net._compile_signature(), net.eval()._compile_signature())
"module 'Sequential' switched train -> eval"
"""

from __future__ import annotations


class ModuleCompileState:
    """The stateful-object protocol ``ember.compile`` uses (see the module docstring)."""

    def _compile_tensors(self) -> list:
        out = list(self.named_parameters())
        out += [(n, b) for n, b in self.named_buffers() if b is not None]
        return out

    def _compile_signature(self) -> tuple:
        """Each module's training flag, in ``modules()`` order (walked without generators: this
        runs on every compiled call)."""
        flags = []
        seen = set()
        stack = [self]
        while stack:
            m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            flags.append(m.training)
            children = [c for c in m._modules.values() if c is not None]
            if children:
                children.reverse()
                stack += children
        return tuple(flags)

    def _compile_describe(self, old: tuple, new: tuple) -> str:
        mode = {True: "train", False: "eval"}
        for (name, m), a, b in zip(self.named_modules(), old, new):
            if a != b:
                return f"module {name or type(m).__name__!r} switched {mode[a]} -> {mode[b]}"
        return "the module's submodules changed"
