"""ONNX export of inference graphs: ``ember.onnx.export(model, example_args, "model.onnx")``.

The model is traced into a static graph (``ember.static``) and each primitive op is written as
ONNX nodes; see docs/onnx.md. The ``onnx`` package (``pip install ember[onnx]``) is imported
only when ``export`` runs, so ``import ember`` stays fast.

>>> import ember
>>> ember.onnx.ExportError.__mro__[1].__name__
'EmberError'
"""

from .context import ExportError
from .export import export

__all__ = ["ExportError", "export"]
