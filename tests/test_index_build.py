"""How the index is built: postings packed in bulk and build-time memos equal the plain forms."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest.library import Library
from chatbot.heap import build_long_lived
from chatbot.search.build import BuildMemo
from chatbot.search.fields import WEIGHT_OF_LEVEL
from chatbot.search.glossary import MEMO_LIMIT, Glossary, MatchMemo, remember
from chatbot.search.index import SearchIndex
from chatbot.search.postings import Postings
from chatbot.search.tokens import segment_words, split_text

_GLOSSARY = Glossary.load()
_TERMS = sorted({t for c in _GLOSSARY.concepts.values() for t in c.terms})

# An entry: its fields heaviest first, each a level and the keys of its pieces of text.
_field = st.tuples(
    st.integers(0, len(WEIGHT_OF_LEVEL) - 1),
    st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=4), max_size=3),
)
_entries = st.lists(st.lists(_field, max_size=4).map(lambda f: sorted(f, key=lambda x: -x[0])), max_size=8)


@given(_entries)
def test_bulk_postings_hold_each_key_once_per_entry_at_its_heaviest_field(
    entries: list[list[tuple[int, list[list[str]]]]],
) -> None:
    """The packed table equals the per-entry dict it replaced: key → heaviest level holding it."""
    table: Postings[str] = Postings()
    expected: dict[str, dict[int, int]] = {}
    for index, fields in enumerate(entries):
        for level, pieces in fields:
            table.add_fields(index, [level], [[table.numbers(frozenset(keys)) for keys in pieces]])
            for key in (k for keys in pieces for k in keys):
                expected.setdefault(key, {}).setdefault(index, level)  # heaviest came first
    table.finish()
    for key in "abcdefgh":
        found, weights = table.get(key)
        want = expected.get(key, {})
        assert found.tolist() == sorted(want)
        assert weights.tolist() == [table.weights[want[i]] for i in sorted(want)]
        assert (key in table) == bool(want)


@given(st.dictionaries(st.integers(0, (1 << 28) - 1), st.integers(0, len(WEIGHT_OF_LEVEL) - 1), max_size=6))
def test_postings_keep_entries_up_to_the_packed_limit_with_their_levels(posted: dict[int, int]) -> None:
    """An entry number takes all 28 bits of a packed value's entry and level half, and `finish`
    splits that half in place: entries near 2**28 come back whole, each at its level."""
    table: Postings[str] = Postings()
    for index, level in sorted(posted.items()):
        table.add_fields(index, [level], [[table.numbers(frozenset("a"))]])
    table.finish()
    found, weights = table.get("a")
    assert found.tolist() == sorted(posted)
    assert weights.tolist() == [table.weights[posted[i]] for i in sorted(posted)]


@given(_entries, st.integers(1, 12))
def test_postings_packed_a_few_at_a_time_equal_postings_packed_at_once(
    entries: list[list[tuple[int, list[list[str]]]]], chunk: int
) -> None:
    """A build packs its raw postings every `chunk` of them and dedupes them at the end, a
    slice at a time: the table is the one a single pack and slice give."""
    tables: list[Postings[str]] = [Postings(), Postings()]
    tables[0].chunk = chunk
    for table in tables:
        for index, fields in enumerate(entries):
            table.add_fields(
                index,
                [level for level, _ in fields],
                [[table.numbers(frozenset(keys)) for keys in pieces] for _, pieces in fields],
            )
        table.finish()
    small, whole = tables
    for key in "abcdefgh":
        assert [a.tolist() for a in small.get(key)] == [a.tolist() for a in whole.get(key)]
    assert small._starts.tolist() == whole._starts.tolist()


@given(st.lists(st.frozensets(st.sampled_from("abcdefghij"), max_size=6), max_size=8))
def test_a_new_key_is_numbered_by_the_count_of_keys_before_it(texts: list[frozenset[str]]) -> None:
    """Key numbers are dense and stable: each text's keys get their first number again."""
    table: Postings[str] = Postings()
    for keys in texts:
        numbers = table.numbers(keys)
        assert [table.number_of(k) for k in keys] == list(numbers)
    assert sorted(table._ids.values()) == list(range(len(table._ids)))
    assert set(table._ids) == set().union(*texts)


_pieces = st.one_of(
    st.sampled_from(_TERMS),
    st.sampled_from(["的", " ", "，", "修复", "上", "and", "_", "-", "。", "PD", "KV", "3", "kv cache"]),
    st.text(max_size=6),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_pieces, max_size=10).map("".join), min_size=1, max_size=6))
def test_a_memo_shared_by_many_texts_finds_what_each_finds_alone(texts: list[str]) -> None:
    """An index build matches each distinct stretch and run once, for all its fields."""
    memo = MatchMemo()
    for text in texts:
        cut = split_text(text)
        assert _GLOSSARY.find_in(cut, memo) == _GLOSSARY.find_in(cut)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_pieces, max_size=10).map("".join), min_size=1, max_size=6))
def test_the_builds_key_numbers_test_terms_as_the_keys_do(texts: list[str]) -> None:
    """A build checks a mixed-script term's keys against the text's key numbers, not a key set."""
    build = BuildMemo(Postings(), _GLOSSARY)
    for text in texts:
        cut = split_text(text)
        build.key_numbers(cut)
        assert _GLOSSARY.find_in(cut, build) == _GLOSSARY.find_in(cut)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.lists(_pieces, max_size=6).map("".join), max_size=3), min_size=1, max_size=6),
    st.sampled_from([1, 2, 3, MEMO_LIMIT]),
)
def test_the_builds_words_are_each_stretchs_words_first_seen_first(
    entries: list[list[str]], limit: int
) -> None:
    """The vocabulary a build collects is every word of the texts' stretches in order, each at
    its first place, even when its memos start over (a small `limit`) and a stretch is numbered
    again."""
    defaults = remember.__defaults__
    remember.__defaults__ = (limit,)
    try:
        build = BuildMemo(Postings(), _GLOSSARY)
        for texts in entries:
            cuts = [split_text(text) for text in texts]
            for cut in cuts:
                build.key_numbers(cut)
            for cut in reversed(cuts):
                build.collect_words(cut.segments)
            build.end_entry()
    finally:
        remember.__defaults__ = defaults
    plain: dict[str, str] = {}
    for texts in entries:
        for text in reversed(texts):
            for segment in split_text(text).segments:
                for key, surface, kind in segment_words(segment):
                    if kind != "ref":
                        plain.setdefault(surface, key)
    assert list(build.words.items()) == list(plain.items())


def test_a_build_keeps_no_memo_and_indexes_like_before(seed_library: Library) -> None:
    """Two builds over the same entries give the same index; the glossary carries no cache."""
    first = SearchIndex.build(seed_library.entries, _GLOSSARY)
    second = build_long_lived(lambda: SearchIndex.build(seed_library.entries, _GLOSSARY))
    assert first.concept_fields == second.concept_fields
    assert first.topics() == second.topics()
    for query in ["compile", "投机解码", "PD 分离", "kv cache 量化", "#54537"]:
        assert first.search(query, limit=20) == second.search(query, limit=20)
    assert not [name for name in vars(_GLOSSARY) if "match" in name]


def test_long_lived_build_restores_the_collector_and_returns_the_result() -> None:
    was = gc.isenabled()
    assert build_long_lived(lambda: [1, 2]) == [1, 2]
    assert gc.isenabled() == was
