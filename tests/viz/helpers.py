"""Read back the DOT text that ``ember.viz.to_dot`` writes (its own, regular subset of DOT)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NODE = re.compile(r"^  (n\d+) \[(.*)\];$")
_EDGE = re.compile(r"^  (n\d+) -> (n\d+)(?: \[(.*)\])?;$")
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\s]+)')


def _attrs(text: str | None) -> dict[str, str]:
    out = {}
    for k, v in _ATTR.findall(text or ""):
        if v.startswith('"'):
            v = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v[1:-1])
        out[k] = v
    return out


@dataclass
class Picture:
    nodes: dict = field(default_factory=dict)  # id -> attrs (label lines joined by "\n")
    edges: list = field(default_factory=list)  # (src id, dst id, attrs)

    def labels(self) -> list[str]:
        return [a["label"] for a in self.nodes.values()]

    def find(self, label: str) -> list[str]:
        """Ids of the nodes whose label is ``label`` exactly."""
        return [n for n, a in self.nodes.items() if a["label"] == label]

    def first_line(self, name: str) -> list[str]:
        """Ids of the nodes whose label starts with the line ``name``."""
        return [n for n, a in self.nodes.items() if a["label"].split("\n")[0] == name]

    def into(self, nid: str) -> list[tuple[str, dict]]:
        return [(a, attrs) for a, b, attrs in self.edges if b == nid]

    def out_of(self, nid: str) -> list[tuple[str, dict]]:
        return [(b, attrs) for a, b, attrs in self.edges if a == nid]

    def fill(self, nid: str) -> str:
        return self.nodes[nid].get("fillcolor", "")


def parse(src: str) -> Picture:
    lines = src.splitlines()
    assert lines[0].startswith("digraph ") and lines[0].endswith("{"), lines[0]
    assert lines[-1] == "}", lines[-1]
    pic = Picture()
    for line in lines[1:-1]:
        if line.startswith(("  graph [", "  node [", "  edge [")):
            continue
        m = _EDGE.match(line)
        if m:
            assert m.group(1) in pic.nodes and m.group(2) in pic.nodes, line
            pic.edges.append((m.group(1), m.group(2), _attrs(m.group(3))))
            continue
        m = _NODE.match(line)
        assert m, f"unexpected DOT line: {line!r}"
        pic.nodes[m.group(1)] = _attrs(m.group(2))
    return pic
