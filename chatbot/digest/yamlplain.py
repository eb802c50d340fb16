"""A fast reader for the plain shape most digest YAML files have: `key: value` lines, a list of
mappings under a top-level key, lists of scalars as `- x` lines or `[a, b]`, comments.

PyYAML's C parser still builds a node (two marks each) per scalar and calls back into Python to
resolve each one: a third of a 10k-entry library load. This reader does one regex match per
line and resolves each distinct scalar once, with PyYAML's own resolver and constructors, so
values are the same objects' equals. Anything outside the shape (anchors, tags, block scalars,
multi-line or escaped scalars, odd indentation, duplicate keys, a tab, a BOM) gives None and
the caller uses PyYAML: the same data for every input either way, errors from PyYAML only.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

# What a plain scalar may start with: no indicator, no space.
_FIRST = r"[^\s\-?:,\[\]{}#&*!|>'\"%@`]"
# Block context: `: ` and ` #` end a scalar; trailing spaces are not part of it.
_BLOCK = _FIRST + r"(?:[^\s:#]++|:(?=\S)|#|[ ]++(?=[^\s#]))*+"
# Inside `[...]`: no `:` at all (libyaml versions differ on it), no flow indicators.
_FLOW = _FIRST + r"(?:[^\s:#,\[\]{}]++|#|[ ]++(?=[^\s#:,\[\]{}]))*+"
_QUOTED = r"\"[^\"\\\n]*\"|'[^'\n]*'"
_ITEM = rf"(?:{_QUOTED}|{_FLOW})"
_VALUE = rf"\[ *(?:{_ITEM} *(?:, *{_ITEM} *)*)?\]|{_QUOTED}|{_BLOCK}"
_KEY = r"[A-Za-z_][A-Za-z0-9_]{0,100}"
# Each line: blank or a comment; else its indent, then `- key: value`, `- value` or
# `key: value` (the value may be missing: ''), and a comment. A line of any other form is not
# matched, and the count of matches falls short of the count of lines.
_LINES = re.compile(
    rf"^(?: *(?:#.*)?|( *)(?:(- +)(?:({_KEY}):(?: +({_VALUE}))?|({_VALUE}))|({_KEY}):(?: +({_VALUE}))?)"
    r"(?: +#.*)? *)$",
    re.MULTILINE,
)
_FLOW_ITEM = re.compile(rf"({_ITEM}) *(?:,|\]) *")
# Printable characters YAML reads as such, without line breaks other than `\n` (NEL, LS, PS),
# tabs, `\r` or a byte-order mark: any other character sends the file to PyYAML.
_OUTSIDE = re.compile(
    r"[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)

_STR = "tag:yaml.org,2002:str"
_RESOLVER: Any = Resolver()
_CONSTRUCTOR = SafeConstructor()
_SCALAR_TAGS = {f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp")}


class NotPlain(Exception):
    """The text is not of the plain shape: PyYAML reads it."""


class _Reader:
    """One pass over the lines: the top mapping, the list of mappings open under one of its keys,
    the item being read and a key waiting for its value (a list below it, or nothing: null)."""

    def __init__(self) -> None:
        self.top: dict[str, Any] = {}
        self.item_lines: dict[str, list[int]] = {}
        self.memo: dict[str, Any] = {}
        self.pending: tuple[dict[str, Any], str, int] | None = None  # mapping, key, key indent
        self.items: tuple[list[Any], str, int] | None = None  # top list, its key, dash indent
        self.item: tuple[dict[str, Any], int] | None = None  # current item, its key indent
        self.sub: tuple[list[Any], int] | None = None  # scalar list of an item key, dash indent

    def line(self, number: int, groups: tuple[str, ...]) -> None:
        indent, dash, item_key, item_value, element, key, value = groups
        if not (key or dash):
            return  # blank, or a comment
        ind = len(indent)
        if self.pending is not None and not self._opens_list(ind, dash):
            self.pending = None  # `key:` and nothing under it: null, as set
        if not dash:
            self._key(ind, key, value)
        elif element:
            self._element(ind, element)
        else:
            self._item(number, ind, ind + len(dash), item_key, item_value)

    def _opens_list(self, ind: int, dash: str) -> bool:
        """Whether a dash line opens the list of the pending key."""
        assert self.pending is not None
        mapping, key, key_indent = self.pending
        if not dash or ind < key_indent:
            return False
        if mapping is self.top:
            self.items = ([], key, ind)
            mapping[key] = self.items[0]
            self.item_lines[key] = []
        else:
            self.sub = ([], ind)
            mapping[key] = self.sub[0]
        self.pending = None
        return True

    def _key(self, ind: int, key: str, value: str) -> None:
        if ind == 0:
            self.items = self.item = self.sub = None
            self._set(self.top, key, value, 0)
        elif self.item is not None and ind == self.item[1]:
            self.sub = None
            self._set(self.item[0], key, value, ind)
        else:
            raise NotPlain

    def _element(self, ind: int, element: str) -> None:
        if self.sub is None or ind != self.sub[1]:
            raise NotPlain
        self.sub[0].append(self.value(element))

    def _item(self, number: int, ind: int, key_indent: int, key: str, value: str) -> None:
        if self.items is None or ind != self.items[2]:
            raise NotPlain
        items, top_key, _ = self.items
        mapping: dict[str, Any] = {}
        items.append(mapping)
        self.item_lines[top_key].append(number)
        self.item, self.sub = (mapping, key_indent), None
        self._set(mapping, key, value, key_indent)

    def _set(self, mapping: dict[str, Any], key: str, value: str, ind: int) -> None:
        if self.scalar(key) != key or key in mapping:
            raise NotPlain  # a key that reads as null, a bool…; a repeated key
        if not value:
            mapping[key] = None
            self.pending = (mapping, key, ind)
        else:
            mapping[key] = self.value(value)

    def value(self, text: str) -> Any:
        if text[0] != "[":
            return self.scalar(text)
        return [self.scalar(m.group(1)) for m in _FLOW_ITEM.finditer(text, 1)]

    def scalar(self, text: str) -> Any:
        """A scalar's value, as PyYAML resolves and constructs it (quoted: the string)."""
        first = text[0]
        if first in "\"'":
            return text[1:-1]
        implicit = _RESOLVER.yaml_implicit_resolvers
        if first not in implicit and None not in implicit:
            return text  # no implicit type starts so: a string (most titles, authors, tags)
        if first in "123456789" and len(text) < 19 and text.isdecimal() and text.isascii():
            return int(text)  # what PyYAML's int resolver and constructor make of it
        try:
            return self.memo[text]
        except KeyError:
            built = self.memo[text] = _resolved(text)
            return built


def _resolved(text: str) -> Any:
    """A plain scalar's value by PyYAML's resolver and constructors; NotPlain for a type the
    plain shape leaves to PyYAML (a merge key, `=`) or a value its constructor refuses."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    if tag not in _SCALAR_TAGS:
        raise NotPlain
    return text if tag == _STR else _construct(tag, text)


def _construct(tag: str, text: str) -> Any:
    try:
        return SafeConstructor.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))
    except (ValueError, yaml.YAMLError):
        raise NotPlain from None  # a date that does not exist: PyYAML says so


def read_plain(text: str) -> tuple[dict[str, Any], dict[str, list[int]]] | None:
    """The data of a YAML document of the plain shape, and the 1-based line of each item of its
    top-level lists of mappings; None for any other document."""
    if _OUTSIDE.search(text):
        return None
    lines = _LINES.findall(text)
    if len(lines) != text.count("\n") + 1:
        return None  # a line of another form
    reader = _Reader()
    try:
        for number, groups in enumerate(lines, start=1):
            reader.line(number, groups)
    except NotPlain:
        return None
    return (reader.top, reader.item_lines) if reader.top else None


__all__ = ["read_plain"]
