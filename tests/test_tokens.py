"""Tokenizer: the same cut for entries, glossary terms and queries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatbot.search.tokens import atomic, keys, split_text, stem, surface_of, tokenize


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
    assert latin | cut.han_keys() == {t.key for t in tokenize(text)}
