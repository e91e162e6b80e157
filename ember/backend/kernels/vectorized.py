"""Elementwise CUDA kernels that move 16 bytes per memory access.

CuPy's ``ElementwiseKernel`` gives each thread one element. For 2-byte values a warp then
loads 64 bytes at a time, and an H200 ran ember's bfloat16 ReLU over 25M values at about
0.8 TB/s (120 us), where PyTorch's vectorized kernel took 25 us. ``Vectorized`` runs the same
kernel text (an ``ElementwiseKernel``'s parameter strings and operation) as a ``RawKernel``
in which each thread reads ``VEC`` neighbouring elements of every full-size operand as one
aligned 16-byte struct, runs the operation on each, and writes its outputs the same way.

Operands it takes, as the output's shape sees them:

- full: the output's shape, C-contiguous, aligned to the vector's bytes (vector loads);
- one value: a 0-d or size-1 array (element 0);
- trailing: a C-contiguous array whose shape is the output's last axes (a bias: ``i % m``);
- leading: the output's first axes followed by ones (a per-row value: ``i / m``);
- rows: the output's shape with a contiguous last axis but any other strides (a transposed
  view: attention's heads), at most four axes; vector loads from each row's own place.

Anything else (a strided last axis, a misaligned slice, another broadcast) makes ``run`` return
False, and the caller launches its ``ElementwiseKernel``, which takes any layout. Outputs
must be full. An output the operation reads (``out = out + x``) is loaded first.

>>> v = Vectorized("float32 x, float32 y", "float32 z", "z = x + y", "ember_add")
>>> v.run(np, np.ones(4, np.float32), np.ones(4, np.float32), np.empty(4, np.float32))
False
"""

from __future__ import annotations

import re

import numpy as np

from . import address, fused

BLOCK = 256  # threads per block; a grid-stride loop covers any size
MAX_BLOCKS = 65535
ROW_AXES = 3  # axes in front of the last that a rows operand may have
MAX_PLANS = 4096  # layouts remembered per kernel (forgotten all at once beyond)

# the dtypes these kernels' parameters take: 16-bit floats as their bits, ReLU's wider bits
_CTYPE = {
    "bool": "bool",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float32": "float",
    "float64": "double",
}


def ctype(dtype) -> str:
    """The C type of a dtype in these kernels' sources.

    >>> ctype("uint16"), ctype(np.float64)
    ('unsigned short', 'double')
    """
    return _CTYPE[np.dtype(dtype).name]


def _params(spec: str) -> list[tuple[np.dtype, str]]:
    out = []
    for p in spec.split(","):
        words = p.split()
        if len(words) != 2 or words[0] not in _CTYPE:
            raise ValueError(f"Vectorized: parameter {p.strip()!r} is not '<dtype> <name>'")
        out.append((np.dtype(words[0]), words[1]))
    return out


def _reads(operation: str, name: str) -> bool:
    """Whether ``operation`` reads ``name`` (other than assigning it)."""
    rest = re.sub(rf"\b{name}\s*=(?!=)", "", operation)
    return re.search(rf"\b{name}\b", rest) is not None


def _mode(a, shape: tuple, n: int):
    """``(mode, m)`` of an input (module docstring), or None where no mode serves it."""
    if a.shape == shape and a.flags.c_contiguous:
        return "v", 0
    if a.size == 1:
        return "s", 0
    if a.shape == shape and a.strides[-1] == a.itemsize and len(shape) <= 1 + ROW_AXES:
        return "r", 0
    if not a.flags.c_contiguous or a.ndim > len(shape) or a.size == 0:
        return None
    padded = (1,) * (len(shape) - a.ndim) + tuple(a.shape)
    lead = 0
    while padded[lead] == 1:
        lead += 1
    if padded[lead:] == shape[lead:]:
        return "t", a.size
    end = len(padded)
    while padded[end - 1] == 1:
        end -= 1
    if padded[:end] == shape[:end]:
        return "l", n // a.size
    return None


class Vectorized:
    """An elementwise kernel over C-contiguous operands, 16 bytes per access (module docstring).

    ``in_params`` / ``out_params`` are an ``ElementwiseKernel``'s, with concrete dtypes
    (``"uint16 x0, float32 x1"``; 16-bit floats travel as their ``uint16`` bits), and
    ``operation`` its per-element code, which may use ``i``, the element's index.
    """

    def __init__(
        self, in_params: str, out_params: str, operation: str, name: str, preamble: str = ""
    ) -> None:
        self.ins, self.outs = _params(in_params), _params(out_params)
        self.operation, self.name, self.preamble = operation, name, preamble
        self.loads = tuple(_reads(operation, name) for _, name in self.outs)
        self._kernels: dict = {}
        self._plans: dict = {}  # (xp, each operand's shape, strides, dtype) -> launch plan

    def source(self, modes: tuple, vec: int, wide: bool) -> str:
        """The RawKernel source for the inputs' ``modes`` and ``vec`` elements a thread.

        >>> v = Vectorized("uint16 x", "uint16 y", "y = x;", "ember_copy")
        >>> src = v.source(("v",), 8, False)
        >>> "struct alignas(16) ember_vec_2" in src and "ember_copy(" in src
        True
        """
        index = "long long" if wide else "unsigned int"
        full = [dt for (dt, _), m in zip(self.ins, modes) if m in "vr"]
        full += [dt for dt, _ in self.outs]
        rows = "r" in modes
        head = [self.preamble, f"typedef {index} I;"]
        for size in sorted({dt.itemsize for dt in full}):
            ctypes = sorted({_CTYPE[dt.name] for dt in full if dt.itemsize == size})
            for c in ctypes:
                tag = f"{size}_{c.replace(' ', '_')}" if len(ctypes) > 1 else str(size)
                head.append(f"struct alignas({size * vec}) ember_vec_{tag} {{ {c} v[{vec}]; }};")

        def vtype(dt):
            c = _CTYPE[dt.name]
            n_same = len({_CTYPE[d.name] for d in full if d.itemsize == dt.itemsize})
            return (
                f"ember_vec_{dt.itemsize}_{c.replace(' ', '_')}"
                if n_same > 1
                else (f"ember_vec_{dt.itemsize}")
            )

        params, extents, strided = [], [], []
        for (dt, name), m in zip(self.ins, modes):
            if m == "r":  # a view's first element, passed as an address (it is no array)
                params.append(f"long long {name}_a")
                strided.append(name)
            else:
                params.append(f"const {_CTYPE[dt.name]}* {name}_p")
            if m in "tl":
                extents.append(name)
        params += [f"{_CTYPE[dt.name]}* {name}_p" for dt, name in self.outs]
        params += ["long long n_"] + [f"long long {name}_m" for name in extents]
        if rows:  # the row length and the outer sizes, then each rows operand's strides
            params += ["long long row_", "long long d1_", "long long d2_"]
            params += [f"long long {name}_s{a}" for name in strided for a in range(ROW_AXES)]

        def offset(index: str) -> list[str]:
            """Each rows operand's element offset ``{name}_o`` of flat element ``index``."""
            lines = [
                f"const long long r_ = (long long)({index}) / row_;",
                f"const long long c_ = (long long)({index}) - r_ * row_;",
                "const long long i2_ = r_ % d2_, i1_ = (r_ / d2_) % d1_, i0_ = r_ / d2_ / d1_;",
            ]
            for name in strided:
                lines.append(
                    f"const long long {name}_o = i0_ * {name}_s0 + i1_ * {name}_s1 "
                    f"+ i2_ * {name}_s2 + c_;"
                )
            return lines

        def element(vector: bool) -> list[str]:
            lines = []
            for (dt, name), m in zip(self.ins, modes):
                c = _CTYPE[dt.name]
                at = {"v": "i", "s": "0", "t": f"i % (I){name}_m", "l": f"i / (I){name}_m"}.get(
                    m, f"{name}_o"
                )
                src = f"{name}_v.v[j]" if vector and m in "vr" else f"{name}_p[{at}]"
                lines.append(f"const {c} {name} = {src};")
            for (dt, name), load in zip(self.outs, self.loads):
                c = _CTYPE[dt.name]
                src = (f"{name}_v.v[j]" if vector else f"{name}_p[i]") if load else "0"
                lines.append(f"{c} {name} = {src};")
            lines += ["{", self.operation, "}"]
            for _, name in self.outs:
                lines.append(f"{name}_v.v[j] = {name};" if vector else f"{name}_p[i] = {name};")
            return lines

        body = [f'extern "C" __global__ void {self.name}({", ".join(params)}) {{']
        for (dt, name), m in zip(self.ins, modes):
            if m == "r":
                body.append(
                    f"const {_CTYPE[dt.name]}* {name}_p = (const {_CTYPE[dt.name]}*){name}_a;"
                )
        body += [
            "const I n = (I)n_;",
            f"const I nv = n / {vec};",
            "const I step = (I)blockDim.x * gridDim.x;",
            "for (I k = (I)blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += step) {",
        ]
        if rows:
            body += offset(f"k * {vec}")
        for (dt, name), m in zip(self.ins, modes):
            if m == "v":
                body.append(f"const {vtype(dt)} {name}_v = ((const {vtype(dt)}*){name}_p)[k];")
            elif m == "r":
                body.append(
                    f"const {vtype(dt)} {name}_v = *(const {vtype(dt)}*)({name}_p + {name}_o);"
                )
        for (dt, name), load in zip(self.outs, self.loads):
            init = f" = (({vtype(dt)}*){name}_p)[k]" if load else ""
            body.append(f"{vtype(dt)} {name}_v{init};")
        body += ["#pragma unroll", f"for (int j = 0; j < {vec}; ++j) {{"]
        body += [f"const I i = k * {vec} + j; (void)i;"] + element(True) + ["}"]
        for dt, name in self.outs:
            body.append(f"(({vtype(dt)}*){name}_p)[k] = {name}_v;")
        body += ["}"]
        tail = (
            f"for (I i = nv * {vec} + (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)"
        )
        body += [tail + " {"] + (offset("i") if rows else []) + element(False) + ["}", "}"]
        return "\n".join(head + body) + "\n"

    def run(self, xp, *arrays) -> bool:
        """Launch on ``arrays`` (the inputs, then every output), or return False where ``xp``
        builds no kernels or an operand's layout is not served (module docstring). A 16-bit
        float array may stand for a ``uint16`` parameter (the kernel reads its bits)."""
        key = (id(xp), *[(a.shape, a.strides, a.dtype) for a in arrays])
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            plan = self._plans[key] = self._plan(xp, arrays)
        if plan is None:
            return False
        k, grid, tail, aligned, strided = plan
        for i, width in aligned:
            if address(arrays[i]) % width:
                return False
        if strided:
            arrays = list(arrays)
            for i in strided:
                arrays[i] = np.int64(address(arrays[i]))
        k((grid,), (BLOCK,), (*arrays, *tail))
        return True

    def _plan(self, xp, arrays):
        """``(kernel, grid, trailing arguments, [(operand, alignment)], [rows operands])`` for
        operands of these shapes, strides and dtypes (the pointers are checked per call), or
        None."""
        if not fused(xp) or len(arrays) != len(self.ins) + len(self.outs):
            return None
        outs = arrays[len(self.ins) :]
        shape, n = tuple(outs[0].shape), outs[0].size
        if n == 0:
            return None
        modes, extents, full = [], [], []
        for i, (a, (dt, _)) in enumerate(zip(arrays, self.ins)):
            if a.dtype.itemsize != dt.itemsize:
                return None
            mode = _mode(a, shape, n)
            if mode is None:
                return None
            modes.append(mode[0])
            if mode[0] in "vr":
                full.append(i)
            elif mode[0] in "tl":
                extents.append(np.int64(mode[1]))
        for i, (o, (dt, _)) in enumerate(zip(outs, self.outs), len(self.ins)):
            if o.dtype.itemsize != dt.itemsize or tuple(o.shape) != shape:
                return None
            if not o.flags.c_contiguous:
                return None
            full.append(i)
        vec = 16 // max(arrays[i].itemsize for i in full)
        if "r" in modes:
            rows = self._rows(arrays, modes, shape, vec)
            if rows is None:
                return None
            extents += rows
        wide = n >= 2**31 - 2 * BLOCK * vec
        key = (id(xp), tuple(modes), vec, wide)
        k = self._kernels.get(key)
        if k is None:
            k = self._kernels[key] = xp.RawKernel(self.source(tuple(modes), vec, wide), self.name)
        grid = max(1, min(-(-(n // vec) // BLOCK), MAX_BLOCKS))
        aligned = [(i, vec * arrays[i].itemsize) for i in full]
        strided = [i for i, m in enumerate(modes) if m == "r"]
        return k, grid, (np.int64(n), *extents), aligned, strided

    @staticmethod
    def _rows(arrays, modes, shape: tuple, vec: int):
        """The rows operands' kernel arguments (row length, outer sizes, each one's strides in
        elements), or None where a vector would leave its row or lose its alignment."""
        row = shape[-1]
        outer = (1,) * (1 + ROW_AXES - len(shape)) + tuple(shape[:-1])
        if row % vec:
            return None
        args = [np.int64(row), np.int64(outer[1]), np.int64(outer[2])]
        for a, m in zip(arrays, modes):
            if m != "r":
                continue
            steps = [s // a.itemsize for s in a.strides[:-1]]
            if any(s % a.itemsize or (s // a.itemsize) % vec for s in a.strides[:-1]):
                return None
            args += [np.int64(s) for s in [0] * (ROW_AXES - len(steps)) + steps]
        return args


__all__ = ["Vectorized", "ctype"]
