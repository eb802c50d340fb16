"""Entries share what they never change: one empty list for every empty list field."""

from __future__ import annotations

from chatbot.digest.library import Library
from chatbot.digest.model import checked_entry


def test_empty_list_fields_are_one_shared_list_that_no_copy_or_dump_changes(seed_library: Library) -> None:
    entry = seed_library.entries[0]
    fields = {**entry.__dict__, "refs": [], "people": [], "tags": [], "related": []}
    made = checked_entry(fields)
    assert len({id(made.refs), id(made.people), id(made.tags), id(made.related)}) == 1
    assert made.tags == []
    again = checked_entry(
        {"id": "x", "repo": "r", "digest": "d", "position": 1, "title": "t", "note": "", "source": "s"}
    )
    assert again.tags is made.tags
    copy = made.model_copy(update={"tags": ["a"]})
    dumped = made.model_dump()
    dumped["refs"].append("b")
    assert copy.tags == ["a"] and made.tags == [] and again.refs == [] and fields["tags"] == []


def test_lists_with_items_are_the_values_given(seed_library: Library) -> None:
    entry = seed_library.entries[0]
    tags = ["kv cache"]
    assert checked_entry({**entry.__dict__, "tags": tags}).tags is tags
