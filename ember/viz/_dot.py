"""A tiny DOT writer and the picture's style (no Graphviz needed to build the source).

>>> from ember.viz._dot import Dot
>>> d = Dot("g")
>>> a = d.node(["MatMul", 'say "hi"'], "op")
>>> b = d.node(["output"], "output")
>>> d.edge(a, b, "f32[2]")
>>> print(d.source())  # doctest: +ELLIPSIS
digraph "g" {
  graph [rankdir=TB, ...];
  node [shape=box, ...];
  edge [...];
  n0 [label="MatMul\\nsay \\"hi\\"", fillcolor="#d9d9d9"];
  n1 [label="output", shape="ellipse", fillcolor="#c5e8a5"];
  n0 -> n1 [label=" f32[2]"];
}
<BLANKLINE>
"""

from __future__ import annotations

# One entry per kind of box: DOT attributes (``fillcolor`` etc.) besides the label.
STYLES: dict[str, dict[str, str]] = {
    # eager: one autograd node (grad_fn) per recorded op
    "grad_fn": {"fillcolor": "#d9d9d9"},
    # a leaf that requires grad (its gradient is accumulated into ``.grad``)
    "leaf": {"fillcolor": "#cfe2f3"},
    # static: ops of the forward pass, of the backward pass, and side effects (stores, updates)
    "op": {"fillcolor": "#d9d9d9"},
    "backward": {"fillcolor": "#f4cccc", "color": "#a61c00", "style": "filled,rounded"},
    "effect": {"fillcolor": "#fff2cc", "color": "#b45f06", "penwidth": "1.6"},
    # static values: fed inputs, long-lived state (parameters, .grad), constants
    "input": {"shape": "ellipse", "fillcolor": "#fff9c4"},
    "state": {"fillcolor": "#cfe2f3"},
    "const": {"shape": "ellipse", "fillcolor": "#ffffff", "fontsize": "9", "color": "#999999"},
    # what the picture was drawn for (a tensor, a graph's outputs)
    "output": {"shape": "ellipse", "fillcolor": "#c5e8a5"},
}

_FONT = "Helvetica,Arial,sans-serif"
_HEADER = (
    f'  graph [rankdir=TB, fontname="{_FONT}", nodesep=0.25, ranksep=0.35];\n'
    f'  node [shape=box, style="filled", fontname="{_FONT}", fontsize=11, '
    f'margin="0.12,0.04", height=0.3];\n'
    f'  edge [fontname="{_FONT}", fontsize=9, fontcolor="#555555", arrowsize=0.7];'
)


def quote(text: str) -> str:
    """``text`` as a DOT double-quoted string (backslashes and quotes escaped)."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def label(lines) -> str:
    """Lines of a label as one DOT string (escaped, joined by DOT's ``\\n``)."""
    return '"' + "\\n".join(quote(s)[1:-1] for s in lines) + '"'


def shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Dot:
    """Nodes and edges of one picture; ``source()`` is the DOT text. Node ids are ``n0``,
    ``n1``... in the order they are added, so the text is the same on every run."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self.count = 0
        self.edges = 0

    def node(self, lines, kind: str, tooltip: str | None = None) -> str:
        nid = f"n{self.count}"
        self.count += 1
        attrs = [f"label={label(lines)}"]
        attrs += [f"{k}={quote(v)}" if not v.isdigit() else f"{k}={v}" for k, v in _style(kind)]
        if tooltip:
            attrs.append(f"tooltip={quote(tooltip)}")
        self.lines.append(f"  {nid} [{', '.join(attrs)}];")
        return nid

    def edge(self, a: str, b: str, text: str | None = None, **attrs: str) -> None:
        parts = [f"label={quote(' ' + text)}"] if text else []
        parts += [f"{k}={quote(v)}" for k, v in attrs.items()]
        tail = f" [{', '.join(parts)}]" if parts else ""
        self.lines.append(f"  {a} -> {b}{tail};")
        self.edges += 1

    def source(self) -> str:
        body = "\n".join(self.lines)
        return f"digraph {quote(self.name)} {{\n{_HEADER}\n{body}\n}}\n"


def _style(kind: str):
    return STYLES[kind].items()
