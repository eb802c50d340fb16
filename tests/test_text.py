"""The text toolkit: one Han range and one reading of Slack's mention markup for every part."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from chatbot.answers.candidates import Candidate
from chatbot.answers.intents import read_question
from chatbot.answers.model_prompt import answer_language
from chatbot.answers.retrieval import candidate_terms, chinese_of, score_candidates
from chatbot.search import tokens as search_tokens
from chatbot.search.tokens import tokenize
from chatbot.slack.handlers.followups import query_language, strip_mentions
from chatbot.text import (
    HAN_CHAR,
    INFLECTIONS,
    han_bigrams,
    han_class,
    has_han,
    nfkc,
    normalize_question,
    stem,
    strip_slack_markup,
    typed_text,
)


def _is_ideograph(ch: str) -> bool:
    name = unicodedata.name(ch, "")
    return name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


def test_han_is_exactly_the_bmp_ideographs() -> None:
    """Every assigned character from U+2E80 up (all of them, not a sample: a sample drew the few
    code points of the blocks Unicode has not assigned yet, U+FADA…U+FAFF, which have no name to
    tell and no text that holds them; the ranges are whole blocks)."""
    assigned = (chr(c) for c in range(0x2E80, 0x10000) if unicodedata.category(chr(c)) not in ("Cn", "Cs"))
    wrong = [f"U+{ord(ch):04X}" for ch in assigned if bool(HAN_CHAR.fullmatch(ch)) != _is_ideograph(ch)]
    assert wrong == []


def test_edges_of_the_range() -> None:
    assert [has_han(c) for c in "\u3400\u4dbf\u4dc0\u4dff\u4e00\u9fff\uf900\ufaff\u3000"] == [
        True, True, False, False, True, True, True, True, False,
    ]  # fmt: skip


def test_han_class_excluding_cuts_around_the_characters() -> None:
    import re

    without = re.compile(han_class(excluding="的了"))
    assert [bool(without.fullmatch(c)) for c in "的了编译"] == [False, False, True, True]


def test_every_part_agrees_on_what_is_chinese() -> None:
    """A Compatibility Ideograph (U+F900) or an Extension A character (U+3400) is Chinese to
    search, intents, the model prompt and the Slack follow-ups alike; a hexagram (U+4DC0) to none."""
    for text, chinese in (("\uf900", True), ("\u3400", True), ("\u4dc0", False)):
        assert (query_language(text, "en") == "zh") is chinese
        assert (answer_language(text, "en") == "zh") is chinese
        assert any(t.kind == "cjk" for t in tokenize(text)) is chinese
    # Search reads NFKC text: the compatibility ideograph U+F900 is the unified U+8C48 to it.
    assert [t.key for t in tokenize("\uf900")] == ["\u8c48"]


def test_mention_labels_may_hold_spaces() -> None:
    text = "<@U0AB12|Ann Lee> what about <#C0123|vllm digest> and <!here>, <@U9>?"
    assert " ".join(strip_slack_markup(text).split()) == "what about and , ?"
    assert strip_mentions(text) == "what about and , ?"


_SLACK_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_UNSEEN_CODES = (
    *range(0x00, 0x09),
    0x0B,
    0x0C,
    0x200B,
    0x2060,
    0xFEFF,
    *range(0x0E, 0x20),
    *range(0x7F, 0xA0),
    *range(0x202A, 0x202F),
)


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=[*map(chr, _UNSEEN_CODES)])))
def test_typed_text_is_what_was_typed_whatever_slack_escaped(typed: str) -> None:
    """Slack sends `&`, `<`, `>` as entities; decoding them gives the typed text back, once:
    a typed `&lt;` arrives as `&amp;lt;` and stays `&lt;`."""
    typed = "".join(c for c in typed if not 0x2066 <= ord(c) <= 0x2069)
    assert typed_text(typed.translate(_SLACK_ESCAPES)) == typed


def test_typed_text_drops_markup_controls_and_bidi_overrides_and_keeps_links_as_urls() -> None:
    sent = "<@U1|Ann Lee> see <https://github.com/o/r/pull/7|this> \u202eok\u202c a\x00b &amp;lt; &lt;i&gt;"
    assert " ".join(typed_text(sent).split()) == "see https://github.com/o/r/pull/7 ok a b &lt; <i>"


def test_one_stemmer_for_search_and_the_word_list_of_answers() -> None:
    assert [stem(w) for w in ("caching", "cache", "strategies")] == ["cach", "cach", "strategy"]
    # The word list of follow-ups is looked up by the uninflected form only.
    assert [stem(w, INFLECTIONS) for w in ("crashed", "leaks", "strategies", "caching", "re-exports")] == [
        "crash", "leak", "strategy", "cach", "re-exports",
    ]  # fmt: skip
    assert search_tokens.stem is stem
    assert chinese_of("crashed") == chinese_of("crash") == ("崩溃",)
    pieces = [Candidate(("note",), "改用新的调度策略", "a"), Candidate(("note",), "补上了测试", "b")]
    ranked = score_candidates(read_question("which strategies were considered?"), pieces, None)
    assert ranked[0].candidate.source == "a" and ranked[0].shared > 0 and ranked[1].shared == 0


def test_search_and_answers_cut_chinese_into_the_same_bigrams() -> None:
    assert han_bigrams("前缀缓存") == ["前缀", "缀缓", "缓存"] and han_bigrams("存") == ["存"]
    assert [t.key for t in tokenize("前缀缓存")] == han_bigrams("前缀缓存")
    assert {"前缀", "缀缓", "缓存"} <= candidate_terms("前缀缓存")[1]
    assert normalize_question("  Ｗhat\u3000is\tIT？ ") == "what is it?"


@given(
    st.text(
        alphabet=st.one_of(
            st.characters(),
            st.sampled_from(list("，：（）；！？。、“”ＡＢｆｉ①㈱ﬁ\u0301\u0308 的编译aA1")),
        ),
        max_size=60,
    )
)
def test_nfkc_is_unicodedata_nfkc(text: str) -> None:
    """The fast path (full-width punctuation replaced, then a quick check) never differs."""
    assert nfkc(text) == unicodedata.normalize("NFKC", text)


def test_nfkc_of_chinese_prose_with_full_width_punctuation() -> None:
    assert nfkc("修复（A）：缓存，见 ＃１２！") == "修复(A):缓存,见 #12!"
