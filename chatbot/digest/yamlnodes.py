"""YAML node helpers shared by the digest and glossary loaders."""

from __future__ import annotations

import yaml


def yaml_line(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int:
    """1-based line of the YAML node at a pydantic error location (best effort: the deepest
    node of `loc` that exists; line 1 when there is no node)."""
    if node is None:
        return 1
    for key in loc:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == key:
                    child = v
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            child = node.value[key]
        if child is None:
            break
        node = child
    return node.start_mark.line + 1
