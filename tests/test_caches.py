"""``ember.clear_caches()`` (``ember/_caches.py``): every cache ember keeps in memory is
registered there by the module that owns it, is emptied by one call, and fills again on use
with the same results."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _caches
from ember.backend import jit as _jit


def _cpu_work():
    """Ops that fill the CPU-side caches; returns their results as arrays."""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    a = ember.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    prev = _jit.set_mode("off")  # NumPy's im2col fills a scratch buffer (numba's kernels,
    try:  # loaded at once where an earlier run compiled them, need none here)
        conv = F.conv2d(x, w, padding=1)
    finally:
        _jit.set_mode(prev)
    scaled = a * 2.5  # a cached scalar constant
    row = a[1]  # an indexing op

    def step(a):
        return (a * 2.5 + 1.0).relu().exp() * a

    compiled = ember.compile(step)
    compiled(a)
    _jit.wait(120)  # both rounds compute on the same path: the kernel, where numba is installed
    fused = compiled(a)  # the fused elementwise program's numba kernel
    return [t.detach().cpu().numpy() for t in (conv, scaled, row, fused)]


def test_clear_caches_empties_them_and_everything_still_works():
    first = _cpu_work()
    before = _caches.sizes()
    for name in ("scalar constants", "indexing ops", "scratch buffers (calling thread)"):
        assert before[name] > 0, name
    ember.clear_caches()
    assert all(n == 0 for n in _caches.sizes().values()), _caches.sizes()
    again = _cpu_work()
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    assert _caches.sizes()["scalar constants"] > 0  # filled again


@pytest.mark.fake_kernels
def test_gpu_caches(fake_cuda):
    rng = np.random.default_rng(0)
    a = ember.tensor(rng.standard_normal((4, 5)).astype(np.float32)).to("cuda")
    b = ember.tensor(rng.standard_normal((5, 3)).astype(np.float32)).to("cuda")

    def work():
        soft = F.softmax(a, dim=-1)  # a row kernel
        prod = a @ b  # CuPy's TF32 setting applied
        step = ember.compile(lambda a: (a * 2.0 + 1.0).relu() * a)
        step(a)
        fused = step(a)  # a fused elementwise CUDA kernel
        return [t.cpu().numpy() for t in (soft, prod, fused)]

    first = work()
    sizes = _caches.sizes()
    for name in ("CUDA kernels", "CuPy's TF32 setter", "fused elementwise CUDA kernels"):
        assert sizes[name] > 0, name
    ember.clear_caches()
    assert all(n == 0 for n in _caches.sizes().values()), _caches.sizes()
    for x, y in zip(first, work()):
        np.testing.assert_array_equal(x, y)


def test_caches_that_need_a_gpu_are_emptied_too():
    """cuDNN plans are built only on a real GPU: an entry put in each stands for one."""
    from ember.backend.kernels import conv

    conv._graphs["key"] = conv._handles[0] = object()
    assert _caches.sizes()["cuDNN plans and handles"] == 2
    ember.clear_caches()
    assert not conv._graphs and not conv._handles


# Module-level dicts that cache things, read from the source (a name that says cache, kernels,
# constants, plans, graphs or handles, bound to an empty dict): each module holding one
# registers with ember._caches. Listed here: the ones not registered yet (the list only shrinks).
UNREGISTERED: set = set()


def _cache_modules():
    import ast
    import pathlib
    import re

    root = pathlib.Path(ember.__file__).resolve().parent
    word = re.compile(r"cache|kernels|constants|plans|graphs|handles|_ops$", re.IGNORECASE)
    found = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = []
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            value = getattr(node, "value", None)
            if (
                isinstance(target, ast.Name)
                and word.search(target.id)
                and isinstance(value, ast.Dict)
                and not value.keys
            ):
                names.append(target.id)
        if names:
            rel = path.relative_to(root.parent).as_posix()
            found[rel] = ("_caches.register(" in path.read_text(encoding="utf-8"), names)
    return found


def test_every_module_level_cache_is_registered():
    found = _cache_modules()
    missing = {p: names for p, (ok, names) in found.items() if not ok and p not in UNREGISTERED}
    assert not missing, f"module-level caches without _caches.register(...): {missing}"
    stale = {p for p in UNREGISTERED if p not in found or found[p][0]}
    assert not stale, f"registered now (or gone): delete from UNREGISTERED: {stale}"
