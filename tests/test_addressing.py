"""Which replies in the bot's threads are for the bot: the pure rule, on held-out sentences."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.answers import addressed_to_bot
from chatbot.answers.addressing import asks_something, is_chatter

HELD_OUT = yaml.safe_load((Path(__file__).parent / "addressing_heldout.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", [str(t) for t in HELD_OUT["chatter"]])
def test_chatter_is_left_alone(text: str) -> None:
    assert not addressed_to_bot(text)


@pytest.mark.parametrize("text", HELD_OUT["others"])
def test_a_reply_to_somebody_else_is_left_alone(text: str) -> None:
    assert not addressed_to_bot(text, mentions_others=True)
    # …unless the bot is mentioned too.
    assert addressed_to_bot(text, mentions_bot=True, mentions_others=True)


@pytest.mark.parametrize("text", HELD_OUT["questions"])
def test_questions_and_requests_are_answered_with_or_without_a_question_mark(text: str) -> None:
    assert addressed_to_bot(text)


def test_shapes_not_phrases() -> None:
    # A request verb followed by 得 describes ("总结得很好"); the same verb asks ("总结一下").
    assert not asks_something("总结得很好") and asks_something("总结一下")
    # An English interrogative counts where a question starts, not inside a statement.
    assert asks_something("thanks! which models does it support") and not asks_something(
        "this is what we need"
    )
    assert not asks_something("what a clean fix!") and asks_something("what are the risks")
    # A question mark inside a URL is not a question.
    assert not asks_something("see https://github.com/vllm-project/vllm/pull/1?tab=files")
    assert is_chatter("👍🎉") and is_chatter(":+1: :tada:") and is_chatter("收到～谢谢！")


@pytest.mark.parametrize(
    "text",
    [
        "好的，我看看",
        "我来 review 一下",
        "同问",
        "谢谢分享！很有启发",
        "666",
        "👀",
        "ok will check",
        "should be fine",
        "thanks for sharing!",
        "ack, thanks",
        "let me check",
        "这个我之前也遇到过",
    ],
)
def test_more_chatter_of_our_own(text: str) -> None:
    assert not addressed_to_bot(text)


def test_a_terse_follow_up_phrasing_is_a_question_but_praise_is_not() -> None:
    for text in ("root cause", "related PRs", "风险点", "链接", "merge date"):
        assert addressed_to_bot(text), text
    for text in ("nice design", "测试设计很巧妙", "good tests", "性能不错"):
        assert not addressed_to_bot(text), text


def test_modes() -> None:
    assert addressed_to_bot("lgtm", mode="all")
    assert not addressed_to_bot("重点看什么？", mode="mentions")
    assert addressed_to_bot("重点看什么？", mentions_bot=True, mode="mentions")
    assert addressed_to_bot("", mentions_bot=True)  # a bare mention asks for the summary
    assert not addressed_to_bot("thanks!", mentions_bot=True)  # thanks to the bot is not a question


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=120))
def test_any_text_is_classified_without_error_and_emoji_alone_never_asks(text: str) -> None:
    addressed_to_bot(text)
    emoji_only = "".join(ch for ch in text if ord(ch) >= 0x1F300)
    assert not addressed_to_bot(emoji_only)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(categories=["L", "N", "Zs"]), max_size=60))
def test_a_question_mark_makes_any_non_chatter_a_question(text: str) -> None:
    if not is_chatter(text + "?"):
        assert addressed_to_bot(text + "?")
