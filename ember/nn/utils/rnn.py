"""Variable-length sequences for recurrent networks (PyTorch's ``torch.nn.utils.rnn``).

A :class:`PackedSequence` holds a batch of sequences of different lengths without padding:
``data`` stacks, time step after time step, the elements of the sequences still running at
that step (longest sequences first), and ``batch_sizes`` (an int64 CPU tensor) says how many
there are at each step. Every conversion is one gather (``index_select``) whose indices are
computed on the host from the lengths, so gradients flow back to the padded or packed input.

>>> import ember
>>> from ember.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> a, b = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0, 5.0])
>>> packed = pack_sequence([a, b])
>>> packed.data, packed.batch_sizes
(tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded
tensor([[1., 2., 3.],
        [4., 5., 0.]])
>>> lengths
tensor([3, 2])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from ..._errors import ShapeError
from ..._tensor import Tensor
from ...dtypes import float16, float32, float64, int8, int16, int32, int64, uint8
from ...functions.creation import full, tensor
from ...functions.shape import cat
from ...functions.sorting import argsort

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


def _host_ints(values, name: str, fn: str) -> np.ndarray:
    """``values`` (a list or a tensor on any device) as a 1-D int64 NumPy array."""
    if isinstance(values, Tensor):
        if values.ndim != 1:
            raise ShapeError(
                f"{fn}: '{name}' should be a 1D int64 tensor, but got a {values.ndim}D tensor "
                f"of shape {tuple(values.shape)}"
            )
        return np.asarray(values.tolist(), dtype=np.int64).reshape(-1)
    array = np.asarray(list(values), dtype=np.int64)
    if array.ndim != 1:
        raise ShapeError(f"{fn}: '{name}' should be a list of ints, got shape {array.shape}")
    return array


def _cpu_int64(values) -> Tensor:
    return tensor(np.asarray(values, dtype=np.int64), dtype=int64, device="cpu")


def _gather_rows(source: Tensor, index: np.ndarray, padding_value: float | None = None):
    """``source`` rows (dim 0) at ``index``; with ``padding_value``, index ``len(source)``
    picks a row filled with it."""
    if padding_value is not None:
        pad = full((1, *source.shape[1:]), padding_value, dtype=source.dtype, device=source.device)
        source = cat([source, pad], 0)
    idx = tensor(index.reshape(-1), dtype=int64, device=source.device)
    return source.index_select(0, idx)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (None stays None).

    >>> import ember
    >>> invert_permutation(ember.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    return argsort(permutation)


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """A batch of variable-length sequences packed time step by time step (a named tuple
    ``(data, batch_sizes, sorted_indices, unsorted_indices)``), as PyTorch's.

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`. ``sorted_indices``
    maps the packed (longest-first) batch order to the original one (None when the input was
    already sorted); ``unsorted_indices`` is its inverse. ``batch_sizes`` stays on the CPU.

    >>> import ember
    >>> p = PackedSequence(ember.ones(3, 2), ember.tensor([2, 1]))
    >>> p.batch_sizes, p.sorted_indices is None
    (tensor([2, 1]), True)
    >>> p.double().data.dtype
    ember.float64
    """

    def __new__(
        cls,
        data: Tensor | tuple,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError(
                    "PackedSequence: Expected data to be a list or tuple of length 2 "
                    "(data, batch_sizes) when batch_sizes is not given"
                )
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "PackedSequence: batch_sizes should always be on CPU. Instances of "
                "PackedSequence should never be created manually. They should be instantiated "
                "by functions like pack_sequence and pack_padded_sequences in nn.utils.rnn."
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the indices follow ``data``'s device, ``batch_sizes`` stays put."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [
            None if t is None else t.to(data.device)
            for t in (self.sorted_indices, self.unsorted_indices)
        ]
        return type(self)(data, self.batch_sizes, *indices)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move ``data`` (and the indices) to a GPU."""
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self) -> PackedSequence:
        """Move ``data`` (and the indices) to the CPU."""
        return self.to("cpu")

    def double(self) -> PackedSequence:
        """Cast ``data`` to float64."""
        return self.to(dtype=float64)

    def float(self) -> PackedSequence:
        """Cast ``data`` to float32."""
        return self.to(dtype=float32)

    def half(self) -> PackedSequence:
        """Cast ``data`` to float16."""
        return self.to(dtype=float16)

    def long(self) -> PackedSequence:
        """Cast ``data`` to int64."""
        return self.to(dtype=int64)

    def int(self) -> PackedSequence:
        """Cast ``data`` to int32."""
        return self.to(dtype=int32)

    def short(self) -> PackedSequence:
        """Cast ``data`` to int16."""
        return self.to(dtype=int16)

    def char(self) -> PackedSequence:
        """Cast ``data`` to int8."""
        return self.to(dtype=int8)

    def byte(self) -> PackedSequence:
        """Cast ``data`` to uint8."""
        return self.to(dtype=uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU."""
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        """Always False (ember has no pinned host memory)."""
        return False


def _sorted_order(lengths: np.ndarray, enforce_sorted: bool, fn: str) -> np.ndarray | None:
    if enforce_sorted:
        if np.any(lengths[1:] > lengths[:-1]):
            raise ShapeError(
                f"{fn}: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
                f"do not need ONNX exportability (lengths {lengths.tolist()})."
            )
        return None
    return np.argsort(-lengths, kind="stable")


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    whose true lengths are ``lengths``.

    With ``enforce_sorted`` (default) the lengths must be in decreasing order; otherwise the
    batch is sorted here and the order kept in ``sorted_indices``.

    >>> import ember
    >>> x = ember.tensor([[1, 2, 0], [3, 4, 5]])
    >>> pack_padded_sequence(x, [2, 3], batch_first=True, enforce_sorted=False)
    PackedSequence(data=tensor([3, 1, 4, 2, 5]), batch_sizes=tensor([2, 2, 1]), \
sorted_indices=tensor([1, 0]), unsorted_indices=tensor([1, 0]))
    """
    fn = "pack_padded_sequence"
    lengths = _host_ints(lengths, "lengths", fn)
    if input.numel() == 0:
        raise ShapeError(f"{fn}: Cannot pack empty tensors (input shape {tuple(input.shape)}).")
    if input.ndim < 2:
        raise ShapeError(
            f"{fn}: expected input of at least 2 dimensions (T, B, *), got shape "
            f"{tuple(input.shape)}"
        )
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if len(lengths) != batch:
        raise ShapeError(
            f"{fn}: Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
            f"(batch_size={batch}, input shape {tuple(input.shape)})"
        )
    order = _sorted_order(lengths, enforce_sorted, fn)
    sorted_lengths = lengths if order is None else lengths[order]
    if sorted_lengths[-1] <= 0:
        raise ShapeError(
            f"{fn}: Length of all samples has to be greater than 0, but found an element in "
            f"'lengths' that is <= 0 (lengths {lengths.tolist()})"
        )
    if sorted_lengths[0] > steps:
        raise ShapeError(
            f"{fn}: lengths must not exceed the sequence length {steps} of the input (shape "
            f"{tuple(input.shape)}), got lengths {lengths.tolist()}"
        )
    batch_sizes = (sorted_lengths[None, :] > np.arange(sorted_lengths[0])[:, None]).sum(1)
    original = np.arange(batch) if order is None else order
    # packed row r is (time t, sorted batch slot b): read row (t, original[b]) of the input
    t = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    b = original[np.concatenate([np.arange(n) for n in batch_sizes])]
    flat = b * steps + t if batch_first else t * batch + b
    data = _gather_rows(input.reshape(steps * batch, *input.shape[2:]), flat)
    sorted_indices = None
    if order is not None:
        sorted_indices = tensor(order, dtype=int64, device=input.device)
    return PackedSequence(data, _cpu_int64(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: returns ``(padded, lengths)`` with the padded batch
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) in the original batch order and the
    lengths as an int64 CPU tensor. ``total_length`` pads to that many steps.

    >>> import ember
    >>> packed = pack_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])])
    >>> pad_packed_sequence(packed, padding_value=-1.0, total_length=3)
    (tensor([[ 1.,  3.],
            [ 2., -1.],
            [-1., -1.]]), tensor([2, 1]))
    """
    fn = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{fn}: expected a PackedSequence, got {type(sequence).__name__}")
    batch_sizes = _host_ints(sequence.batch_sizes, "batch_sizes", fn)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    batch = int(batch_sizes[0])
    data = sequence.data
    sorted_lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    offsets = np.zeros(steps, dtype=np.int64)
    offsets[1 : len(batch_sizes)] = np.cumsum(batch_sizes)[:-1]
    # index[t, b]: the packed row of (time t, sorted slot b), or the padding row
    time = np.arange(steps)[:, None]
    index = np.where(
        time < sorted_lengths[None, :], offsets[:, None] + np.arange(batch), data.shape[0]
    )
    if sequence.unsorted_indices is not None:
        unsorted = _host_ints(sequence.unsorted_indices, "unsorted_indices", fn)
        index, lengths = index[:, unsorted], sorted_lengths[unsorted]
    else:
        lengths = sorted_lengths
    if batch_first:
        index = index.T
    padded = _gather_rows(data, index, padding_value)
    padded = padded.reshape(*index.shape, *data.shape[1:])
    return padded, _cpu_int64(lengths)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of shapes ``(L_i, *)`` into one ``(T, B, *)`` tensor (``(B, T, *)``
    with ``batch_first``), filling with ``padding_value`` on the ``'right'`` (default) or the
    ``'left'``. The result has the first sequence's dtype.

    >>> import ember
    >>> pad_sequence([ember.tensor([1, 2, 3]), ember.tensor([4])], batch_first=True,
    ...              padding_side="left")
    tensor([[1, 2, 3],
            [0, 0, 4]])
    """
    fn = "pad_sequence"
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"{fn}: Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    elif not isinstance(sequences, Iterable):
        raise TypeError(
            f"{fn}: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences).__name__}"
        )
    sequences = list(sequences)
    if not sequences:
        raise ValueError(f"{fn}: received an empty list of sequences")
    first = sequences[0]
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"{fn}: sequence {i} is a {type(s).__name__}, not a Tensor")
        if s.ndim == 0 or tuple(s.shape[1:]) != tuple(first.shape[1:]):
            raise ShapeError(
                f"{fn}: every sequence must have shape (L, *) with the same trailing "
                f"dimensions, got {tuple(first.shape)} for sequence 0 and {tuple(s.shape)} for "
                f"sequence {i}"
            )
    lengths = [s.shape[0] for s in sequences]
    steps, batch = max(lengths), len(sequences)
    stacked = cat([s.to(first.dtype) for s in sequences], 0)
    index = np.full((batch, steps), stacked.shape[0], dtype=np.int64)
    start = 0
    for b, n in enumerate(lengths):
        cols = slice(0, n) if padding_side == "right" else slice(steps - n, steps)
        index[b, cols] = np.arange(start, start + n)
        start += n
    if not batch_first:
        index = index.T
    padded = _gather_rows(stacked, index, padding_value)
    return padded.reshape(*index.shape, *first.shape[1:])


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | list[int], batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its sequences, ``lengths[i]`` steps each.

    Unlike PyTorch (which transposes ``padded_sequences`` in place when not
    ``batch_first``), the input is left as it is.

    >>> import ember
    >>> padded = ember.tensor([[1, 2, 3], [4, 0, 0]])
    >>> unpad_sequence(padded, ember.tensor([3, 1]), batch_first=True)
    [tensor([1, 2, 3]), tensor([4])]
    """
    lengths = _host_ints(lengths, "lengths", "unpad_sequence")
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    if len(lengths) != padded_sequences.shape[0]:
        raise ShapeError(
            f"unpad_sequence: got {len(lengths)} lengths for a batch of "
            f"{padded_sequences.shape[0]} (padded shape {tuple(padded_sequences.shape)}, "
            f"batch_first={batch_first})"
        )
    return [seq[: int(n)] for seq, n in zip(padded_sequences.unbind(0), lengths)]


def pack_sequence(sequences: Iterable[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shapes ``(L_i, *)`` (longest first unless
    ``enforce_sorted=False``).

    >>> import ember
    >>> pack_sequence([ember.tensor([1]), ember.tensor([2, 3])], enforce_sorted=False).data
    tensor([2, 1, 3])
    """
    sequences = list(sequences)
    lengths = [s.shape[0] if isinstance(s, Tensor) and s.ndim else 0 for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences in a :class:`PackedSequence`, in their original order.

    >>> import ember
    >>> packed = pack_sequence([ember.tensor([1]), ember.tensor([2, 3])], enforce_sorted=False)
    >>> unpack_sequence(packed)
    [tensor([1]), tensor([2, 3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
