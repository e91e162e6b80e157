"""Graph files: the graph as text plus its weights as safetensors; no pickle, no code.

``save(fn_or_graph, path)`` writes a folder ``path`` with ``graph.txt`` (the text form of
``ember.static.ir``) and ``weights.safetensors`` (state values under their names, constants too
big to write inline under ``const.<id>``). ``load(path)`` reads it back into a callable that runs
the graph in any process, without the Python that built it.

``graph.txt`` starts with ``# ember graph v1``, ``# result: single|tuple`` and ``# crc32:
XXXXXXXX``, the CRC-32 of the file without that line: ``load`` refuses a file changed after it
was written (delete the ``# crc32`` line after editing one by hand); the weights carry their own
checksums. Every problem with a graph folder (missing or unreadable files, a version this ember
doesn't read, bad text, attributes an op refuses, types that disagree with the ops) is a
``GraphError`` naming the file and the cause.

Reading runs no code from the file: the text is parsed with ``ast`` into literals (numbers,
strings, tuples, lists, ``slice``, ``...``, dtype names), and each op is rebuilt from its class
name and fields through a registry of ember's own op classes; any other name is an error.

>>> import os, tempfile, ember
>>> from ember import static
>>> f = ember.compile(lambda x: (x * 2).exp())
>>> _ = f(ember.zeros(2))
>>> path = os.path.join(tempfile.mkdtemp(), "g")
>>> static.save(f, path)
>>> static.load(path)(ember.zeros(2))
tensor([1., 1.])
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import zlib

import numpy as np

from .. import dtypes as _dt
from .._errors import DTypeError, EmberError, ShapeError
from .._tensor import Tensor
from ..ops.base import Op
from ..serialization import safetensors as _st
from ..serialization.atomic import atomic_write
from ..serialization.errors import CheckpointError
from .define import Graph as SymbolicGraph
from .executor import Plan
from .ir import (
    _LONG,
    INLINE_LIMIT,
    Assign,
    Graph,
    GraphError,
    Group,
    Value,
    const_key,
    format_graph,
    state_key,
    type_str,
)
from .trace import ArrayRef, GradRef, HostRef

HEADER = "# ember graph v1"
_VERSION = re.compile(r"# ember graph v(\S*)")
_CRC = "# crc32: "
_MAX_DIM = 1 << 40  # a larger size in a file is damage, not a tensor
_registry: dict | None = None


def op_registry() -> dict:
    """``{class name: class}`` of every ember op that can be written to and read from a file."""
    global _registry
    if _registry is None:
        import importlib
        import pkgutil

        from .. import ops

        for info in pkgutil.iter_modules(ops.__path__):
            importlib.import_module(f"{ops.__name__}.{info.name}")
        reg: dict = {}
        todo = [Op]
        while todo:
            cls = todo.pop()
            todo.extend(cls.__subclasses__())
            if (
                cls is not Op
                and cls.__module__.startswith("ember.")
                and dataclasses.is_dataclass(cls)
                and getattr(cls, "serializable", True)
            ):
                if reg.get(cls.__name__, cls) is not cls:
                    raise GraphError(f"two op classes are named {cls.__name__}")
                reg[cls.__name__] = cls
        reg["Assign"], reg["Group"] = Assign, Group
        _registry = reg
    return _registry


# -- saving -----------------------------------------------------------------------------------


def save(obj, path: str) -> None:
    """Write a compiled function's latest trace (or a function ``Graph``) to the folder ``path``.

    Graphs with steps that only live in this process (an optimizer step, a user ``Function``,
    gradients kept in ``.grad``) can't be saved: compile the inference function instead.
    """
    from .compile import CompiledFunction

    if isinstance(obj, CompiledFunction):
        entry = obj._latest
        if entry is None:
            raise GraphError(f"save: {obj.__name__} was never called, so it has no graph yet")
        graph, single = entry.graph, entry.structure == ("tensor",)
    elif isinstance(obj, Graph):
        graph, single = obj, len(obj.outputs) == 1
    else:
        raise GraphError(f"save: expected a compiled function or a Graph, got {type(obj).__name__}")
    if not graph.outputs:
        raise GraphError(f"save: graph {graph.name!r} has no outputs")
    reg = op_registry()
    for node in graph.nodes:
        cls = type(node.op)
        if reg.get(cls.__name__) is not cls:
            raise GraphError(
                f"save: graph {graph.name!r} has a {node.op.name} step, which exists only in "
                "this Python process and cannot be written to a file"
            )
    weights = {}
    for v in graph.state:
        if isinstance(v.ref, GradRef):
            raise GraphError(
                f"save: graph {graph.name!r} writes gradients (.grad); save an "
                "inference function instead"
            )
        if isinstance(v.ref, HostRef):
            raise GraphError(
                f"save: graph {graph.name!r} reads the Python value {v.name!r} on every run "
                "(an optimizer's hyperparameter); save an inference function instead"
            )
        arr = _state_array(v)
        key = state_key(v)
        if key in weights:
            raise GraphError(f"save: two state values are named {key!r}")
        weights[key] = arr
    for v in graph.constants:
        if v.data.size > INLINE_LIMIT or v.data.dtype == _dt.bfloat16.np:
            weights[const_key(v)] = v.data
    text = format_graph(graph, strict=True)
    head = f"{HEADER}\n# result: {'single' if single else 'tuple'}\n"
    data = (head + text + "\n").encode("utf-8")
    crc = f"{_CRC}{zlib.crc32(data):08x}\n".encode()
    os.makedirs(path, exist_ok=True)
    with atomic_write(os.path.join(path, "weights.safetensors")) as f:
        _st.write(f, {k: _host(a) for k, a in weights.items()}, {"format": "ember-graph"})
    with atomic_write(os.path.join(path, "graph.txt")) as f:
        f.write(data[: len(head)] + crc + data[len(head) :])


def _state_array(v: Value):
    ref = v.ref
    if isinstance(ref, ArrayRef):
        return ref.array
    if isinstance(ref, np.ndarray) or hasattr(ref, "__cuda_array_interface__"):
        return ref
    raise GraphError(f"save: state value %{v.id} ({v.name!r}) has no array to save")


def _host(a):
    if type(a) is not np.ndarray:
        from ..backend import CPU, to_device

        a = to_device(a, CPU)
    return np.ascontiguousarray(a)


# -- loading ----------------------------------------------------------------------------------


class LoadedGraph:
    """A graph read from a file, called like the function it was traced from (its tensor
    arguments in order); ``graph`` is the IR."""

    def __init__(self, graph: Graph, single: bool) -> None:
        self.graph = graph
        self.single = single
        self.plan = Plan(
            graph,
            list(graph.outputs)
            + [n.output for n in graph.nodes if getattr(n.op, "has_side_effects", False)],
        )
        self.n_out = len(graph.outputs)

    def __repr__(self) -> str:
        return f"<ember.static graph {self.graph.name!r} loaded: {len(self.graph.nodes)} nodes>"

    def __call__(self, *args):
        from .session import _check_feed

        g = self.graph
        if len(args) != len(g.inputs):
            raise ShapeError(
                f"{g.name}: expected {len(g.inputs)} tensor arguments "
                f"({', '.join(type_str(v) for v in g.inputs)}), got {len(args)}"
            )
        feeds = []
        for v, a in zip(g.inputs, args):
            if isinstance(a, Tensor) and a._data.dtype != v.dtype:
                raise DTypeError(
                    f"{g.name}: argument {v.name or v.id!r} expects {type_str(v)}, got "
                    f"{a.dtype} of shape {tuple(a.shape)}"
                )
            feeds.append(_check_feed(v, a))
        outs, stores = self.plan.run(feeds, [v.ref for v in self.plan.state])
        outs = outs[: self.n_out]
        for v, arr in stores:
            if v.kind == "state" and v.ref is not arr:
                outs = [o.copy() if np.may_share_memory(o, v.ref) else o for o in outs]
                v.ref[...] = arr
        result = tuple(Tensor._make(o) for o in outs)
        return result[0] if self.single else result


def load(path: str, *, verify: bool = True) -> LoadedGraph:
    """Read a graph folder written by ``save`` into a callable.

    ``verify`` (default True) checks the checksums of ``graph.txt`` and of the weights;
    ``verify=False`` skips them. Any problem is a ``GraphError`` naming the file and the cause.

    >>> import os, tempfile, ember
    >>> from ember import static
    >>> f = ember.compile(lambda x: x + 1)
    >>> _ = f(ember.zeros(2))
    >>> path = os.path.join(tempfile.mkdtemp(), "g")
    >>> static.save(f, path)
    >>> static.load(path)(ember.ones(2))
    tensor([2., 2.])
    """
    path = os.fspath(path)
    if not os.path.isdir(path):
        what = "does not exist" if not os.path.exists(path) else "is not a folder"
        raise GraphError(
            f"load: {path} {what}; a graph is a folder with graph.txt and weights.safetensors"
        )
    text_path = os.path.join(path, "graph.txt")
    text = _read_text(text_path, verify)
    weights_path = os.path.join(path, "weights.safetensors")
    try:
        with open(weights_path, "rb") as f:
            weights, _ = _st.read(f, weights_path, verify)
    except FileNotFoundError:
        raise GraphError(
            f"load: {weights_path} is missing; a graph folder holds graph.txt and "
            "weights.safetensors, written together by ember.static.save"
        ) from None
    except OSError as e:
        raise GraphError(f"load: can't read {weights_path}: {e.strerror or e}") from None
    except CheckpointError as e:
        raise GraphError(str(e)) from None
    graph, single = parse(text, weights, source=text_path, check_types=True)
    try:
        return LoadedGraph(graph, single)
    except GraphError:
        raise
    except (EmberError, ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise GraphError(f"{text_path}: can't run this graph: {e}") from None


def _read_text(text_path: str, verify: bool) -> str:
    """graph.txt's text, its version and checksum lines checked."""
    try:
        with open(text_path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GraphError(f"load: can't read {text_path}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GraphError(
            f"{text_path}: not an ember graph file: not UTF-8 text ({e.reason} at byte {e.start})"
        ) from None
    first = text.split("\n", 1)[0].strip()
    m = _VERSION.fullmatch(first)
    if m is None:
        raise GraphError(
            f"{text_path}: not an ember graph file: the first line is {first[:60]!r}, "
            f"expected {HEADER!r}"
        )
    if m.group(1) != "1":
        raise GraphError(
            f"{text_path}: ember graph format version {m.group(1)[:20]!r} is not supported "
            "(this ember reads version 1); upgrade ember"
        )
    lines = text.splitlines(keepends=True)
    results = [ln.strip() for ln in lines if ln.startswith("# result")]
    if results not in (["# result: single"], ["# result: tuple"]):
        raise GraphError(
            f"{text_path}: expected one '# result: single' or '# result: tuple' line, found "
            f"{results[:3]!r:.120}"
        )
    crcs = [i for i, ln in enumerate(lines) if ln.startswith(_CRC)]
    if len(crcs) > 1:
        raise GraphError(f"{text_path}: the file has {len(crcs)} '# crc32' lines")
    if crcs and verify:
        (i,) = crcs
        want = lines[i][len(_CRC) :].strip()
        rest = "".join(lines[:i] + lines[i + 1 :]).encode("utf-8")
        got = f"{zlib.crc32(rest):08x}"
        if want != got:
            raise GraphError(
                f"{text_path}: the file was changed or corrupted after it was written: its "
                f"crc32 is {got}, the '# crc32' line says {want[:20]!r} (after editing it on "
                "purpose, delete that line; load(..., verify=False) skips the check)"
            )
    return text


_TYPE = r"(\w+)\[([^\]]*)\]"
_INPUT = re.compile(r"%(\d+): " + _TYPE + r'(?: ("(?:[^"\\]|\\.)*"))?')
_HEAD = re.compile(r"^graph (.*?)\((.*)\) \{$")
_STATE = re.compile(r"^state %(\d+): " + _TYPE + r' ("(?:[^"\\]|\\.)*")$')
_CONST = re.compile(r"^const %(\d+): " + _TYPE + r" = (.*)$")
_NODE = re.compile(r"^%(\d+): " + _TYPE + r" = (.*)$")
_REF = re.compile(r"%(\d+)")


_ERRORS = (
    SyntaxError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    ArithmeticError,
    RecursionError,
    MemoryError,
    EmberError,
)


def parse(
    text: str, weights: dict | None = None, source: str = "<text>", check_types: bool = False
) -> tuple[Graph, bool]:
    r"""``(graph, single)`` from the text form; ``weights`` gives state and large constants.

    ``check_types`` re-runs each op's ``infer`` and refuses a node whose declared type
    differs (``load`` does). Every problem is a ``GraphError`` naming ``source`` and the line.

    >>> from ember.static.files import parse
    >>> g, single = parse('graph f(%0: f32[2] "x") {\n  %1: f32[2] = Exp(%0)\n  return %1\n}')
    >>> len(g.nodes), single
    (1, False)
    """
    weights = weights or {}
    all_lines = [ln.strip() for ln in text.splitlines()]
    single = "# result: single" in all_lines
    numbered = [(i, ln) for i, ln in enumerate(all_lines, 1) if ln and not ln.startswith("#")]
    if not numbered:
        raise GraphError(f"{source}: empty graph file")
    head_no, head = numbered[0]
    m = _HEAD.match(head)
    if m is None or numbered[-1][1] != "}":
        raise GraphError(f"{source}: expected 'graph NAME(...) {{' ... '}}'")
    g = SymbolicGraph(m.group(1))  # a loaded graph can be built on, as one defined here
    values: dict = {}

    def define(vid: str, v: Value, lineno: int) -> None:
        if vid in values:
            raise GraphError(f"{source}:{lineno}: value %{vid} is defined twice")
        values[vid] = v

    try:
        args = m.group(2)
        if _INPUT.sub("", args).replace(",", "").strip():
            raise GraphError(f"unrecognized argument list {args[:80]!r}")
        for im in _INPUT.finditer(args):
            name = json.loads(im.group(4)) if im.group(4) else None
            v = g.add_input(_shape(im.group(3)), _dtype(im.group(2), source), name)
            define(im.group(1), v, head_no)
    except GraphError as e:
        raise GraphError(f"{source}:{head_no}: {e} (in: {head[:200]})") from None
    except _ERRORS as e:
        raise GraphError(
            f"{source}:{head_no}: can't read this line: {e} (in: {head[:200]})"
        ) from None
    returned = False
    for lineno, ln in numbered[1:-1]:
        try:
            if ln.startswith("state "):
                sm = _need(_STATE.match(ln), ln)
                name = json.loads(sm.group(4))
                arr = weights.get(name)
                v = g.add_state(_shape(sm.group(3)), _dtype(sm.group(2), source), None, name)
                if arr is None:
                    raise GraphError(f"no weights for state {name!r}")
                v.ref = _checked(arr, v)
                define(sm.group(1), v, lineno)
            elif ln.startswith("const "):
                cm = _need(_CONST.match(ln), ln)
                shape, dtype = _shape(cm.group(3)), _dtype(cm.group(2), source)
                arr = _const_data(cm.group(4), weights, shape, dtype)
                define(cm.group(1), g.add_constant(arr), lineno)
            elif ln.startswith("return "):
                if returned:
                    raise GraphError("a second return line")
                returned = True
                for r in ln[len("return ") :].split(","):
                    r = r.strip()
                    if not re.fullmatch(r"%\d+", r):
                        raise GraphError(f"return takes values (%N), got {r[:40]!r}")
                    g.outputs.append(_lookup(values, r[1:]))
            else:
                nm = _need(_NODE.match(ln), ln)
                op, args = _parse_op(nm.group(4), values)
                out = g.add_node(op, args, _shape(nm.group(3)), _dtype(nm.group(2), source))
                define(nm.group(1), out, lineno)
        except GraphError as e:
            raise GraphError(f"{source}:{lineno}: {e} (in: {ln[:200]})") from None
        except _ERRORS as e:
            raise GraphError(
                f"{source}:{lineno}: can't read this line: {e} (in: {ln[:200]})"
            ) from None
    if not returned:
        raise GraphError(f"{source}: no 'return' line: the graph has no outputs (truncated?)")
    try:
        g.validate(check_types=check_types)
    except GraphError as e:
        raise GraphError(f"{source}: {e}") from None
    except _ERRORS as e:
        raise GraphError(f"{source}: the graph's types don't check: {e}") from None
    return g, single


def _need(m, line: str):
    if m is None:
        raise GraphError("unrecognized line")
    return m


def _lookup(values: dict, vid: str) -> Value:
    v = values.get(vid)
    if v is None:
        raise GraphError(f"value %{vid} is used before it is defined")
    return v


def _shape(text: str) -> tuple:
    if not text:
        return ()
    shape = []
    for d in text.split(","):
        if d == "?":
            shape.append(None)
            continue
        if not d.isdigit() or len(d) > 14 or int(d) >= _MAX_DIM:
            raise GraphError(f"bad size {d[:20]!r} in shape [{text[:60]}]")
        shape.append(int(d))
    return tuple(shape)


def _dtype(name: str, source: str):
    full = _LONG.get(name, name)
    try:
        return _dt.to_dtype(full).np
    except Exception:  # noqa: BLE001 - reported as a file error
        raise GraphError(f"{source}: unknown dtype {name!r}") from None


def _checked(arr, v: Value):
    if tuple(arr.shape) != v.shape or arr.dtype != v.dtype:
        raise GraphError(
            f"weights for {v.name!r} are {arr.dtype}{list(arr.shape)}, the graph says {type_str(v)}"
        )
    return arr


def _const_data(text: str, weights: dict, shape: tuple, dtype):
    node = ast.parse(text, mode="eval").body
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "weights"
    ):
        key = _literal(node.slice)
        if key not in weights:
            raise GraphError(f"no weights for constant {key!r}")
        arr = weights[key]
    else:
        arr = np.asarray(_literal(node), dtype=dtype)
    if tuple(arr.shape) != shape or arr.dtype != dtype:
        raise GraphError(f"constant data {arr.dtype}{list(arr.shape)} does not match its type")
    return arr


def _parse_op(text: str, values: dict):
    expr = _REF.sub(lambda m: f"_v{m.group(1)}", text)
    node = ast.parse(expr, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise GraphError("expected OpName(%a, ..., field=value)")
    args = []
    for a in node.args:
        if not (isinstance(a, ast.Name) and a.id.startswith("_v")):
            raise GraphError("op inputs must be values (%N)")
        args.append(_lookup(values, a.id[2:]))
    return _make_op(node.func.id, node.keywords), args


def _make_op(name: str, keywords):
    cls = op_registry().get(name)
    if cls is None:
        raise GraphError(f"unknown op {name!r} (not one of ember's op classes)")
    fields = {}
    for kw in keywords:
        if kw.arg is None:
            raise GraphError("** arguments are not allowed")
        fields[kw.arg] = _literal(kw.value)
    try:
        return cls(**fields)
    except TypeError as e:
        raise GraphError(f"{name}: bad fields: {e}") from None


_NAMES = {"inf": float("inf"), "nan": float("nan"), "None": None, "True": True, "False": False}


def _literal(node):
    """The value of an attribute expression: literals only (see the module docstring)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float, str, bool, type(None))) or node.value is ...:
            return node.value
        raise GraphError(f"unsupported constant {node.value!r}")
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise GraphError("a sign applies to numbers only")
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Name):
        if node.id in _NAMES:
            return _NAMES[node.id]
        if node.id in _dt._BY_NAME:
            return _dt._BY_NAME[node.id]
        raise GraphError(f"unknown name {node.id!r}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "slice" and not node.keywords and len(node.args) <= 3:
            return slice(*[_literal(a) for a in node.args])
        if node.args:
            raise GraphError(f"{node.func.id}: nested ops take fields by name only")
        return _make_op(node.func.id, node.keywords)
    raise GraphError(f"unsupported expression {ast.dump(node)[:60]}")


__all__ = ["LoadedGraph", "load", "op_registry", "parse", "save"]
