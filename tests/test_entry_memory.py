"""Entries share what they never change: one empty list for every empty list field."""

from __future__ import annotations

from pathlib import Path

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


def test_a_load_shares_equal_list_items_across_entries(tmp_path: Path) -> None:
    """Two entries naming the same handle, code name and PR hold one object for each, and
    still read (and dump) as before."""
    note = "值得精读。@alice 用 `torch.compile` 修了 #123 的问题。"
    text = f"vllm-project/vllm\n\n第一个条目\n\n{note}\n\n第二个条目\n\n{note}\n"
    (tmp_path / "vllm-digest-2026-01.txt").write_text(text, encoding="utf-8")
    first, second = Library.load(tmp_path).entries
    assert first.people == second.people == ["alice"]
    assert first.people[0] is second.people[0]
    assert first.identifiers == second.identifiers and first.identifiers
    assert first.identifiers[0] is second.identifiers[0]
    assert first.refs == second.refs and first.refs[0].number == 123
    assert first.refs[0] is second.refs[0]
    assert first.model_dump()["refs"] == second.model_dump()["refs"]
