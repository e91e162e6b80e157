"""The two unpicklers of ``ember.load``: weights-only (the default) and trusted.

``WeightsOnlyUnpickler`` is a port of PyTorch 2.13's ``torch/_weights_only_unpickler.py``: it
reads the opcodes of protocol 2 itself, resolves a ``GLOBAL`` only through the file's
``Policy.allowed`` table (PyTorch's defaults plus ``ember.serialization.add_safe_globals``),
calls (``REDUCE``), instantiates (``NEWOBJ``) and sets the state of (``BUILD``) only allowed
globals, appends only to lists and sets items only in dicts. Anything else is ``Refused`` with
PyTorch's message before it runs. ``TrustedUnpickler`` (``weights_only=False``) is Python's
own unpickler, which may run anything the file names. Both share the file's persistent ids
(tensors kept outside the pickle) and its ``BUILD`` rule (``Policy.build``: how PyTorch's
module and optimizer state becomes ember's).

>>> import io, pickle
>>> from ember.serialization.unpickler import Policy, WeightsOnlyUnpickler
>>> WeightsOnlyUnpickler(io.BytesIO(pickle.dumps({"a": [1, 2.5]}, protocol=2)), Policy()).load()
{'a': [1, 2.5]}
"""

from __future__ import annotations

import pickle
import re
import struct
import sys
import warnings
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable
from struct import unpack
from sys import maxsize
from typing import Any, BinaryIO

from .._errors import DeviceError
from .errors import CheckpointError, WeightsOnlyError
from .safe_globals import user_allowed

BLOCKED_MODULES = ("sys", "os", "posix", "nt")
UNSAFE_MESSAGE = (
    "The `weights_only` argument of `ember.load` defaults to `True`, as in `torch.load` since "
    "PyTorch 2.6. Re-running `ember.load` with `weights_only` set to `False` will likely "
    "succeed, but it can result in arbitrary code execution. Do it only if you got the file "
    "from a trusted source."
)
DOCS_MESSAGE = (
    "\n\nCheck the documentation of ember.load to learn more about types accepted by default "
    "with weights_only (docs/serialization.md)."
)
# Python 2 names in protocol-2 pickles (the part of torch._utils.IMPORT_MAPPING they use)
_IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg"}


class Refused(Exception):
    """The pickle does something weights-only loading does not allow; nothing of it has run."""


class Invalid(Exception):
    """The pickle is damaged or misuses an allowed function (a tensor reading past its storage)."""


def check(cond: bool, what: str) -> None:
    """Raise ``Invalid(what)`` unless ``cond``."""
    if not cond:
        raise Invalid(what)


def _encode(text: Any, encoding: str = "utf-8") -> bytes:  # how protocol 2 pickles bytes
    check(isinstance(text, str) and encoding in ("latin1", "latin-1"), "_codecs.encode")
    return text.encode("latin1")


def _bytearray(data: Any = b"", encoding: str | None = None) -> bytearray:
    if encoding is not None:
        data = _encode(data, encoding)
    check(isinstance(data, bytes), "bytearray of something other than bytes")
    return bytearray(data)


def _container(kind: type) -> Callable[..., Any]:
    def make(*args: Any) -> Any:
        check(len(args) <= 1, f"{kind.__name__} with more than one argument")
        check(not args or isinstance(args[0], (list, tuple, dict, str)), kind.__name__)
        return kind(*args)

    make.__qualname__ = kind.__name__
    return make


def _complex(*args: Any) -> complex:
    check(all(type(a) in (int, float) for a in args) and len(args) <= 2, "complex")
    return complex(*args)


# PyTorch's default Python globals; calls that could allocate without bound are checked
PYTHON_GLOBALS: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": _container(Counter),
    "builtins.set": _container(set),
    "builtins.complex": _complex,
    "builtins.bytearray": _bytearray,
    "_codecs.encode": _encode,
}


class Policy:
    """What one file's pickle may name, and how its persistent ids and BUILDs resolve.

    The base policy allows no global and no persistent id; subclasses (ember's files, PyTorch's)
    fill in ``allowed`` (weights-only), ``resolve`` (trusted), ``persistent_load`` and ``build``.
    """

    def allowed(self, path: str) -> Any:
        """The object a weights-only load gives for ``path``, or None when not allowed."""
        found = PYTHON_GLOBALS.get(path)
        return found if found is not None else user_allowed().get(path)

    def resolve(self, module: str, name: str) -> Any:
        """The object a trusted load gives for ``module.name`` (may import)."""
        return import_global(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def build(self, inst: Any, state: Any) -> None:
        """Set the state of ``inst`` (pickle's ``BUILD``)."""
        default_build(inst, state)


def import_global(module: str, name: str) -> Any:
    """``module.name`` imported, as pickle's ``find_class`` does (``name`` may be dotted).

    >>> from ember.serialization.unpickler import import_global
    >>> import_global("collections", "OrderedDict.fromkeys").__name__
    'fromkeys'
    """
    __import__(module)
    obj = sys.modules[module]
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(f"Can't get attribute {name!r} on module {module!r}") from None
    return obj


def default_build(inst: Any, state: Any) -> None:
    """Pickle's ``BUILD``: ``__setstate__``, else update ``__dict__`` and set slots.

    >>> from ember.serialization.unpickler import default_build
    >>> class A: pass
    >>> a = A(); default_build(a, {"x": 1}); a.x
    1
    """
    setstate = getattr(type(inst), "__setstate__", None)
    if setstate is not None and setstate is not getattr(object, "__setstate__", None):
        inst.__setstate__(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state:
        inst.__dict__.update(state)
    if slotstate:
        for k, v in slotstate.items():
            setattr(inst, k, v)


def _read_global(readline: Callable[[], bytes]) -> tuple[str, str]:
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    return _IMPORT_MAPPING.get(module, module), name


def unsupported_global(full_path: str) -> str:
    """PyTorch's refusal of a global that is not allowed, naming ember's API.

    >>> from ember.serialization.unpickler import unsupported_global
    >>> unsupported_global("builtins.eval")[:48]
    'Unsupported global: GLOBAL eval was not an allow'
    """
    if full_path.startswith("builtins"):  # PyTorch shows builtins.eval as eval
        rest = full_path[len("builtins") :]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return (
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `ember.serialization.add_safe_globals([{full_path}])` or the "
        f"`ember.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


def weights_only_message(problem: str) -> str:
    """The whole message of a weights-only refusal, laid out as ``torch.load``'s.

    >>> from ember.serialization.unpickler import weights_only_message
    >>> weights_only_message("Unsupported operand 83").startswith("Weights only load failed.")
    True
    """
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", problem):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the "
            f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            f"message.\n\tWeightsUnpickler error: {problem}{DOCS_MESSAGE}"
        )
    message = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", problem):
        message += "WeightsUnpickler error: "
    return f"{message}\n\n{problem}{DOCS_MESSAGE}"


class WeightsOnlyUnpickler:
    """PyTorch's weights-only unpickler over a ``Policy`` (see the module docstring).

    >>> import io
    >>> from ember.serialization.unpickler import Policy, Refused, WeightsOnlyUnpickler
    >>> try:
    ...     WeightsOnlyUnpickler(io.BytesIO(b"cos\\nsystem\\n(S'ls'\\ntR."), Policy()).load()
    ... except Refused as e:
    ...     print(e)
    Trying to load unsupported GLOBAL os.system whose module os is blocked.
    """

    def __init__(self, file: BinaryIO, policy: Policy) -> None:
        self.read, self.readline = file.read, file.readline
        self.policy = policy
        self.memo: dict[int, Any] = {}
        self.vetted: dict[int, Any] = {}  # id -> each object a GLOBAL gave (kept alive here)

    def _global(self) -> Any:
        module, name = _read_global(self.readline)
        full_path = f"{module}.{name}"
        if module in BLOCKED_MODULES:
            raise Refused(
                f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked."
            )
        obj = self.policy.allowed(full_path)
        if obj is None:
            raise Refused(unsupported_global(full_path))
        self.vetted[id(obj)] = obj
        return obj

    def _allowed_type(self, cls: Any) -> bool:
        return id(cls) in self.vetted and isinstance(cls, type)

    def load(self) -> Any:
        """The object of the pickle; ``Refused`` for what weights-only loading forbids."""
        self.metastack: list[list] = []
        stack: list[Any] = []
        self.stack = stack
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            stack = self.stack
            if op == pickle.GLOBAL[0]:
                stack.append(self._global())
            elif op == pickle.NEWOBJ[0]:
                args = stack.pop()
                cls = stack.pop()
                if not self._allowed_type(cls):
                    raise Refused(
                        "Can only create new object for nn.Parameter or classes allowlisted "
                        f"via `add_safe_globals` but got {_name(cls)}"
                    )
                stack.append(cls.__new__(cls, *args))
            elif op == pickle.REDUCE[0]:
                args = stack.pop()
                func = stack[-1]
                if id(func) not in self.vetted:
                    raise Refused(f"Trying to call reduce for unrecognized function {_name(func)}")
                stack[-1] = func(*args)
            elif op == pickle.BUILD[0]:
                state = stack.pop()
                inst = stack[-1]
                if type(inst) is not OrderedDict and not self._allowed_type(type(inst)):
                    raise Refused(
                        "Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                        f"via `add_safe_globals`, but got {type(inst)}"
                    )
                self.policy.build(inst, state)
            elif op == pickle.APPEND[0]:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise Refused(f"Can only append to lists, but got {type(stack[-1])}")
                stack[-1].append(item)
            elif op == pickle.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise Refused(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == pickle.SETITEM[0]:
                v, k = stack.pop(), stack.pop()
                self._check_set_item_target("SETITEM")
                stack[-1][k] = v
            elif op == pickle.SETITEMS[0]:
                items = self._pop_mark()
                self._check_set_item_target("SETITEMS")
                for i in range(0, len(items), 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == pickle.MARK[0]:
                self.metastack.append(stack)
                self.stack = []
            elif op == pickle.TUPLE[0]:
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif op in _SIMPLE:
                _SIMPLE[op](self, stack)
            elif op == pickle.BINPERSID[0]:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise Refused(f"persistent_load id must be tuple or int, but got {type(pid)}")
                stack.append(self.policy.persistent_load(pid))
            elif op == pickle.PROTO[0]:
                proto = read(1)[0]
                if proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {proto} in the checkpoint, which was not the "
                        "default pickle protocol used by `ember.load` (2). The weights_only "
                        "Unpickler might not support all instructions implemented by this "
                        "protocol.",
                        stacklevel=2,
                    )
            elif op == pickle.STOP[0]:
                return stack.pop()
            else:
                raise Refused(f"Unsupported operand {op}")

    def _pop_mark(self) -> list:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_item_target(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise Refused(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(self.stack[-1])}"
            )


def _name(obj: Any) -> str:
    """A short name for an object in a message (never its repr: that could run for ages)."""
    name = getattr(obj, "__qualname__", None)
    return name if isinstance(name, str) else f"a {type(obj).__name__}"


def _binunicode(u: WeightsOnlyUnpickler, stack: list) -> None:
    (n,) = unpack("<I", u.read(4))
    if n > maxsize:
        raise Refused("String is too long")
    stack.append(str(u.read(n), "utf-8", "surrogatepass"))


def _short_binstring(u: WeightsOnlyUnpickler, stack: list) -> None:
    stack.append(u.read(u.read(1)[0]).decode("utf-8", "strict"))


def _binget(u: WeightsOnlyUnpickler, stack: list) -> None:
    stack.append(u.memo[u.read(1)[0]])


def _long_binget(u: WeightsOnlyUnpickler, stack: list) -> None:
    stack.append(u.memo[unpack("<I", u.read(4))[0]])


def _binput(u: WeightsOnlyUnpickler, stack: list) -> None:
    u.memo[u.read(1)[0]] = stack[-1]


def _long_binput(u: WeightsOnlyUnpickler, stack: list) -> None:
    u.memo[unpack("<I", u.read(4))[0]] = stack[-1]


def _tuple_n(n: int) -> Callable[[WeightsOnlyUnpickler, list], None]:
    def make(u: WeightsOnlyUnpickler, stack: list) -> None:
        if len(stack) < n:
            raise IndexError("pop from an empty stack")
        stack[-n:] = [tuple(stack[-n:])]

    return make


def _exact(data: bytes, n: int) -> bytes:
    if len(data) != n:
        raise EOFError("the pickle ends inside an opcode")
    return data


_SIMPLE: dict[int, Callable[[WeightsOnlyUnpickler, list], None]] = {
    pickle.TUPLE1[0]: _tuple_n(1),
    pickle.TUPLE2[0]: _tuple_n(2),
    pickle.TUPLE3[0]: _tuple_n(3),
    pickle.NONE[0]: lambda u, s: s.append(None),
    pickle.NEWFALSE[0]: lambda u, s: s.append(False),
    pickle.NEWTRUE[0]: lambda u, s: s.append(True),
    pickle.EMPTY_TUPLE[0]: lambda u, s: s.append(()),
    pickle.EMPTY_LIST[0]: lambda u, s: s.append([]),
    pickle.EMPTY_DICT[0]: lambda u, s: s.append({}),
    pickle.EMPTY_SET[0]: lambda u, s: s.append(set()),
    pickle.BININT[0]: lambda u, s: s.append(unpack("<i", u.read(4))[0]),
    pickle.BININT1[0]: lambda u, s: s.append(_exact(u.read(1), 1)[0]),
    pickle.BININT2[0]: lambda u, s: s.append(unpack("<H", u.read(2))[0]),
    pickle.BINFLOAT[0]: lambda u, s: s.append(unpack(">d", u.read(8))[0]),
    pickle.BINUNICODE[0]: _binunicode,
    pickle.SHORT_BINSTRING[0]: _short_binstring,
    pickle.BINGET[0]: _binget,
    pickle.LONG_BINGET[0]: _long_binget,
    pickle.BINPUT[0]: _binput,
    pickle.LONG_BINPUT[0]: _long_binput,
    pickle.LONG1[0]: lambda u, s: s.append(pickle.decode_long(u.read(u.read(1)[0]))),
}


class TrustedUnpickler(pickle._Unpickler):
    """Python's unpickler for ``weights_only=False``: resolves any global through the policy
    (which may import), with the policy's persistent ids and BUILD rule.

    >>> import io, pickle
    >>> from ember.serialization.unpickler import Policy, TrustedUnpickler
    >>> TrustedUnpickler(io.BytesIO(pickle.dumps({"a": (1, 2)})), Policy()).load()
    {'a': (1, 2)}
    """

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file: BinaryIO, policy: Policy) -> None:
        super().__init__(file, encoding="utf-8")
        self.policy = policy

    def find_class(self, module: str, name: str) -> Any:
        return self.policy.resolve(_IMPORT_MAPPING.get(module, module), name)

    def persistent_load(self, pid: Any) -> Any:
        return self.policy.persistent_load(pid)

    def _load_build(self) -> None:
        state = self.stack.pop()
        self.policy.build(self.stack[-1], state)

    dispatch[pickle.BUILD[0]] = _load_build


def read_pickle(file: BinaryIO, policy: Policy, weights_only: bool) -> Any:
    """One pickle from ``file``, weights-only or trusted.

    >>> import io, pickle
    >>> from ember.serialization.unpickler import Policy, read_pickle
    >>> read_pickle(io.BytesIO(pickle.dumps([1, "a"], protocol=2)), Policy(), True)
    [1, 'a']
    """
    if weights_only:
        return WeightsOnlyUnpickler(file, policy).load()
    return TrustedUnpickler(file, policy).load()


_DAMAGE = (
    pickle.UnpicklingError,
    EOFError,
    OSError,
    ValueError,
    TypeError,
    AttributeError,
    IndexError,
    KeyError,
    OverflowError,
    MemoryError,
    struct.error,
    NotImplementedError,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
)


def guarded(run: Callable[[], Any], source: str, what: str, weights_only: bool) -> Any:
    """``run()``, with every failure of reading ``source`` (a ``what``) a ``CheckpointError``
    naming the file: ``WeightsOnlyError`` with PyTorch's advice for a refusal.

    >>> from ember.serialization.unpickler import Invalid, guarded
    >>> def bad():
    ...     raise Invalid("a tensor reads past its storage")
    >>> try:
    ...     guarded(bad, "m.pt", "PyTorch checkpoint", True)
    ... except Exception as e:
    ...     print(e)
    m.pt: not a valid PyTorch checkpoint: a tensor reads past its storage
    """
    try:
        return run()
    except Refused as e:
        raise WeightsOnlyError(f"{source}: {weights_only_message(str(e))}") from None
    except Invalid as e:
        raise CheckpointError(f"{source}: not a valid {what}: {e}") from None
    except (CheckpointError, DeviceError):
        raise
    except RecursionError:
        raise CheckpointError(f"{source}: the {what}'s object is nested too deeply") from None
    except ImportError as e:
        if weights_only:
            raise CheckpointError(f"{source}: not a valid {what}: {e}") from None
        raise CheckpointError(
            f"{source}: the {what} names a global that cannot be imported here ({e}); define "
            "or import the classes it holds before loading, as torch.load needs too"
        ) from None
    except _DAMAGE as e:
        if not weights_only and isinstance(e, AttributeError) and "Can't get" in str(e):
            raise CheckpointError(
                f"{source}: the {what} names a class this program does not define ({e}); "
                "define or import it before loading, as torch.load needs too"
            ) from None
        raise CheckpointError(
            f"{source}: not a valid {what} (damaged or truncated file or pickle): "
            f"{type(e).__name__}: {str(e):.300}"
        ) from None
