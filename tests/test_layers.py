"""Imports point down: no ember module imports a layer above its own.

The layers are the ones ``docs/architecture.md`` draws. Every module under ``ember/`` is read
with ``ast`` (nothing is imported), and every ``import`` / ``from ... import`` statement in it,
at module level or inside a function, relative or absolute, is resolved to the ember module it
names: ``from ..functions import creation`` names ``ember.functions.creation``, ``from .. import
float32`` names the package root ``ember``. A module may import its own layer and the layers
below it. The package root ``ember`` (``ember/__init__.py``, the public surface) belongs to the
top layer, so ``import ember`` inside a lower layer is an upward import too.

``ALLOWED`` lists the upward imports allowed (none today); a new upward import fails, and so
does an entry that no longer occurs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "ember"
ROOT_PACKAGE = "ember"  # ember/__init__.py alone: a prefix for no other module

# Bottom to top. A module belongs to the layer of its longest listed prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # thread-local modes, the error classes, shape helpers, the cache registry: they import
    # nothing of ember's but each other
    (
        "base",
        ("ember._errors", "ember._config", "ember._shape", "ember._caches", "ember.return_types"),
    ),
    # Device, NumPy / CuPy, device kernels: the only modules that import an array library
    ("backend", ("ember.backend",)),
    # dtypes, the generator, Tensor (storage + autograd state), Node, repr, legacy type names,
    # the torch.cuda / torch.backends aliases
    (
        "tensor",
        (
            "ember.dtypes",
            "ember.random",
            "ember._tensor",
            "ember.storage",
            "ember._node",
            "ember._repr",
            "ember._legacy",
            "ember._aliases",
        ),
    ),
    # primitive ops: forward / infer / vjp, and apply
    ("ops", ("ember.ops",)),
    # autocast's policy tables and casts (apply's policy object, the public functions' rules)
    ("amp", ("ember.amp.autocast_mode", "ember.amp.policy", "ember.amp.custom")),
    # public functions (argument handling, promotion, then apply), ember.linalg, ember.sparse
    ("functions", ("ember.functions", "ember.linalg", "ember.sparse")),
    # the engine (it sums and seeds gradients with functions), autograd.functional, gradcheck;
    # _tensor_methods attaches the functions (and Tensor.backward) to Tensor
    ("autograd", ("ember.autograd", "ember._tensor_methods")),
    # graphs (trace, IR, passes, executor, compile), their pictures, checkpoint files (graph
    # files hold weights as safetensors); static/ is to know no module or optimizer class
    ("static", ("ember.static", "ember.viz", "ember.serialization")),
    # modules, optimizers, data loading, torch.utils-style helpers, collectives (ember.distributed),
    # function transforms (ember.func), torch.jit's face (ember.jit)
    (
        "library",
        (
            "ember.nn",
            "ember.optim",
            "ember.data",
            "ember.utils",
            "ember.amp",
            "ember.distributed",
            "ember.distributions",
            "ember.func",  # torch.func: transforms on autograd; functional_call on modules
            "ember.jit",  # torch.jit's entry points mapped onto ember.compile and graph files
            "ember.testing",  # torch.testing: assert_close, make_tensor
        ),
    ),
    # the public surface (the package root, "ember" itself) and what is built on all of it
    (
        "top",
        (
            ROOT_PACKAGE,
            "ember.__main__",
            "ember.cli",
            "ember.compat",
            "ember.models",
            "ember.onnx",
            "ember.train",
        ),
    ),
)

# (importing module, imported module) pairs allowed to point up: none. A new entry needs its
# reason in a comment, and is a debt to repay (an entry that no longer occurs fails the test).
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


FILES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer ``module`` belongs to (its longest listed prefix)."""
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (
                prefix != ROOT_PACKAGE and module.startswith(prefix + ".")
            )
            if inside and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def imported_modules(module: str, source: str | None = None, is_package: bool = False) -> set[str]:
    """The ember modules named by the import statements of ``module`` (or of ``source``, read
    as that module's text), anywhere in the file."""
    if source is None:
        path = FILES[module]
        source, is_package = path.read_text(encoding="utf-8"), path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source, module)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:  # `from pkg import submodule` names the submodule
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in FILES else source)
    return {m for m in found if m == "ember" or m.startswith("ember.")}


def upward_imports() -> set[tuple[str, str]]:
    """Every (module, imported module) pair where the imported one sits in a higher layer."""
    pairs = set()
    for module in FILES:
        own = layer_of(module)
        for target in imported_modules(module):
            if layer_of(target) > own:
                pairs.add((module, target))
    return pairs


def _describe(pairs) -> str:
    return "\n".join(
        f"  {m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
        for m, t in sorted(pairs)
    )


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in FILES if layer_of(m) < 0)
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"


def test_no_new_upward_imports():
    new = upward_imports() - ALLOWED
    assert not new, (
        "imports that point up a layer (see docs/architecture.md, 'Layers'); import from a lower "
        "layer, or move the piece you need down:\n" + _describe(new)
    )


def test_allow_list_only_shrinks():
    gone = ALLOWED - upward_imports()
    assert not gone, (
        "these allowed upward imports no longer occur; delete them from ALLOWED:\n"
        + _describe(gone)
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ..nn import functional as F", {"ember.nn.functional"}),
        ("from .. import float32", {"ember"}),
        ("from . import collate, _no_such_module", {"ember.data.collate", "ember.data"}),
        ("import ember", {"ember"}),
        ("import ember.train.trainer", {"ember.train.trainer"}),
        ("def f():\n    from ..ops.base import apply", {"ember.ops.base"}),
        ("if True:\n    from ember.optim.adam import Adam", {"ember.optim.adam"}),
        ("import numpy as np\nfrom numpy import linalg", set()),
    ],
)
def test_imports_are_read_everywhere(source, expected):
    """Relative, absolute and function-level imports all resolve to the module they name."""
    assert imported_modules("ember.data.probe", source) == expected


def test_layers_order_an_upward_import():
    assert layer_of("ember.backend.cuda") < layer_of("ember.ops.base") < layer_of("ember.nn")
    assert layer_of("ember.functions.special") < layer_of("ember.nn.functional")
    assert layer_of("ember.data.transforms") < layer_of("ember") == layer_of("ember.train")
    assert layer_of("ember.static.compile") < layer_of("ember.optim.adam")
    assert layer_of("ember.no_such_module") == -1  # the root is a prefix for nothing
