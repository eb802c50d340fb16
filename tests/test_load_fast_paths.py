"""The load's fast paths give what the plain ways they replace give.

`Library.load` builds entries, ids and merged lists in C-level passes (`map`, `itemgetter`,
`str.split`) rather than one Python step per field or character; each is checked here against
the plain way, on generated input.
"""

from __future__ import annotations

import datetime as dt
import re
from importlib import resources
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot import yamlfast
from chatbot.digest import note_labels
from chatbot.digest.library import _union
from chatbot.digest.model import Entry, checked_entry, entry_values, normalize_title
from chatbot.digest.refs import Ref
from chatbot.text.words import nfkc

REQUIRED = {
    "id": "abc1234567",
    "repo": "vllm-project/vllm",
    "digest": "d",
    "position": 1,
    "title": "t",
    "note": "n",
    "source": "f.txt:3",
}
OPTIONAL: dict[str, Any] = {
    "refs": [Ref(1, "https://github.com/o/r/pull/1")],
    "people": ["alice"],
    "identifiers": ["a.b"],
    "pr": 7,
    "url": "https://example.com",
    "github_title": "g",
    "author": "bob",
    "date": dt.date(2026, 1, 2),
    "tags": ["x"],
    "related": [Ref(2, "https://github.com/o/r/pull/2")],
}
LISTS = {"refs", "people", "identifiers", "tags", "related"}


def plain_fields(values: dict[str, Any]) -> dict[str, Any]:
    """What `checked_entry` keeps, the plain way: each field in order, or its default."""
    return {
        name: values.get(name, [] if name in LISTS else field.default)
        for name, field in Entry.model_fields.items()
    }


@settings(max_examples=300)
@given(st.text(), st.booleans())
def test_normalize_title_is_the_regex_form(title: str, padded: bool) -> None:
    title = f" \t{title}\u3000\n" if padded else title
    assert normalize_title(title) == re.sub(r"\s+", " ", nfkc(title)).strip().casefold()


@given(st.sets(st.sampled_from(sorted(OPTIONAL))))
def test_checked_entry_fills_what_is_left_out(present: set[str]) -> None:
    values = {**REQUIRED, **{name: OPTIONAL[name] for name in present}}
    entry = checked_entry(values)
    assert entry.__dict__ == plain_fields(values)
    assert list(entry.__dict__) == list(Entry.model_fields)
    assert entry == Entry.model_validate(values)
    for name in LISTS - present:  # empty: the one list entries share (they never change lists)
        assert entry.__dict__[name] == [] and entry.__dict__[name] is checked_entry(values).__dict__[name]


def test_checked_entry_of_another_entrys_values() -> None:
    entry = checked_entry({**REQUIRED, **OPTIONAL})
    again = checked_entry(dict(zip(Entry.model_fields, entry_values(entry), strict=True)))
    assert again.__dict__ == entry.__dict__ and list(again.__dict__) == list(entry.__dict__)


def test_checked_entry_of_as_many_names_one_not_a_field() -> None:
    """Seventeen names, one no field: the field left out still gets its default."""
    values = {**REQUIRED, **OPTIONAL, "extra": 1}
    del values["pr"]
    assert checked_entry(values).__dict__ == plain_fields(values)


def test_checked_entry_without_a_required_field() -> None:
    values = {**REQUIRED, **OPTIONAL}
    del values["note"]
    with pytest.raises(KeyError):
        checked_entry(values)


def plain_union(base: list[Any], extra: list[Any]) -> list[Any]:
    """`base`, then what `extra` adds, each once (the way `_union` was written first)."""
    seen = set(base)
    added = [item for item in dict.fromkeys(extra) if item not in seen]
    if not added:
        return base
    return extra if len(added) == len(extra) and not base else [*base, *added]


ITEMS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=6)


@given(ITEMS, ITEMS)
def test_union_is_the_plain_union(base: list[str], extra: list[str]) -> None:
    got, want = _union(base, extra), plain_union(base, extra)
    assert got == want
    assert (got is base) == (want is base) and (got is extra) == (want is extra)


def test_note_vocabulary_data_read_by_the_c_reader_as_by_pyyaml() -> None:
    text = resources.files("chatbot.digest").joinpath("data/note_labels.yaml").read_text(encoding="utf-8")
    assert note_labels.load_yaml is yamlfast.load_yaml
    assert yamlfast.load_yaml(text) == yaml.safe_load(text)
