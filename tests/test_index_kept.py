"""What the index keeps per entry for display and phrase checks, in compact form, answers as
the plain per-entry tuples it replaced."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from chatbot.search.display import Writings
from chatbot.search.hanfields import han_fields, level_holding

_han = st.text(alphabet="编译投机解码量化缓存的\n", max_size=12)
# Fields heaviest first: levels descending (equal levels allowed, as two tags are).
_fields = st.lists(st.tuples(st.integers(0, 8), _han.filter(bool)), max_size=5).map(
    lambda fs: sorted(fs, key=lambda f: -f[0])
)


@given(_fields, st.text(alphabet="编译投机解码量化缓存的", min_size=1, max_size=4))
def test_the_kept_string_gives_the_heaviest_field_holding_a_phrase(
    fields: list[tuple[int, str]], phrase: str
) -> None:
    holding = [level for level, text in fields if phrase in text]
    assert level_holding(han_fields(fields), phrase) == (max(holding) if holding else None)


def test_an_entry_without_chinese_keeps_the_empty_string() -> None:
    assert han_fields([]) == ""
    assert level_holding("", "编译") is None


_writing = st.tuples(
    st.sampled_from(["compile", "kv"]), st.sampled_from(["编译", "kv cache"]), st.sampled_from(["", "KV"])
)


@given(st.lists(st.lists(st.lists(_writing, max_size=4), max_size=3), max_size=6))
def test_writings_give_each_entrys_in_field_order(entries: list[list[list[tuple[str, str, str]]]]) -> None:
    writings = Writings()
    for fields in entries:
        writings.add(fields)
    assert len(writings) == len(entries)
    for index, fields in enumerate(entries):
        assert list(writings.of(index)) == [w for field in fields for w in field]
    again = pickle.loads(pickle.dumps(writings))
    assert again == writings
    assert [again.of(i) for i in range(len(entries))] == [writings.of(i) for i in range(len(entries))]
