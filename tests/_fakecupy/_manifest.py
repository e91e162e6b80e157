"""The manifest of real CuPy's API (``tests/cupy_manifest.json``, made by
``tools/cupy_manifest.py``) and signature binding against it."""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os

import ml_dtypes
import numpy as np

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    "cupy_manifest.json")  # fmt: skip

with open(PATH) as _f:
    MANIFEST = json.load(_f)

VERSION = MANIFEST["cupy_version"]
NAMESPACES = MANIFEST["namespaces"]
CLASSES = MANIFEST["classes"]
UFUNCS = MANIFEST["ufuncs"]
MESSAGES = {k: v["text"] for k, v in MANIFEST["compiled"]["messages"].items()}
AT_DTYPES = {k: v["dtypes"] for k, v in MANIFEST["compiled"]["ufunc_at_dtypes"].items()}
OBSERVED = MANIFEST["observed"]

BF16 = np.dtype(ml_dtypes.bfloat16)
_CHARS = {np.dtype(c).char: np.dtype(c) for c in "?bBhHiIlLqQefdFD"}
_CHARS["E"] = BF16
_CHARS["V"] = np.dtype("V")  # structured compare loops (equal / not_equal)


def dtype_of_char(c: str) -> np.dtype:
    """A ufunc loop's type character as a dtype (``'E'`` is ml_dtypes' bfloat16, as in CuPy)."""
    return _CHARS[c]


def members(cls: str) -> dict:
    """``{name: entry}`` of a class in the manifest (``"cupy.ndarray"``, ...)."""
    return CLASSES[cls]["members"]


def entry(namespace: str, name: str) -> dict | None:
    return NAMESPACES.get(namespace, {}).get(name)


class _Default:
    """A default value the manifest could not print (``...``)."""

    def __repr__(self) -> str:
        return "..."


@functools.cache
def signature(text: str) -> inspect.Signature | None:
    """``inspect.Signature`` from the manifest's ``"(a, b=1, *, c=None)"`` (None if unknown)."""
    if not text or text == "unknown":
        return None
    fn = ast.parse(f"def f{text}: pass").body[0]
    a = fn.args
    P = inspect.Parameter
    params = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for i, (p, d) in enumerate(zip(pos, defaults)):
        kind = P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        params.append(P(p.arg, kind, default=P.empty if d is None else _value(d)))
    if a.vararg:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(P(p.arg, P.KEYWORD_ONLY, default=P.empty if d is None else _value(d)))
    if a.kwarg:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def _value(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _Default()


def bind(qualname: str, text: str | None, args: tuple, kwargs: dict) -> None:
    """Raise CuPy's ``TypeError`` when ``args`` / ``kwargs`` do not fit the signature ``text``
    (an unknown keyword, a missing or extra argument); nothing when the signature is unknown."""
    sig = signature(text) if text else None
    if sig is None:
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        short = qualname.rsplit(".", 1)[-1]
        raise TypeError(f"{short}() {e}") from None


def method_signature(cls: str, name: str) -> str | None:
    m = members(cls).get(name)
    return None if m is None else m.get("signature")
