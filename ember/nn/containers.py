"""Container modules: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict`` (PyTorch's ``torch.nn`` containers).

>>> import ember
>>> from ember import nn
>>> class Scale(nn.Module):
...     def __init__(self, s):
...         super().__init__()
...         self.s = s
...     def forward(self, x):
...         return x * self.s
...     def extra_repr(self):
...         return f"s={self.s}"
>>> net = nn.Sequential(Scale(2), Scale(3))
>>> net(ember.ones(1))
tensor([6.])
>>> net
Sequential(
  (0): Scale(s=2)
  (1): Scale(s=3)
)
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections import abc as _abc
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from .._tensor import Tensor
from .module import Module, _addindent
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _abs_index(idx, n: int) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


def _renumber(module: Module) -> None:
    """Renumber ``_modules`` as 0, 1, 2... after a deletion (keeping the order)."""
    values = list(module._modules.values())
    module._modules.clear()
    for i, m in enumerate(values):
        module._modules[str(i)] = m


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    Built from modules (named ``"0"``, ``"1"``...) or from one ``OrderedDict`` of named
    modules. Indexing takes negative indices; a slice gives a new Sequential.

    >>> import ember
    >>> from collections import OrderedDict
    >>> a, b = ember.nn.Module(), ember.nn.Module()
    >>> s = ember.nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    >>> s[-1] is b, len(s), [n for n, _ in s.named_children()]
    (True, 2, ['first', 'second'])
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key_at(self, idx) -> str:
        keys = list(self._modules)
        return keys[_abs_index(idx, len(keys))]

    def __getitem__(self, idx) -> Module | Sequential:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                delattr(self, key)
        else:
            delattr(self, self._key_at(idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        for i, module in enumerate(list(self) * other):
            combined.add_module(str(i), module)
        return combined

    __rmul__ = __mul__

    def __dir__(self) -> list:
        return [k for k in super().__dir__() if not k.isdigit()]

    def pop(self, key) -> Module:
        """Remove and return the module at index ``key``."""
        v = self[key]
        del self[key]
        return v

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered (so their parameters are found) but not called.

    >>> import ember
    >>> layers = ember.nn.ModuleList([ember.nn.Module() for _ in range(3)])
    >>> _ = layers.append(ember.nn.Module()); len(layers), len(layers[1:])
    (4, 3)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx) -> Module | ModuleList:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self))))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = [[0, 0, reprs[0]]]  # consecutive equal reprs print once: "(0-2): 3 x ..."
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1][2]:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            line = (
                f"({start}): {r}" if start == end else (f"({start}-{end}): {end - start + 1} x {r}")
            )
            lines.append(_addindent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list:
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key) -> Module:
        """Remove and return the module at index ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of ``modules``."""
        if not isinstance(modules, _abc.Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys.

    >>> import ember
    >>> d = ember.nn.ModuleDict({"enc": ember.nn.Module(), "dec": ember.nn.Module()})
    >>> list(d), "enc" in d, len(d)
    (['enc', 'dec'], True, 2)
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys."""
        return self._modules.keys()

    def items(self):
        """``(key, module)`` pairs."""
        return self._modules.items()

    def values(self):
        """The modules."""
        return self._modules.values()

    def update(self, modules) -> None:
        """Add the modules of a mapping or of an iterable of ``(key, module)`` pairs."""
        if not isinstance(modules, _abc.Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(modules).__name__
            )
        if isinstance(modules, (OrderedDict, ModuleDict, _abc.Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            _update_from_pairs(self, modules, "ModuleDict")


def _update_from_pairs(target, pairs, name: str) -> None:
    """``target[k] = v`` for each ``(k, v)`` of ``pairs``, with PyTorch's errors for the others."""
    for j, p in enumerate(pairs):
        if not isinstance(p, _abc.Iterable):
            raise TypeError(
                f"{name} update sequence element #{j} should be Iterable; is" + type(p).__name__
            )
        if len(p) != 2:
            raise ValueError(
                f"{name} update sequence element #{j} has length {len(p)}; 2 is required"
            )
        target[p[0]] = p[1]


def _param_line(k, p) -> str:
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        device = f" ({p.device})" if p.device.type == "cuda" else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({k}): {kind} containing: [{{}} of size {size}{device}]"
    return f"  ({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters (plain tensors are wrapped in :class:`Parameter`).

    >>> import ember
    >>> pl = ember.nn.ParameterList([ember.ones(2), ember.zeros(3)])
    >>> [tuple(p.shape) for p in pl], type(pl[0]).__name__
    ([(2,), (3,)], 'Parameter')
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = _abs_index(idx, len(self))
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value."""
        if not isinstance(values, _abc.Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            _param_line(k, p).format(p.dtype) if isinstance(p, Tensor) else _param_line(k, p)
            for k, p in enumerate(self)
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors are wrapped in :class:`Parameter`).

    >>> import ember
    >>> pd = ember.nn.ParameterDict({"a": ember.ones(1)})
    >>> pd["b"] = ember.nn.Parameter(ember.zeros(2)); list(pd), "a" in pd
    (['a', 'b'], True)
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value under ``key``, first setting it to ``default`` if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove and return the value under ``key``."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple:
        """Remove and return the last ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        """The value under ``key``, or ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with ``keys`` all set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys."""
        return self._keys.keys()

    def items(self):
        """``(key, value)`` pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values."""
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add entries from a mapping (plain dicts in sorted key order, as PyTorch does) or
        from an iterable of ``(key, value)`` pairs."""
        if not isinstance(parameters, _abc.Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, _abc.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            _update_from_pairs(self, parameters, "ParameterDict")

    def extra_repr(self) -> str:
        from .._legacy import legacy_name

        return "\n".join(
            _param_line(k, p).format(legacy_name(p)) if isinstance(p, Tensor) else _param_line(k, p)
            for k, p in self.items()
        )

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
