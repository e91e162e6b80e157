"""``ember.backends.cuda``: cuBLAS matmul precision (``matmul.allow_tf32``).

>>> import ember
>>> ember.backends.cuda.matmul.allow_tf32 = True
>>> ember.backends.get_float32_matmul_precision()
'high'
>>> ember.backends.cuda.matmul.allow_tf32 = False
>>> ember.backends.get_float32_matmul_precision()
'highest'
"""

from __future__ import annotations

_PRECISIONS = ("highest", "high", "medium")

# Read by the GPU matmul (ember.backend.kernels.matmul) before each product: ``version`` changes
# with every setting, so applying it to CuPy costs one comparison when nothing changed.
state = {"precision": "highest", "version": 0}


def set_float32_matmul_precision(precision: str) -> None:
    """How float32 matrix products may round on the GPU: ``"highest"`` (full float32, the
    default), ``"high"`` or ``"medium"`` (TensorFloat-32 tensor cores allowed, on GPUs of
    compute capability 8.0 or more). No effect on the CPU.

    >>> import ember
    >>> ember.backends.set_float32_matmul_precision("high")
    >>> ember.backends.cuda.matmul.allow_tf32
    True
    >>> ember.backends.set_float32_matmul_precision("highest")
    """
    if precision not in _PRECISIONS:
        raise ValueError(
            f"set_float32_matmul_precision: expected one of {', '.join(map(repr, _PRECISIONS))}, "
            f"got {precision!r}"
        )
    if precision != state["precision"]:
        state["precision"] = precision
        state["version"] += 1


def get_float32_matmul_precision() -> str:
    """The current float32 matmul precision: ``"highest"`` unless set otherwise.

    >>> import ember
    >>> ember.backends.get_float32_matmul_precision()
    'highest'
    """
    return state["precision"]


def matmul_allows_tf32() -> bool:
    """Whether float32 GEMMs may use TF32 now."""
    return state["precision"] != "highest"


class _Matmul:
    """``ember.backends.cuda.matmul``: cuBLAS switches, as ``torch.backends.cuda.matmul``."""

    # cuBLAS accumulates float16 / bfloat16 products in float32 either way (CUBLAS_COMPUTE_32F,
    # CuPy's choice); these flags exist for PyTorch code that sets them and change nothing
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return matmul_allows_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        set_float32_matmul_precision("high" if value else "highest")

    def __repr__(self) -> str:
        return f"<ember.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _Matmul()


def is_built() -> bool:
    """Whether ember can use CUDA at all here (CuPy loads and sees a GPU)."""
    from ..backend import cuda

    return cuda.is_available()


__all__ = [
    "matmul",
    "is_built",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
]
