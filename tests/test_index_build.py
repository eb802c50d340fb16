"""How the index is built: postings packed in bulk and build-time memos equal the plain forms."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest.library import Library
from chatbot.heap import build_long_lived, release_free_memory
from chatbot.search.glossary import Glossary, MatchMemo, MemoPolicy
from chatbot.search.index import WEIGHT_OF_LEVEL, SearchIndex, _Build, _Postings
from chatbot.search.tokens import split_text, tokenize

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
    table: _Postings[str] = _Postings()
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
    build = _Build(_Postings(), _GLOSSARY)
    for text in texts:
        cut = split_text(text)
        build.key_numbers(cut)
        assert _GLOSSARY.find_in(cut, build) == _GLOSSARY.find_in(cut)


_Seen = tuple[set[str], list[tuple[str, str, str]]]


def _build_texts(texts: list[str], remember: bool) -> tuple[list[_Seen], list[tuple[str, str]]]:
    """Each text's keys and glossary matches, and the vocabulary, as a build sees them with
    its pieces always remembered, or never (each text keyed and matched as a whole)."""
    build = _Build(_Postings(), _GLOSSARY)
    build.piece_memo, build.run_memo = MemoPolicy(remember), MemoPolicy(remember)
    out: list[_Seen] = []
    for text in texts:
        cut = split_text(text)
        numbers = build.key_numbers(cut)
        matches = _GLOSSARY.find_in(cut, build)
        assert (build.whole_raws(cut) is None) == remember
        build.collect_words(cut.segments, build.whole_raws(cut))
        build.end_entry()
        key_of = {n: k for k, n in build.postings._ids.items()}
        out.append(({key_of[n] for piece in numbers for n in piece}, matches))
    return out, list(build.words.items())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_pieces, max_size=10).map("".join), min_size=1, max_size=6))
def test_texts_keyed_as_a_whole_give_what_pieces_remembered_give(texts: list[str]) -> None:
    """Where pieces rarely repeat a build keys and matches whole texts in a few passes: the
    same keys (those `tokenize` gives), matches and vocabulary as remembering each piece."""
    pieces, words = _build_texts(texts, True)
    assert _build_texts(texts, False) == (pieces, words)
    for text, (keys, _) in zip(texts, pieces, strict=True):
        assert keys == {t.key for t in tokenize(text)}


def test_a_build_stops_remembering_pieces_that_rarely_repeat() -> None:
    """After the warm-up, pieces are remembered only while half of those looked up were there."""
    policy = MemoPolicy()
    assert policy.remembers(MemoPolicy.WARM - 1, MemoPolicy.WARM - 1)
    assert not policy.remembers(10, 10)
    assert policy.remembers(3 * MemoPolicy.WARM, 0)
    assert not MemoPolicy(False).remembers(1, 0) and MemoPolicy(True).remembers(1, 1)


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
    assert release_free_memory() in {True, False}
