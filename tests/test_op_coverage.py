"""Every public function of ``ember`` (those ``ember/__init__.py`` star-imports from
``ember/functions/*``'s ``__all__``) has an OpCase in tests/ops, so the op tables' checks
(NumPy, gradients, PyTorch, ember.compile, define-and-run, ONNX) reach it; and the harness's
tables of exceptions name only what still needs them.

A case covers the function its name starts with (``sum_dim_keep`` covers ``sum``; the longest
public name wins, so ``log_softmax`` covers ``log_softmax``, not ``log``), or the one
``CASE_NAMES`` maps it to. Aliases (``ember.absolute is ember.abs``) are covered with the
function they name. ``EXEMPT`` lists what is not an op on tensors, with the reason; it may only
shrink: an exempt name that now has a case fails.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import ember
from ember.onnx.context import CONVERTERS
from ember.onnx.export import _load_converters
from tests.ops.harness import ONNX_UNSUPPORTED, XFAIL, all_cases

# Functions whose cases are named otherwise: function -> the start of its cases' names.
CASE_NAMES = {
    "logsumexp": "lse",
}

_CREATION = "creation: makes a tensor from sizes or data, no tensor input (tests/test_creation.py)"
_RANDOM = "random draws: no fixed value to compare (tests/ops/test_sampling.py, test_random_ops.py)"
_INPLACE = (
    "in-place form of a covered op: tests/ops/test_elementwise_inplace.py checks each against "
    "its out-of-place op"
)
EXEMPT = {
    # creation functions (covered by tests/test_creation.py)
    **dict.fromkeys(
        [
            "arange",
            "as_tensor",
            "empty",
            "empty_like",
            "eye",
            "from_numpy",
            "full",
            "full_like",
            "linspace",
            "logspace",
            "ones",
            "ones_like",
            "scalar_tensor",
            "tensor",
            "zeros",
            "zeros_like",
            "tril_indices",
            "triu_indices",
        ],
        _CREATION,
    ),
    # random numbers
    **dict.fromkeys(
        [
            "rand",
            "rand_like",
            "randint",
            "randint_like",
            "randn",
            "randn_like",
            "randperm",
            "bernoulli",
            "multinomial",
            "normal",
            "poisson",
            "dropout",
        ],
        _RANDOM,
    ),
    # in-place ops
    **dict.fromkeys(
        [
            "abs_",
            "ceil_",
            "cos_",
            "erf_",
            "exp_",
            "floor_",
            "log_",
            "neg_",
            "reciprocal_",
            "relu_",
            "round_",
            "rsqrt_",
            "sigmoid_",
            "sin_",
            "sqrt_",
            "tanh_",
            "trunc_",
        ],
        _INPLACE,
    ),
    # results that are Python values, not tensors (tests/ops/test_compare.py, tests/test_tensor.py)
    "allclose": "returns a Python bool (tests/ops/test_compare.py)",
    "equal": "returns a Python bool (tests/ops/test_compare.py)",
    "numel": "returns a Python int (tests/test_tensor.py)",
}


def _public_functions() -> dict:
    """name -> function, for every name ember/__init__.py star-imports from ember.functions."""
    tree = ast.parse((Path(ember.__file__).parent / "__init__.py").read_text())
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("functions")
            and any(a.name == "*" for a in node.names)
        ):
            mod = importlib.import_module(f"ember.{node.module}")
            for name in mod.__all__:
                out[name] = getattr(ember, name)
    return out


def _covered(functions: dict, cases: list) -> set:
    """The public names a case covers, aliases included."""
    names = set()
    for case in cases:
        starts = [f for f in functions if case.name == f or case.name.startswith(f + "_")]
        if starts:
            names.add(max(starts, key=len))
    for fn, stem in CASE_NAMES.items():
        if any(c.name == stem or c.name.startswith(stem + "_") for c in cases):
            names.add(fn)
    objs = {id(functions[n]) for n in names}
    return {n for n, f in functions.items() if id(f) in objs}


def test_every_public_function_has_an_op_case():
    functions = _public_functions()
    assert len(functions) > 200, "no public functions found: is the star-import parse right?"
    covered = _covered(functions, all_cases())
    missing = sorted(set(functions) - covered - EXEMPT.keys())
    assert not missing, (
        f"public functions with no OpCase in tests/ops: {missing}; add a case to the family's "
        "table (tests/ops/test_<family>.py), or, for what is not an op on tensors, an entry in "
        "EXEMPT saying why"
    )


def test_exemptions_only_shrink():
    functions = _public_functions()
    covered = _covered(functions, all_cases())
    stale = sorted(n for n in EXEMPT if n not in functions)
    assert not stale, f"EXEMPT names that are not public functions any more: {stale}"
    now_covered = sorted(n for n in EXEMPT if n in covered)
    assert not now_covered, f"EXEMPT names that now have an OpCase: remove them: {now_covered}"
    unused = sorted(fn for fn in CASE_NAMES if fn not in functions)
    assert not unused, f"CASE_NAMES entries for names that are not public functions: {unused}"


def test_harness_tables_name_what_exists():
    """Each XFAIL entry names a case, each ONNX_UNSUPPORTED op still has no converter."""
    ids = {c.id for c in all_cases()}
    stale = sorted(k for k in XFAIL if k[1] not in ids)
    assert not stale, f"XFAIL entries for cases that do not exist: {stale}"
    assert all(k[0] in ("compiled", "static", "onnx") for k in XFAIL)
    _load_converters()
    converted = {cls.__name__ for cls in CONVERTERS}
    done = sorted(ONNX_UNSUPPORTED.keys() & converted)
    assert not done, f"ONNX_UNSUPPORTED ops that have a converter now: remove them: {done}"
