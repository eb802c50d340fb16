"""YAML node helpers shared by the digest and glossary loaders."""

from __future__ import annotations

import yaml
from pydantic import ValidationError


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


def yaml_error_line(exc: Exception, text: str = "") -> tuple[int, str]:
    """Line and message of a YAML file that does not parse (a `yaml.YAMLError`, or the
    `ValueError`/`RecursionError` PyYAML lets through): the problem's mark; for a control
    character (no mark) the line of its position in `text`; else line 1."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = f"invalid YAML: {exc.problem or exc.context}"
        return (mark.line + 1 if mark else 1), message + _quote_hint(mark, text)
    if isinstance(exc, yaml.reader.ReaderError):
        # libyaml (the C loaders) counts the position in UTF-8 bytes, the pure-Python reader in
        # characters: with Chinese text before the bad character the two differ.
        if getattr(yaml, "__with_libyaml__", False):
            line = text.encode("utf-8")[: exc.position].count(b"\n") + 1
        else:
            line = text[: exc.position].count("\n") + 1
        return line, f"invalid YAML: character #x{exc.character:04x}: {exc.reason}"
    return 1, f"invalid YAML: {exc}"


def _quote_hint(mark: yaml.Mark | None, text: str) -> str:
    """For a value opening with a character YAML reserves (`author: @alice`, `` `x` ``, `%`):
    which one, and that quoting the value makes it text."""
    if mark is None:
        return ""
    lines = text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    char = line[mark.column : mark.column + 1]
    if char not in ("@", "`", "%"):
        return ""
    return f' ({char!r}: put the value in quotes, e.g. "{line[mark.column :].strip()[:40]}")'


def validation_error_line(
    exc: ValidationError, root: yaml.Node | None, prefix: tuple[int | str, ...] = ()
) -> tuple[int, str]:
    """Line and message of the first schema error of parsed YAML: `entries.2.pr: …` at the
    line of that node (`prefix` places a sub-document validated on its own)."""
    first = exc.errors()[0]
    loc = (*prefix, *first["loc"])
    where = ".".join(str(p) for p in loc) or "file"
    return yaml_line(root, loc), f"{where}: {first['msg']}"
