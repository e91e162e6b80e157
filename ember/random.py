"""Random number generation: ``manual_seed``, ``seed``, ``Generator``.

One default generator (NumPy's PCG64) feeds every random op on the CPU unless a ``generator=``
is given. On a GPU, random tensors are drawn there, by one CuPy (cuRAND) generator per GPU
(``ember.backend.random_cuda``), not on the host and copied. ``manual_seed`` reseeds all of
them, so runs are reproducible on each device (the CPU and the GPU give different numbers for
one seed, as in PyTorch). ``uniform``, ``normal``, ``integers`` and ``permutation`` below are
the device-aware draws that random ops use.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(2)
>>> _ = ember.manual_seed(0); b = ember.rand(2)
>>> a.tolist() == b.tolist()
True
"""

from __future__ import annotations

import contextlib

import numpy as np


class Generator:
    """A random number generator with PyTorch's ``manual_seed`` / ``get_state`` surface.

    >>> import ember
    >>> g = ember.Generator().manual_seed(1)
    >>> ember.randn(2, generator=g).shape
    ember.Size([2])
    """

    def __init__(self, device="cpu") -> None:
        from .backend import Device

        self.device = Device(device)
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        self._gpu_state = None  # a cuda generator's CuPy RandomState, made on first draw

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns the generator so ``Generator().manual_seed(0)`` chains."""
        self._seed = int(seed) % (2**64)
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        self._gpu_state = None
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy and return the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % (2**63)))
        return self._seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator's full state as a 1-D ``uint8`` CPU tensor of ``STATE_BYTES`` (56) bytes,
        as PyTorch's ByteTensor (whose CPU state is 5056 bytes: ember's PCG64 needs fewer).

        The bytes are seven little-endian uint64 words: the seed, PCG64's 128-bit state and
        increment (low word first), its buffered-uint32 flag and value. For a cuda generator
        only the seed counts: CuPy's cuRAND state cannot be read back, so ``set_state``
        restarts it from the seed.

        >>> import ember
        >>> g = ember.Generator().manual_seed(3); s = g.get_state()
        >>> s.dtype, s.shape
        (ember.uint8, ember.Size([56]))
        >>> a = ember.rand(2, generator=g); _ = g.set_state(s)
        >>> a.tolist() == ember.rand(2, generator=g).tolist()
        True
        """
        from ._tensor import Tensor

        bg = self.rng.bit_generator.state
        words = [
            self._seed,
            *_split128(bg["state"]["state"]),
            *_split128(bg["state"]["inc"]),
            int(bg["has_uint32"]),
            int(bg["uinteger"]),
        ]
        return Tensor._make(np.array(words, dtype="<u8").view(np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state`` (the same numbers follow); returns the generator.
        Also takes the dict that ember's ``get_state`` returned before it gave tensors (older
        checkpoints). A tensor that is not uint8 or not ``STATE_BYTES`` long is refused.

        >>> import ember
        >>> g = ember.Generator()
        >>> g.set_state(ember.zeros(3, dtype=ember.uint8))
        Traceback (most recent call last):
        ...
        ember._errors.EmberError: Generator.set_state: RNG state is wrong size: expected 56 bytes...
        """
        return self._restore(new_state, "Generator.set_state")

    def _restore(self, new_state, where: str) -> Generator:
        self._seed, self.rng.bit_generator.state = _decode(new_state, where)
        self._gpu_state = None
        return self


STATE_BYTES = 56  # seven uint64 words: seed, PCG64 state (2), increment (2), has_uint32, uinteger


def _split128(v: int) -> tuple[int, int]:
    return v & (2**64 - 1), v >> 64


def _decode(state, where: str) -> tuple[int, dict]:
    """(seed, PCG64 bit-generator state) from a ``get_state`` tensor or an old-style dict."""
    from ._errors import DTypeError, EmberError
    from ._tensor import Tensor
    from .dtypes import uint8

    if isinstance(state, dict):  # ember's states before they were tensors
        if "bit_generator" not in state or "seed" not in state:
            raise EmberError(f"{where}: expected a state from get_state(), got a dict without it")
        return int(state["seed"]), state["bit_generator"]
    if not isinstance(state, Tensor):
        raise DTypeError(f"{where}: expected a ByteTensor (uint8), got {type(state).__name__}")
    if state.dtype != uint8:
        raise DTypeError(f"{where}: RNG state must be a ByteTensor (uint8), got {state.dtype}")
    data = np.ascontiguousarray(state.detach().cpu().numpy()).reshape(-1)
    if data.size != STATE_BYTES:
        raise EmberError(
            f"{where}: RNG state is wrong size: expected {STATE_BYTES} bytes (a state from "
            f"get_state()), got {data.size}"
        )
    w = [int(x) for x in data.view("<u8")]
    bg = {
        "bit_generator": "PCG64",
        "state": {"state": w[1] | w[2] << 64, "inc": w[3] | w[4] << 64},
        "has_uint32": w[5],
        "uinteger": w[6],
    }
    return w[0], bg


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and the GPU's, when CuPy is loaded).

    >>> import ember
    >>> ember.manual_seed(42).initial_seed()
    42
    """
    default_generator.manual_seed(seed)
    from .backend import random_cuda

    random_cuda.seed_all(seed)
    return default_generator


def seed() -> int:
    """Seed the default generator from fresh entropy; returns the seed.

    >>> import ember
    >>> s = ember.seed(); s == ember.initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state: a 1-D ``uint8`` CPU tensor (see ``Generator.get_state``).

    >>> import ember
    >>> state = ember.get_rng_state(); a = ember.rand(2)
    >>> ember.set_rng_state(state); a.tolist() == ember.rand(2).tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore a state from ``get_rng_state`` (a uint8 tensor; ember's older dict states are
    taken too).

    >>> import ember
    >>> ember.set_rng_state(ember.zeros(56))
    Traceback (most recent call last):
    ...
    ember._errors.DTypeError: set_rng_state: RNG state must be a ByteTensor (uint8), got ...
    """
    default_generator._restore(new_state, "set_rng_state")


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True):
    """Run a block and then put the default generator's state back.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> with ember.random.fork_rng():
    ...     _ = ember.rand(3)
    >>> a = ember.rand(1); _ = ember.manual_seed(0); a.tolist() == ember.rand(1).tolist()
    True
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def rng(generator: Generator | None = None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (or the default one)."""
    return (generator or default_generator).rng


# -- device-aware draws: on the CPU from NumPy, on a GPU from CuPy's cuRAND ----------------------


def _host_float(g: np.random.Generator, kind: str, shape: tuple, np_dtype) -> np.ndarray:
    native = np_dtype if np_dtype in (np.float32, np.float64) else np.float32
    if kind == "uniform":
        out = g.random(shape, dtype=native)
    else:
        out = g.standard_normal(shape, dtype=native)
    return out.astype(np_dtype, copy=False)


def _draw(kind: str, shape: tuple, np_dtype, device, generator, low=0, high=None):
    from .backend import CPU, Device, to_device

    dev = CPU if device is None else Device(device)
    np_dtype = np.dtype(np_dtype)
    if dev.type == "cpu" or (generator is not None and generator.device.type == "cpu"):
        # the CPU, or a CPU generator asked for a GPU tensor: draw on the host, copy over
        g = rng(generator)
        if kind in ("uniform", "normal"):
            out = _host_float(g, kind, shape, np_dtype)
        elif kind == "integers":
            out = g.integers(low, high, size=shape).astype(np_dtype)
        else:
            out = g.permutation(high).astype(np_dtype)
        return out if dev.type == "cpu" else to_device(out, dev)
    from .backend import cuda, random_cuda

    cp = cuda.xp()
    index = cuda.resolve(dev.index)
    if generator is None:
        rs = random_cuda.state(cp, index)
    else:
        if generator._gpu_state is None:
            gi = cuda.resolve(generator.device.index)
            generator._gpu_state = (gi, random_cuda.new_state(cp, gi, generator._seed))
        gi, rs = generator._gpu_state
        if gi != index:
            from ._errors import DeviceError

            raise DeviceError(
                f"random: a generator on cuda:{gi} cannot draw a tensor for cuda:{index}"
            )
    return random_cuda.draw(cp, rs, index, kind, shape, np_dtype, low, high)


def uniform(shape: tuple, np_dtype, device=None, generator: Generator | None = None):
    """An array of uniform [0, 1) numbers of ``shape`` and NumPy dtype ``np_dtype``, drawn on
    ``device`` (a GPU draws with cuRAND there; float16 / bfloat16 are drawn as float32).

    >>> import ember, numpy as np
    >>> ember.random.uniform((2, 3), np.float32).shape
    (2, 3)
    """
    return _draw("uniform", tuple(shape), np_dtype, device, generator)


def normal(shape: tuple, np_dtype, device=None, generator: Generator | None = None):
    """An array of standard normal numbers, drawn on ``device`` (see ``uniform``).

    >>> import ember, numpy as np
    >>> ember.random.normal((4,), np.float64).dtype
    dtype('float64')
    """
    return _draw("normal", tuple(shape), np_dtype, device, generator)


def integers(low: int, high: int, shape: tuple, np_dtype, device=None, generator=None):
    """An array of random integers in [low, high), drawn on ``device``.

    >>> import ember, numpy as np
    >>> bool((ember.random.integers(0, 3, (10,), np.int64) < 3).all())
    True
    """
    return _draw("integers", tuple(shape), np_dtype, device, generator, int(low), int(high))


def permutation(n: int, np_dtype, device=None, generator: Generator | None = None):
    """A random permutation of 0..n-1, drawn on ``device``.

    >>> import ember, numpy as np
    >>> sorted(ember.random.permutation(4, np.int64).tolist())
    [0, 1, 2, 3]
    """
    return _draw("permutation", (int(n),), np_dtype, device, generator, 0, int(n))
