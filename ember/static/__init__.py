"""Static graphs: define-and-run (placeholders, Variables, Session), ``ember.compile``, files.

See docs/static.md. The IR (``Graph``, ``Value``, ``Node``) is in ``ember.static.ir``; the
executor in ``ember.static.executor``.

>>> import ember
>>> from ember import static
>>> g = static.Graph()
>>> with g.as_default():
...     x = static.placeholder((2,), name="x")
...     y = (x * 2).sum()
>>> print(g)
graph graph(%0: f32[2] "x") {
  const %1: f32[] = 2.0
  %2: f32[2] = Mul(%0, %1)
  %3: f32[] = Sum(%2)
}
>>> static.Session(g).run(y, {x: [1.0, 2.0]})
np.float32(6.0)
"""

from .compile import CompiledFunction, compile
from .define import (
    Graph,
    Operation,
    Variable,
    get_default_graph,
    global_variables_initializer,
    gradients,
    group,
    placeholder,
    reset_default_graph,
    variables_initializer,
)
from .files import load, save
from .ir import GraphError, Node, Value
from .session import Session
from .symbol import TraceError

__all__ = [
    "CompiledFunction",
    "Graph",
    "GraphError",
    "Node",
    "Operation",
    "Session",
    "TraceError",
    "Value",
    "Variable",
    "compile",
    "get_default_graph",
    "global_variables_initializer",
    "gradients",
    "group",
    "load",
    "placeholder",
    "reset_default_graph",
    "save",
    "variables_initializer",
]
