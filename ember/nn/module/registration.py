"""``Module``: the class core: registering parameters, buffers and submodules on attribute
assignment, looking them up, iterating them (``named_parameters``, ``named_modules``...),
train/eval mode, pickling and the repr. Hooks, state dicts and conversion are mixed in from
``hooks``, ``state_dict`` and ``conversion``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..._errors import EmberError
from ..._tensor import Tensor
from ..parameter import Buffer, Parameter
from .compile_state import ModuleCompileState
from .conversion import ModuleConversion
from .error_path import _name_module_path
from .hooks import ModuleHooks
from .registry import _REGISTRIES, _Registry
from .state_dict import ModuleStateDict


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        from ..._legacy import legacy_name

        return legacy_name(obj)
    t = type(obj)
    module = t.__module__
    return t.__qualname__ if module in (None, "builtins") else f"{module}.{t.__qualname__}"


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


def _forward_unimplemented(self, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module(ModuleHooks, ModuleStateDict, ModuleConversion, ModuleCompileState):
    """Base class for all neural-network modules; subclass it and define ``forward``.

    Assigning a :class:`Parameter`, a Module or a :class:`Buffer` to an attribute registers
    it; plain tensors are registered with ``register_buffer``.

    >>> import ember
    >>> from ember import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = nn.Parameter(ember.ones(2, 2))
    ...         self.register_buffer("scale", ember.tensor(2.0))
    ...     def forward(self, x):
    ...         return ember.mm(x, self.w) * self.scale
    >>> net = Net()
    >>> net(ember.ones(1, 2))
    tensor([[4., 4.]], grad_fn=<MulBackward0>)
    >>> [name for name, _ in net.named_parameters()], list(net.state_dict())
    (['w'], ['w', 'scale'])
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry(self)
        d["_buffers"] = _Registry(self)
        d["_non_persistent_buffers_set"] = set()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = _Registry(self)

    forward: Callable[..., Any] = _forward_unimplemented

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if (
                self._forward_pre_hooks
                or self._forward_hooks
                or self._backward_hooks
                or self._backward_pre_hooks
            ):
                return self._call_with_hooks(args, kwargs)
            return self.forward(*args, **kwargs)
        except EmberError as error:
            _name_module_path(error, self)
            raise

    # -- registration ----------------------------------------------------------------------
    def _check_name(self, name, kind: str, registry: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            if kind == "module":
                raise KeyError(f'module name can\'t contain ".", got: {name}')
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if name not in self.__dict__[registry] and hasattr(self, name):
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (e.g. running statistics).

        Persistent buffers are part of ``state_dict()``; ``None`` buffers are skipped by
        ``to()`` and ``state_dict()``.

        >>> import ember
        >>> m = ember.nn.Module()
        >>> m.register_buffer("running_mean", ember.zeros(3))
        >>> m.running_mean
        tensor([0., 0., 0.])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(ember Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or ``None``, a placeholder that ``state_dict`` skips).

        >>> import ember
        >>> m = ember.nn.Module()
        >>> m.register_parameter("bias", None); m.bias is None
        True
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", "_parameters")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(ember.nn.Parameter or None required)"
            )
        elif param._node is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute ``name``.

        >>> import ember
        >>> m = ember.nn.Module(); m.add_module("inner", ember.nn.Module())
        >>> m
        Module(
          (inner): Module()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        self._check_name(name, "module", "_modules")
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    # -- attribute access --------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # Only reached when the name is not in __dict__: registered values normally are.
        d = self.__dict__
        for registry in _REGISTRIES:
            if registry in d:
                values = d[registry]
                if name in values:
                    return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _remove_name(self, name: str, *registries: str) -> None:
        d = self.__dict__
        for registry in registries:
            values = d.get(registry)
            if values is not None and name in values:
                del values[name]
        self._non_persistent_buffers_set.discard(name)
        d.pop(name, None)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_name(name, "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_name(name, "_parameters", "_buffers")
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(ember.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(ember.nn.Buffer, ember.Tensor or None expected)"
                        )
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                elif name in _REGISTRIES and name in d and isinstance(value, dict):
                    old = d[name]  # a registry replaced wholesale (PyTorch code does this)
                    for key in old:
                        d.pop(key, None)
                    d[name] = _Registry(self, value)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del self._parameters[name]
        elif name in d.get("_buffers", ()):
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in d.get("_modules", ()):
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self) -> dict:
        d = self.__dict__
        mirrored = set()
        for registry in _REGISTRIES:
            mirrored.update(d.get(registry, ()))
        return {
            k: (dict(v) if k in _REGISTRIES else v)
            for k, v in d.items()
            if k not in mirrored or k in _REGISTRIES
        }

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        d = self.__dict__
        for registry in _REGISTRIES:
            d[registry] = _Registry(self, d.get(registry, {}))
        defaults = {
            "_non_persistent_buffers_set": set,
            "_forward_pre_hooks": OrderedDict,
            "_forward_pre_hooks_with_kwargs": OrderedDict,
            "_forward_hooks": OrderedDict,
            "_forward_hooks_with_kwargs": OrderedDict,
            "_forward_hooks_always_called": OrderedDict,
            "_backward_hooks": OrderedDict,
            "_backward_pre_hooks": OrderedDict,
            "_is_full_backward_hook": lambda: None,
            "_state_dict_hooks": OrderedDict,
            "_state_dict_pre_hooks": OrderedDict,
            "_load_state_dict_pre_hooks": OrderedDict,
            "_load_state_dict_post_hooks": OrderedDict,
        }
        for key, make in defaults.items():
            if key not in d:
                d[key] = make()

    def __copy__(self) -> Module:
        new = type(self).__new__(type(self))
        new.__setstate__(self.__getstate__())
        return new

    def __dir__(self) -> list:
        keys = set(dir(type(self))) | set(self.__dict__)
        for registry in _REGISTRIES:
            keys.update(self.__dict__.get(registry, ()))
        return sorted(k for k in keys if not k[0].isdigit())

    # -- lookup by dotted name -----------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``""`` is this module).

        >>> import ember
        >>> m = ember.nn.Module(); m.a = ember.nn.Module(); m.a.b = ember.nn.Module()
        >>> m.get_submodule("a.b") is m.a.b
        True
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (e.g. ``"fc.weight"``)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- iteration -----------------------------------------------------------------------------
    def _named_members(
        self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and, with ``recurse``, its submodules), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs in registration order; shared parameters once.

        >>> import ember
        >>> m = ember.nn.Module(); m.a = ember.nn.Module()
        >>> m.a.w = ember.nn.Parameter(ember.ones(1)); m.w = m.a.w
        >>> [n for n, _ in m.named_parameters()], [n for n, _ in m.named_parameters("net")]
        (['w'], ['net.w'])
        """
        return self._named_members(
            lambda m: m._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and, with ``recurse``, its submodules)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs, persistent or not."""
        return self._named_members(
            lambda m: m._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator[Module]:
        """The immediate submodules."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, submodule)`` pairs of the immediate submodules, each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and all submodules, depth first, each once."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ):
        """``(dotted name, module)`` for this module (name ``prefix``) and all submodules.

        >>> import ember
        >>> m = ember.nn.Module(); m.a = ember.nn.Module(); m.a.b = ember.nn.Module()
        >>> [n for n, _ in m.named_modules()]
        ['', 'a', 'a.b']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # -- modes and gradients -------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=False`` is evaluation mode) here and in all submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: same as ``train(False)``.

        >>> import ember
        >>> m = ember.nn.Module(); m.sub = ember.nn.Module()
        >>> m.eval().sub.training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter (freeze with ``False``)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to ``None`` (default) or to zeros.

        >>> import ember
        >>> m = ember.nn.Module(); m.w = ember.nn.Parameter(ember.ones(2))
        >>> (m.w * 3).sum().backward(); m.w.grad
        tensor([3., 3.])
        >>> m.zero_grad(); m.w.grad is None
        True
        """
        for p in self.parameters():
            g = p._grad
            if g is not None:
                if set_to_none:
                    p._grad = None
                else:
                    if g._node is not None:
                        g.detach_()
                    else:
                        g._requires_grad = False
                    g.zero_()

    # -- printing ------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The module's own settings for its repr; override in subclasses (one or more lines)."""
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
