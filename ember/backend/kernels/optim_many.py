"""Optimizer updates of many parameters in one launch (PyTorch's ``foreach`` / multi-tensor
apply): the eager step's Adam, AdamW and SGD on a GPU.

``kernels/optim.py`` updates one parameter per launch; an eager step on a GPU is bound by the
host (each launch costs CuPy's Python dispatch, 13 arguments for Adam), so a Transformer's 74
parameters cost 74 launches a step. Here up to ``SLOTS`` parameters go in one launch, their
addresses and sizes passed by value as kernel arguments (no table copied to the device: a step
makes no host transfer). Each block updates ``BLOCK * ITEMS`` values of one parameter; the
blocks of slot k start at block ``starts[k]``. A thread picks its slot's arguments with
constant indices (a chain of selects), which keeps them in registers: indexing an array of the
arguments by the slot would copy it into local memory, 640-896 bytes a thread (ptxas's report,
checked in ``tests/backend/test_kernels.py``).

The arithmetic is ``kernels/optim.py``'s, the same source (``adam_source``, ``sgd_source``)
in a loop over one parameter's values: results are bit for bit those of the one-parameter
kernels (the tests compare them). Served: float32, float64 and bfloat16 parameters whose
gradient and state arrays are C-contiguous, of the parameter's dtype and shape (bfloat16 is
computed in float32 and rounded once per stored value, as the one-parameter kernel does); a
parameter it does not serve (float16, a strided gradient, SGD's first momentum step) is left to
the one-parameter kernel or the rule. Parameters are grouped by GPU, dtype and (Adam) step count.

These functions are the ``many`` attribute of the one-parameter overrides (``adam_update.many``,
``sgd_update.many``), which ``Optimizer.step`` calls once per group with every parameter it
would update on a GPU. Each returns the items it left.

>>> "ember_adam_many(unsigned long long g0" in _source("adam", (False, False), "float32")
True
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import acc_ctype, acc_dtype, address, cached, fused, half_io
from .optim import adam_scalars, adam_source, serves, sgd_scalars, sgd_source, specialize

SLOTS = 16  # parameters per launch
_SERVED = frozenset(np.dtype(d) for d in ("float32", "float64", ml_dtypes.bfloat16))
BLOCK = 256  # threads per block
ITEMS = 4  # values per thread


def _source(kind: str, variant: tuple, dtype: str) -> str:
    """The kernel of ``kind`` (``adam`` or ``sgd``) for ``variant``, storage type ``dtype``.

    float32 / float64 values are updated where they lie (the operation's ``T&`` references);
    bfloat16 ones are read into float32 locals, updated, and each output rounded once when
    stored (``half_io``), as the one-parameter kernel's ``(T)`` casts round them."""
    src = adam_source(*variant) if kind == "adam" else sgd_source(*variant)
    ins, outs, op = specialize(src, acc_dtype(dtype))
    arrays = [p.split()[1] for p in (ins + ", " + outs).split(", ") if p.split()[0] in "GT"]
    scalars = [p for p in ins.split(", ") if p.split()[0] not in "GT"]
    ctype = acc_ctype(dtype)
    half = dtype == "bfloat16"
    params = [f"unsigned long long {a}{k}" for a in arrays for k in range(SLOTS)]
    params += [f"long long n{k}" for k in range(SLOTS)]
    params += [f"long long s{k}" for k in range(SLOTS)]
    params += [f"{ctype} {p.split()[1]}" for p in scalars] + ["int count"]
    lines = [half_io("bf16")] if half else []
    lines += [
        f"typedef {ctype} T;",
        "typedef T G;",
        f'extern "C" __global__ void ember_{kind}_many({", ".join(params)}) {{',
    ]
    # the block's slot k, and slot k's arguments, picked with constant indices: an array of the
    # arguments indexed by k would live in local memory (ptxas: 768-896 bytes a thread)
    lines += ["  const long long blk = blockIdx.x;", "  int k = 0;"]
    lines += [f"  if ({j} < count && blk >= s{j}) k = {j};" for j in range(1, SLOTS)]
    for a in arrays + ["n", "s"]:
        typ = "long long" if a in ("n", "s") else "unsigned long long"
        pick = "".join(f"k == {j} ? {a}{j} : " for j in range(SLOTS - 1)) + f"{a}{SLOTS - 1}"
        lines.append(f"  const {typ} {a}_ = {pick};")
    lines += [
        f"  const long long base = (blk - s_) * (long long)blockDim.x * {ITEMS};",
        f"  for (int r = 0; r < {ITEMS}; ++r) {{",
        "    const long long i = base + r * (long long)blockDim.x + threadIdx.x;",
        "    if (i >= n_) continue;",
    ]
    for a in arrays:
        if half:
            const = "const " if a == "g" else ""
            lines.append(f"    {const}T {a} = ember_ld_bf16(((const unsigned short*){a}_)[i]);")
        else:
            ref = "const G&" if a == "g" else "T&"
            lines.append(f"    {ref} {a} = (({'const G' if a == 'g' else 'T'}*){a}_)[i];")
    lines += ["    {", "      " + op.replace("\n", "\n      ").rstrip(), "    }"]
    if half:
        lines += [
            f"    ((unsigned short*){a}_)[i] = ember_st_bf16({a});" for a in arrays if a != "g"
        ]
    lines += ["  }", "}"]
    return "\n".join(lines)


def _kernel(xp, kind: str, variant: tuple, dtype):
    name = np.dtype(dtype).name
    return cached(
        ("optim_many", kind, variant, name),
        lambda: xp.RawKernel(_source(kind, variant, name), f"ember_{kind}_many"),
    )


def _launch(xp, k, arrays: list, sizes: list, scalars: list) -> None:
    """One launch over ``len(sizes)`` slots: ``arrays`` per slot in the kernel's order."""
    per = BLOCK * ITEMS
    starts, total = [], 0
    for n in sizes:
        starts.append(total)
        total += -(-n // per)
    if not total:
        return
    pad = SLOTS - len(sizes)
    u64, i64 = np.uint64, np.int64
    args = []
    for column in zip(*arrays):  # one array kind (p, g, ...) over the slots
        args += [u64(address(a)) for a in column] + [u64(0)] * pad
    args += [i64(n) for n in sizes] + [i64(0)] * pad
    args += [i64(s) for s in starts] + [i64(total)] * pad
    k((total,), (BLOCK,), tuple(args + scalars + [np.int32(len(sizes))]))


def _device_id(a) -> int:
    return getattr(getattr(a, "device", None), "id", 0)  # a NumPy array (tests): 0


def _contiguous(arrays) -> bool:
    return all(a.flags.c_contiguous for a in arrays)


def _groups(items, take):
    """``(key, [(item, arrays)])`` of the items ``take`` accepts (it returns the key and the
    arrays, or None), and the items it left."""
    groups: dict = {}
    left = []
    for item in items:
        found = take(item)
        if found is None:
            left.append(item)
        else:
            groups.setdefault(found[0], []).append((item, found[1]))
    return groups, left


def _chunks(members):
    for at in range(0, len(members), SLOTS):
        yield members[at : at + SLOTS]


def adam_many(opt, xp, items: list, group: dict) -> list:
    """Adam / AdamW over ``items`` (``(p, g, arr, grad, state)``) in launches of up to
    ``SLOTS`` parameters; the items left."""
    if not fused(xp):
        return items
    amsgrad = bool(group["amsgrad"])
    names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())

    def take(item):
        arr, grad, state = item[2], item[3], item[4]
        if arr.dtype not in _SERVED or not serves(arr, grad, state):
            return None
        arrays = [arr, grad] + [state[n]._data for n in names]
        if not _contiguous(arrays) or any(a.shape != arr.shape for a in arrays):
            return None
        key = (_device_id(arr), arr.dtype.name, float(state["step"]._data))
        return key, arrays

    groups, left = _groups(items, take)
    variant = (amsgrad, bool(group["decoupled_weight_decay"]))
    for (dev, dtype, t), members in groups.items():
        scalars = adam_scalars(group, t, dtype)
        with xp.cuda.Device(dev):
            k = _kernel(xp, "adam", variant, dtype)
            for chunk in _chunks(members):
                # the kernel's array order: g, then p, m, v (and vmax): adam_source's
                arrays = [[c[1][1], c[1][0], *c[1][2:]] for c in chunk]
                _launch(xp, k, arrays, [c[1][0].size for c in chunk], scalars)
    return left


def sgd_many(opt, xp, items: list, group: dict) -> list:
    """SGD (plain, or with a momentum buffer after its first step) over ``items``; the items
    left."""
    if not fused(xp):
        return items
    momentum = bool(group["momentum"])

    def take(item):
        arr, grad, state = item[2], item[3], item[4]
        if arr.dtype not in _SERVED or not serves(arr, grad, state):
            return None
        arrays = [arr, grad]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:  # the first step copies the gradient: the one-parameter path
                return None
            arrays.append(buf._data)
        if not _contiguous(arrays) or any(a.shape != arr.shape for a in arrays):
            return None
        return (_device_id(arr), arr.dtype.name), arrays

    groups, left = _groups(items, take)
    variant = (momentum, momentum and bool(group["nesterov"]))
    for (dev, dtype), members in groups.items():
        scalars = sgd_scalars(group, dtype)
        with xp.cuda.Device(dev):
            k = _kernel(xp, "sgd", variant, dtype)
            for chunk in _chunks(members):
                arrays = [[c[1][1], c[1][0], *c[1][2:]] for c in chunk]  # g, p (, buf)
                _launch(xp, k, arrays, [c[1][0].size for c in chunk], scalars)
    return left


__all__ = ["SLOTS", "adam_many", "sgd_many"]
