"""Tokenizer: the same cut for entries, glossary terms and queries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatbot.search.tokens import (
    _latin_cut,
    _latin_tokens_uncached,
    atomic,
    keys,
    run_keys,
    split_text,
    stem,
    surface_of,
    tokenize,
)
from chatbot.text.words import _SUFFIXES as SEARCH_SUFFIXES


def kinds(text: str) -> list[tuple[str, str]]:
    return [(t.kind, t.key) for t in tokenize(text)]


def test_plural_and_verb_forms_meet() -> None:
    assert stem("caching") == stem("cache") == stem("caches") == "cach"
    assert stem("compile") == stem("compiled") == stem("compilation")
    assert stem("truncation") == stem("truncate") == stem("truncated")
    assert stem("pass") == "pass"  # never strip the s of -ss


def test_identifier_is_whole_joined_and_parts() -> None:
    assert kinds("asyncio.gather") == [
        ("ident", "asyncio.gather"),
        ("joined", "asynciogather"),
        ("part", "asyncio"),
        ("part", "gath"),
    ]
    tokens = tokenize("_take_removed_event")
    assert tokens[0].key == "take_removed_event" and tokens[0].surface == "_take_removed_event"
    assert [t.key for t in atomic(tokens)] == ["tak", "remov", "event"]
    assert {"qwen3-vl", "qwen3vl"} <= set(keys("Qwen3-VL"))
    assert {"flashinfer", "flash", "inf"} <= set(keys("FlashInfer"))


def test_refs_numbers_and_urls_become_pr_refs() -> None:
    assert keys("#54537") == ["#54537"]
    assert keys("54537") == ["#54537"]
    assert keys("see https://github.com/vllm-project/vllm/pull/54501/files") == ["see", "#54501"]
    assert keys("194") == ["194"]


def test_chinese_runs_are_bigrams_cut_at_particles() -> None:
    assert keys("投机解码") == ["投机", "机解", "解码"]
    assert keys("前缀缓存的问题") == ["前缀", "缀缓", "缓存", "问题"]
    assert keys("PD分离") == ["pd", "分离"]
    assert keys("卡") == ["卡"]


def test_surface_of_rejoins_what_the_text_said() -> None:
    assert surface_of(atomic(tokenize("投机解码"))) == "投机解码"
    assert surface_of(atomic(tokenize("prefix caching"))) == "prefix caching"


@given(st.text(max_size=200))
def test_any_text_tokenizes_to_nonempty_keys(text: str) -> None:
    for token in tokenize(text):
        assert token.key and token.surface
        assert token.kind in {"word", "ident", "joined", "part", "ref", "cjk"}


@given(
    st.text(
        alphabet=st.one_of(st.characters(), st.sampled_from(list("的编译 投机解码PD_.-/#12345"))),
        max_size=120,
    )
)
def test_split_text_has_the_keys_tokenize_has(text: str) -> None:
    """The index cuts notes with `split_text`; queries use `tokenize`: the keys must agree."""
    cut = split_text(text)
    latin = {t.key for t in cut.latin if t is not None}
    assert latin | set().union(*map(run_keys, cut.han_runs)) == {t.key for t in tokenize(text)}


_url_bits = st.sampled_from(
    [
        "https://github.com/vllm-project/vllm/pull/12345",
        "HTTPS://github.com/vllm-project/vllm/pull/678",
        "Http://example.org/a/issues/4321?x=1",
        "hTTp://Docs.VLLM.ai/en/latest",
        " ",
        "编译",
        "see",
        "#99",
        ",",
    ]
)


@given(st.lists(_url_bits, max_size=8).map("".join))
def test_split_text_and_tokenize_agree_on_urls_whatever_their_case(text: str) -> None:
    """A URL is cut the same way by the index and by a query, however its scheme is written
    (`HTTPS://…/pull/12345` is the ref `#12345`, not the words `github`, `pull`…)."""
    cut = split_text(text)
    latin = {t.key for t in cut.latin if t is not None}
    assert latin | set().union(*map(run_keys, cut.han_runs)) == {t.key for t in tokenize(text)}


_latin = st.from_regex(r"[#@]?_*[0-9A-Za-z]{1,8}(?:(?:::|[._/\-])+[0-9A-Za-z]{1,8}){0,2}_*", fullmatch=True)


@given(st.one_of(_latin, st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True)))
def test_a_plain_words_quick_cut_is_the_identifier_cut(raw: str) -> None:
    """Plain words skip the identifier split; what they give is what the split gives."""
    slow = tuple((t.key, t.surface, t.kind) for t in _latin_tokens_uncached(raw, 0))
    assert _latin_cut.__wrapped__(raw) == slow


@given(st.text(alphabet="abcdefgilnorstuyABCS", max_size=14))
def test_the_search_stemmer_tries_only_suffixes_a_word_can_end_with(word: str) -> None:
    """`stem` with the search's suffixes looks only at those ending in the word's last letter:
    the same stem as trying every suffix in order (an equal tuple takes the plain loop)."""
    assert stem(word) == stem(word, tuple(list(SEARCH_SUFFIXES)))
