"""Write the manifest of CuPy's API that the strict fake CuPy (``tests/_fakecupy/``) is built from.

    python tools/cupy_manifest.py [--out tests/cupy_manifest.json] [--check]

It reads the installed ``cupy`` package (``cupy-cuda12x`` imports without a GPU) and records,
deterministically (sorted keys, no addresses), what the fake must imitate:

- ``namespaces``: every public name of the modules ember and its tests use (``cupy``,
  ``cupy.linalg``, ``cupy.fft``, ``cupy.random``, ``cupy.lib.stride_tricks``, ``cupy.cuda`` and
  its ``runtime`` / ``device``, ``cupyx``, ...), each with its kind and, for callables, the
  signature: ``inspect.signature`` where it works, else the first line of a Cython docstring
  (``"source": "docstring"``), else ``"unknown"``. Defaults that are not literals print as ``...``.
- ``classes``: the attributes and method signatures of ``cupy.ndarray``, its ``flags``, the
  ufunc class, ``cupy.cuda.Device`` / ``Stream`` / ``Event`` / ``Graph`` / memory pools,
  ``cupy.random.RandomState`` and the kernel classes.
- ``ufuncs``: per ufunc, ``nin`` / ``nout``, the loop table ``types`` (CuPy picks the first loop
  the inputs cast to safely), the ``dtype=`` table, loops that raise (with their message), the
  promotion hook, the default casting and the scatter op behind ``ufunc.at``.
- ``compiled``: rules that live only in CuPy's compiled code, read from the string tables of
  its extension modules (Cython stores them zlib-compressed): which dtypes ``ufunc.at`` /
  ``cupyx.scatter_add`` accept, and error messages the fake repeats.
- ``observed``: rules seen on a real GPU that neither source shows, written by hand below with
  where they were seen.

``--check`` regenerates and compares with the file instead of writing it (exit status 1 on a
difference). ``tests/test_fakecupy.py`` does the same from pytest.
"""

from __future__ import annotations

import argparse
import ast
import glob
import inspect
import json
import os
import re
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "cupy_manifest.json")
sys.path.insert(0, ROOT)
from tests._fakecupy._ufunc import use_weak_scalar  # noqa: E402 - CuPy's rule, written once

# Modules whose public names the fake offers (what ember and the tests reach).
NAMESPACES = (
    "cupy",
    "cupy.linalg",
    "cupy.fft",
    "cupy.random",
    "cupy.lib",
    "cupy.lib.stride_tricks",
    "cupy.cuda",
    "cupy.cuda.runtime",
    "cupy.cuda.device",
    "cupy._core._routines_linalg",
    "cupyx",
)

# Classes whose members the fake imitates: manifest name -> dotted path to the object.
CLASSES = {
    "cupy.ndarray": "cupy.ndarray",
    "cupy.ndarray.flags": "cupy._core.flags.Flags",
    "cupy.ufunc": "cupy.ufunc",
    "cupy.cuda.Device": "cupy.cuda.Device",
    "cupy.cuda.Stream": "cupy.cuda.Stream",
    "cupy.cuda.Event": "cupy.cuda.Event",
    "cupy.cuda.Graph": "cupy.cuda.Graph",
    "cupy.cuda.MemoryPool": "cupy.cuda.MemoryPool",
    "cupy.cuda.MemoryPointer": "cupy.cuda.MemoryPointer",
    "cupy.cuda.PinnedMemoryPool": "cupy.cuda.PinnedMemoryPool",
    "cupy.random.RandomState": "cupy.random.RandomState",
    "cupy.ElementwiseKernel": "cupy.ElementwiseKernel",
    "cupy.RawKernel": "cupy.RawKernel",
}

# Instances that exist without a GPU, to read instance attributes from.
INSTANCE_PROBES = {"cupy.cuda.Stream": "cupy.cuda.Stream.null"}

# Messages to find in the compiled string tables: key -> regex (bytes) with one group.
COMPILED_MESSAGES = {
    "implicit_conversion": rb"(Implicit conversion to a NumPy array is not allowed\. Please use "
    rb"`\.get\(\)` to construct a NumPy array explicitly\.)",
    "capture_d2h": rb"(the current stream is capturing, so D2H transfers are disallowed)",
    "capture_h2d": rb"(the current stream is capturing, so H2D transfers are disallowed)",
    "capture_sync": rb"(the current stream is capturing, so synchronous API calls are disallowed)",
    "peer_access": rb"( Peer access is unavailable between these devices\.)",
    "kernel_type_mismatch": rb"(Type is mismatched\. )",
    "ufunc_wrong_arguments": rb"(Wrong arguments %s)",
}
AT_RULE = re.compile(rb"cupy\.(\w+)\.at only supports ([a-z0-9, ]+?),? as data type")

# Seen on a real GPU, not readable from the package: kept by hand, each with its source.
OBSERVED = {
    "matmul_bfloat16_batched": {
        "rule": "cupy.matmul on bfloat16 operands where the second has ndim >= 3 (a batched "
        "GEMM, not folded into one 2-D product) raises TypeError: data type 'E' not understood",
        "error": "TypeError",
        "message": "data type 'E' not understood",
        "source": "shared/gpu/2026-11-26/tests.log, test_half_precision_matmul[sa2-sb2-dtype1]: "
        "(4,64,512)@(4,512,32) bfloat16 failed; (256,512)@(512,128) and (4,64,512)@(512,128) "
        "passed (H200, CuPy 14.2.0)",
    },
    "cublas_during_capture": {
        "rule": "while a stream captures, CuPy refuses every cuBLAS call (matmul and the @ "
        "operator, dot, vdot, inner, tensordot, einsum's contractions) with NotImplementedError",
        "error": "NotImplementedError",
        "message": "calling cuBLAS API during stream capture is currently unsupported",
        "source": "tools/gpu_profile.py on an H100, 2026-11-26 (CuPy 14.2.0): ember.compile of "
        "the ResNet-18 step fell back to no graph with this message (BatchNorm's per-channel "
        "sums were matrix-vector products)",
    },
    "capture_d2h_error": {
        "rule": "while a stream captures, device-to-host copies (get, asnumpy, item, tolist, "
        "float/int/bool of an array) raise RuntimeError with compiled.capture_d2h; host-to-device "
        "copies raise with compiled.capture_h2d",
        "error": "RuntimeError",
        "source": "messages from cupy/cuda/memory.*.so (compiled section); the exception class "
        "is CuPy's RuntimeError as documented for stream capture",
    },
}


def _default(value) -> str:
    """A default value as source text: literals as they are, anything else as ``...``."""
    try:
        text = repr(value)
        if ast.literal_eval(text) == value or value != value:
            return text if value == value else "..."
    except Exception:
        pass
    return "..."


def _format(params: list[tuple[str, str, str | None]]) -> str:
    """``(a, b=1, *, c=None, **kw)`` from ``(name, kind, default)`` triples."""
    out, star_done, slash_pending = [], False, False
    for name, kind, default in params:
        if kind == "POSITIONAL_ONLY":
            slash_pending = True
        elif slash_pending:
            out.append("/")
            slash_pending = False
        if kind == "KEYWORD_ONLY" and not star_done:
            out.append("*")
            star_done = True
        if kind == "VAR_POSITIONAL":
            out.append(f"*{name}")
            star_done = True
        elif kind == "VAR_KEYWORD":
            out.append(f"**{name}")
        else:
            out.append(name if default is None else f"{name}={default}")
    if slash_pending:
        out.append("/")
    return "(" + ", ".join(out) + ")"


def _from_inspect(sig: inspect.Signature, drop_self: bool) -> str:
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name == "self":
        params = params[1:]
    return _format(
        [
            (p.name, p.kind.name, None if p.default is p.empty else _default(p.default))
            for p in params
        ]
    )


def _strip_ctype(param: str) -> str:
    """``int alignment=-1`` -> ``alignment=-1``; ``_ndarray_base a`` -> ``a``."""
    head, eq, tail = param.partition("=")
    words = head.split()
    if len(words) > 1 and not words[-1].startswith("*"):
        head = words[-1]
    return head.strip() + (eq + tail.strip() if eq else "")


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def _from_docstring(doc: str | None, drop_self: bool) -> str | None:
    """The signature in a Cython docstring's first line (``name(self, a, b=1) -> T``)."""
    if not doc:
        return None
    line = doc.strip().splitlines()[0]
    m = re.match(r"^[\w.]+\((.*)\)(\s*->.*)?$", line)
    if not m:
        return None
    params = [_strip_ctype(p) for p in _split_params(m.group(1))]
    try:
        fn = ast.parse(f"def f({', '.join(params)}): pass").body[0]
    except SyntaxError:
        return None
    sig = inspect.Signature(
        [
            inspect.Parameter(
                p.arg,
                kind,
                default=inspect.Parameter.empty if d is None else _Lit(ast.unparse(d)),
            )
            for p, kind, d in _ast_params(fn.args)
        ]
    )
    return _from_inspect(sig, drop_self)


class _Lit:
    """A default kept as its source text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return True


def _ast_params(a: ast.arguments):
    P = inspect.Parameter
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for i, (p, d) in enumerate(zip(pos, defaults)):
        yield p, P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD, d
    if a.vararg:
        yield a.vararg, P.VAR_POSITIONAL, None
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        yield p, P.KEYWORD_ONLY, d
    if a.kwarg:
        yield a.kwarg, P.VAR_KEYWORD, None


def signature(obj, drop_self: bool = False) -> dict:
    """``{"signature": ..., "source": "inspect" | "docstring"}`` or ``{"signature": "unknown"}``."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        only_var = all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name.startswith("_")
                       for p in sig.parameters.values())  # fmt: skip
        if not (isinstance(obj, type) and only_var):
            return {"signature": _from_inspect(sig, drop_self), "source": "inspect"}
    docs = [getattr(obj, "__doc__", None)]
    if isinstance(obj, type):
        docs.append(getattr(obj.__init__, "__doc__", None))
    for doc in docs:
        text = _from_docstring(doc, drop_self)
        if text is not None:
            return {"signature": text, "source": "docstring"}
    return {"signature": "unknown"}


def _resolve(path: str):
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(path)


def _is_ufunc(obj) -> bool:
    import cupy

    return isinstance(obj, cupy.ufunc)


def describe(name: str, obj, numpy_module) -> dict:
    """One public name of a namespace."""

    if inspect.ismodule(obj) or type(obj).__name__ == "_LazyModule":
        return {"kind": "module", "module": getattr(obj, "__name__", name)}
    if _is_ufunc(obj):
        return {"kind": "ufunc"}
    np_same = getattr(numpy_module, name, None) is obj if numpy_module is not None else False
    if isinstance(obj, type):
        entry = {"kind": "class", "qualname": f"{obj.__module__}.{obj.__qualname__}"}
        if np_same or obj.__module__.startswith("numpy"):
            entry["numpy"] = True
        else:
            entry.update(signature(obj, drop_self=True))
        return entry
    if callable(obj):
        entry = {"kind": "function", "type": type(obj).__name__}
        entry.update(signature(obj))
        return entry
    if obj is None or isinstance(obj, (bool, int, str)):
        return {"kind": "constant", "value": obj}
    if isinstance(obj, float):
        return {"kind": "constant", "repr": repr(obj)}
    entry = {"kind": "object", "type": f"{type(obj).__module__}.{type(obj).__qualname__}"}
    if np_same:
        entry["numpy"] = True
    return entry


# Submodules CuPy imports only when asked (``import cupy.cuda.nccl``): they become attributes of
# their package after the first import anywhere in the process, so they are not manifest names
# (the fake serves ``cupy.cuda.nccl`` the same way, on request).
ON_REQUEST = {("cupy.cuda", "nccl")}


def namespace(path: str) -> dict:
    mod = _resolve(path)
    np_mod = None
    if path in ("cupy", "cupy.linalg", "cupy.fft", "cupy.random", "cupy.lib",
                "cupy.lib.stride_tricks"):  # fmt: skip
        try:
            np_mod = _resolve(path.replace("cupy", "numpy", 1))
        except (ImportError, AttributeError):
            np_mod = None
    names = sorted(n for n in dir(mod) if not n.startswith("_") and (path, n) not in ON_REQUEST)
    if path == "cupy._core._routines_linalg":
        names = [n for n in names if n.startswith(("COMPUTE_TYPE", "set_compute", "get_compute"))]
    out = {}
    for n in names:
        try:
            obj = getattr(mod, n)
        except Exception:  # a lazy attribute that fails to load without a GPU
            out[n] = {"kind": "unavailable"}
            continue
        out[n] = describe(n, obj, np_mod)
    return out


def member_kind(cls, name: str) -> str:
    raw = inspect.getattr_static(cls, name)
    t = type(raw).__name__
    if isinstance(raw, (property,)) or t in ("getset_descriptor", "member_descriptor"):
        return "attribute"
    if isinstance(raw, (staticmethod, classmethod)) or callable(raw):
        return "method"
    return "attribute"


def klass(path: str) -> dict:
    cls = _resolve(path)
    out = {"signature": signature(cls, drop_self=True)["signature"], "members": {}}
    for n in sorted(dir(cls)):
        if n.startswith("_") and not (n.startswith("__") and n.endswith("__")):
            continue
        if n.startswith("__") and getattr(object, n, None) is getattr(cls, n, None):
            continue
        if n in ("__doc__", "__module__", "__pyx_vtable__", "__slots__", "__dict__",
                 "__weakref__"):  # fmt: skip
            continue
        kind = member_kind(cls, n)
        entry = {"kind": kind}
        if kind == "method":
            entry.update(signature(getattr(cls, n), drop_self=True))
        out["members"][n] = entry
    probe = INSTANCE_PROBES.get(path)
    if probe is not None:  # attributes set on instances (a Python __init__), read off one
        for n in sorted(vars(_resolve(probe))):
            if not n.startswith("_"):
                out["members"].setdefault(n, {"kind": "attribute"})
    return out


def _ops_table(ops) -> list[str]:
    import numpy

    return [
        "".join(numpy.dtype(t).char for t in op.in_types)
        + "->"
        + "".join(numpy.dtype(t).char for t in op.out_types)
        for op in ops.ops
    ]


# Inputs of the recorded type resolution: dtype characters (arrays) and weak Python scalars.
RESOLUTION_INPUTS = ["?", "b", "B", "h", "i", "l", "L", "e", "E", "f", "d", "int", "float", "bool"]
_PY = {"int": (int, "l"), "float": (float, "d"), "bool": (False, "?")}


def resolution(obj) -> str:
    """CuPy's answer for every combination of ``RESOLUTION_INPUTS`` (two of them, not both
    scalars, for binary ufuncs): the first output's type character, ``-`` where no loop fits,
    ``!`` where the loop raises. Ufuncs of more than two inputs are left out (``""``)."""
    import itertools

    import ml_dtypes
    import numpy

    def dtype_of_char(c):  # 'E' is ml_dtypes' bfloat16, as in CuPy's tables
        return numpy.dtype(ml_dtypes.bfloat16) if c == "E" else numpy.dtype(c)

    if obj.nin > 2:
        return ""
    out = []
    for combo in itertools.product(RESOLUTION_INPUTS, repeat=obj.nin):
        if all(c in _PY for c in combo):
            continue
        types = tuple(numpy.dtype(dtype_of_char(_PY[c][1] if c in _PY else c)) for c in combo)
        weaks = tuple(_PY[c][0] if c in _PY else False for c in combo)
        weaks = weaks if any(weaks) else None
        if not use_weak_scalar(types, weaks):
            weaks = None
        if obj._ops.promote_types is not None:
            types, weaks = obj._ops.promote_types(types, weaks)
        op = obj._ops._guess_routine_from_in_types(types, weaks)
        if op is None:
            out.append("-")
        elif op.error_func is not None:
            out.append("!")
        else:
            out.append(numpy.dtype(op.out_types[0]).char)
    return "".join(out)


def ufunc(obj) -> dict:
    entry = {
        "name": obj.__name__,
        "nin": obj.nin,
        "nout": obj.nout,
        "types": list(obj.types),
        "default_casting": obj._default_casting,
        "scatter_op": obj._scatter_op,
        "promote_types": None,
        "dtype_types": None,
        "error_loops": {},
        "resolution": resolution(obj),
    }
    pt = getattr(obj._ops, "promote_types", None)
    if pt is not None:
        entry["promote_types"] = getattr(pt, "__name__", "unknown")
    if obj._out_ops is not None:
        entry["dtype_types"] = _ops_table(obj._out_ops)
    for typ, op in zip(obj.types, obj._ops.ops):
        if op.error_func is not None:
            try:
                op.error_func()
            except Exception as e:
                entry["error_loops"][typ] = {"error": type(e).__name__, "message": str(e)}
    return entry


def ufuncs(namespaces: dict) -> dict:
    """Every public ufunc, and the private ones a public Python function calls (``cupy.where``
    is ``_where_ufunc``, whose loops decide its result dtype): the function's manifest entry
    names them in ``internal_ufuncs``."""
    import types

    import cupy

    out = {}
    for path, names in namespaces.items():
        mod = _resolve(path)
        for n, e in names.items():
            obj = getattr(mod, n, None)
            if e["kind"] == "ufunc":
                out[f"{path}.{n}"] = ufunc(obj)
            elif e["kind"] == "function" and isinstance(obj, types.FunctionType):
                g = obj.__globals__
                private = [k for k in obj.__code__.co_names
                           if isinstance(g.get(k), cupy.ufunc) and getattr(cupy, k, None)
                           is not g[k]]  # fmt: skip
                if private:
                    e["internal_ufuncs"] = [f"{obj.__module__}.{k}" for k in private]
                    for k in private:
                        out[f"{obj.__module__}.{k}"] = ufunc(g[k])
    return out


def _string_tables(so: str):
    """The zlib-compressed string tables Cython writes into an extension module."""
    data = open(so, "rb").read()
    for m in re.finditer(rb"\x78[\x01\x5e\x9c\xda]", data):
        try:
            text = zlib.decompressobj().decompress(data[m.start() : m.start() + (1 << 22)])
        except zlib.error:
            continue
        if len(text) > 200:
            yield text


def compiled() -> dict:
    import cupy

    root = os.path.dirname(os.path.dirname(cupy.__file__))
    sos = sorted(glob.glob(os.path.join(root, "cupy", "**", "*.so"), recursive=True))
    at, messages = {}, {}
    for so in sos:
        rel = os.path.relpath(so, root)
        rel = re.sub(r"\.cpython-[^/]*\.so$", ".so", rel)
        for text in _string_tables(so):
            for m in AT_RULE.finditer(text):
                dtypes = [d.strip() for d in m.group(2).decode().split(",") if d.strip()]
                at[f"cupy.{m.group(1).decode()}"] = {
                    "dtypes": dtypes,
                    "message": m.group(0).decode(),
                    "source": rel,
                }
            for key, pat in COMPILED_MESSAGES.items():
                mm = re.search(pat, text)
                if mm and key not in messages:
                    messages[key] = {"text": mm.group(1).decode(), "source": rel}
    return {
        "ufunc_at_dtypes": at,
        "ufunc_at_note": "checked on the destination dtype, only for integer-array indices "
        "(_scatter_op_single in cupy/_core/_routines_indexing.pyx); masks and basic indices "
        "use the ufunc itself; cupyx.scatter_add uses the 'add' rule",
        "messages": messages,
    }


def _distribution() -> str:
    """The wheel that provides ``cupy`` (``cupy-cuda12x``, ``cupy-cuda13x``, ...)."""
    from importlib import metadata

    names = metadata.packages_distributions().get("cupy", [])
    return sorted(names)[0] if names else "unknown"


def build() -> dict:
    import cupy
    import numpy

    spaces = {path: namespace(path) for path in NAMESPACES}
    return {
        "about": "Generated by tools/cupy_manifest.py from the installed cupy package; do not "
        "edit (the 'observed' section is kept in that script).",
        "cupy_distribution": _distribution(),
        "cupy_version": cupy.__version__,
        "resolution_inputs": RESOLUTION_INPUTS,
        "numpy_version_at_generation": numpy.__version__,
        "namespaces": spaces,
        "classes": {name: klass(path) for name, path in CLASSES.items()},
        "ufuncs": ufuncs(spaces),
        "compiled": compiled(),
        "observed": OBSERVED,
    }


def dumps(manifest: dict) -> str:
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args(argv)
    text = dumps(build())
    if args.check:
        with open(args.out) as f:
            same = f.read() == text
        print("manifest up to date" if same else f"{args.out} differs from the installed cupy")
        return 0 if same else 1
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
