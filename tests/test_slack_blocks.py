"""Block Kit rendering: escaping of anything a user or curator wrote, and Slack's limits."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest.library import Library
from chatbot.digest.model import Entry
from chatbot.search.index import Hit, SearchResult
from chatbot.slack import blocks, views
from chatbot.slack.feedback import feedback_value, parse_feedback_value
from chatbot.slack.handlers.command import Request, ephemeral_ack, parse
from chatbot.slack.mrkdwn import clip, escape, link, truncate
from chatbot.usage import FeedbackTarget
from tests.conftest import DIGESTS
from tests.slackrequests import rendered_strings

OUR_LINK = re.compile(r"<https://[^<>|\s]+\|[^<>]*>")
ENTITY = re.compile(r"&(amp|lt|gt);")

BASE = Library.load(DIGESTS)
DAY = dt.date(2026, 11, 30)


def assert_safe(message: dict[str, Any]) -> None:
    for text in rendered_strings(message):
        bare = OUR_LINK.sub("", text)
        assert "<" not in bare and ">" not in bare, text
        assert "&" not in ENTITY.sub("", bare), text
        assert "<!" not in text


def assert_within_limits(message: dict[str, Any]) -> None:
    assert message["text"]
    assert len(message["blocks"]) <= 50
    for block in message["blocks"]:
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
        if block["type"] == "section":
            assert 0 < len(block["text"]["text"]) <= 3000
        if block["type"] == "context":
            assert len(block["elements"]) <= 10
        if block["type"] == "actions":
            for element in block["elements"]:
                assert len(element["text"]["text"]) <= 75
                assert len(element.get("value", "")) <= 2000
                assert len(element["action_id"]) <= 255


def entry_with(text: str, base: Entry) -> Entry:
    return base.model_copy(
        update={
            "title": text,
            "why": text,
            "verdict": text[:20],
            "highlights": [text, text * 3],
            "audience": text * 2,
            "caveats": [text] * 7,
            "author": text[:30],
            "github_title": text,
        }
    )


tricky = st.sampled_from(
    ["<!channel>", "<!here>", "<@U123>", "&amp;", "&", "<", ">", "<https://evil|x>", "*", "`", "|", "\n"]
)
user_text = st.lists(st.text(max_size=30) | tricky, max_size=30).map("".join) | st.text(
    min_size=2000, max_size=5000
)


@settings(max_examples=150, deadline=None)
@given(user_text)
def test_user_text_is_escaped_and_inside_limits(text: str) -> None:
    base = BASE.entries[1]
    entry = entry_with(text, base)
    result = SearchResult(text, [Hit(entry, 1.0, [text, text[:5]])] * 5, total=12)
    messages = [
        blocks.render_results(result, "en", offset=0),
        blocks.render_results(SearchResult(text, [], 0, [text, "compile"]), "zh"),
        blocks.render_entry_card(entry, "zh", header=text),
        blocks.render_entry_card(entry, "en", shared_by=text),
        blocks.render_today(entry, "en"),
        blocks.render_latest([entry] * 20, "zh"),
        blocks.render_topics([(text, 3)] * 150, "en"),
        blocks.render_text(text),
        views.render_link_preview(entry, "zh"),
        views.render_home(
            today=entry, newest=[entry] * 5, topics=[(text, 2)], channels=[], day=DAY, lang="en"
        ),
        views.render_entry_modal(entry, "zh"),
        views.render_search_modal(result, "en"),
        views.render_share_picker(entry, "zh"),
        views.render_dm_answer(result, "zh"),
        views.render_shortcut_answer([entry] * 3, "en"),
    ]
    for message in messages:
        message.setdefault("text", "view")
        assert_safe(message)
        assert_within_limits(message)


@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_truncation_keeps_entities_whole_and_marks_the_cut(text: str, limit: int) -> None:
    cut = truncate(escape(text), limit)
    assert len(cut) <= max(limit, 1)
    assert "&" not in ENTITY.sub("", cut)
    if len(escape(text)) > limit:
        assert cut.endswith("…")
    else:
        assert cut == escape(text)


@given(st.lists(st.text(max_size=40) | st.integers(1, 99999), max_size=12), st.integers(1, 300))
def test_truncation_keeps_links_whole(pieces: list[str | int], limit: int) -> None:
    """Escaped text with `<url|#N>` links (a model's answer with citations) cut anywhere."""
    text = "".join(
        link(f"https://github.com/vllm-project/vllm/pull/{p}", f"#{p}") if isinstance(p, int) else escape(p)
        for p in pieces
    )
    cut = truncate(text, limit)
    assert len(cut) <= max(limit, 1)
    assert re.sub(r"<https://[^<>|]+\|#\d+>", "", cut).count("<") == 0
    assert cut.count("<") == cut.count(">")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["search", "answer"]), st.text(max_size=40) | st.none())
def test_a_feedback_value_is_the_compact_json_of_its_target(text: str, kind: str, intent: str | None) -> None:
    target = FeedbackTarget(kind, text, f"e{len(text)}", intent)  # type: ignore[arg-type]
    data = {"k": kind, "t": text, "e": target.entry_id, **({"i": intent} if intent else {})}
    value = feedback_value(target)
    assert value == json.dumps(data, ensure_ascii=False, separators=(",", ":"))[:2000]
    if len(value) < 2000:
        assert parse_feedback_value(value) == FeedbackTarget(kind, text, target.entry_id, intent or None)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(user_text, st.text(max_size=40))
def test_the_ack_body_is_the_compact_json_of_the_answer(text: str, query: str) -> None:
    """The ack is written by orjson; its body must be what json.dumps(ensure_ascii=False) wrote."""
    entry = entry_with(text, BASE.entries[1])
    result = SearchResult(query, [Hit(entry, 1.0, [text, query])] * 3, total=9)
    for message in (blocks.render_results(result, "zh"), blocks.render_text(text), blocks.render_help("en")):
        body = ephemeral_ack(message).body
        assert body == json.dumps(
            {**message, "response_type": "ephemeral"}, ensure_ascii=False, separators=(",", ":")
        )


def test_an_entry_changed_under_the_same_id_is_shown_as_it_is_now() -> None:
    """Titles and verdicts are kept per entry between answers; a reloaded entry (same id, new
    text) must show its new text, and the old one still its own."""
    base = BASE.entries[1]
    edited = entry_with("Renamed in the digest", base)
    for entry in (base, edited, base):
        shown = blocks.render_results(SearchResult("q", [Hit(entry, 1.0, ["q"])], 1), "en")
        assert escape(entry.title) in shown["blocks"][2]["text"]["text"]
        assert escape(entry.verdict or "") in shown["blocks"][2]["text"]["text"]
    assert escape(base.title) != escape(edited.title)


def test_escape_turns_mentions_into_plain_text() -> None:
    assert clip("<!channel> & <@U1>", 100) == "&lt;!channel&gt; &amp; &lt;@U1&gt;"


def test_command_grammar() -> None:
    assert parse("") == Request("help")
    assert parse("  help ") == Request("help")
    assert parse("TODAY") == Request("today")
    assert parse("topics") == Request("topics")
    assert parse("latest") == Request("latest")
    assert parse("compile") == Request("search", "compile")
    assert parse("today compile") == Request("search", "today compile")
    assert parse("spec   decode") == Request("search", "spec decode")


def test_entry_card_has_every_part_and_the_thread_hint(seed_library: Library) -> None:
    entry = seed_library.get("53529")
    assert entry is not None
    card = blocks.render_entry_card(entry, "zh", header="今日 PR")
    assert card["blocks"][0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "今日 PR", "emoji": True},
    }
    shown = "\n".join(rendered_strings(card))
    assert f"<{entry.url}|{entry.title}>" in shown
    assert "为什么值得读" in shown and "重点关注" in shown and "适合谁读" in shown and "注意" in shown
    assert "由于 #53516 尚未调查清楚" in shown
    assert "讨论串里追问" in shown
    assert card["text"].startswith("今日 PR: 新增 Qwen3-VL DeepStack")
    english = blocks.render_entry_card(entry, "en", header="PR of the day")
    assert "Ask in this thread" in "\n".join(rendered_strings(english))


def test_no_match_says_so_and_suggests_topics() -> None:
    message = blocks.render_results(SearchResult("xyzzy", [], 0, ["multimodal", "torch.compile"]), "en")
    shown = "\n".join(rendered_strings(message))
    assert "No entry matches “xyzzy”" in shown
    assert "`multimodal`" in shown and "`torch.compile`" in shown
    assert not [b for b in message["blocks"] if b["type"] == "actions"]


def test_the_daily_post_is_the_entry_card_under_its_header(seed_library: Library) -> None:
    from chatbot.daily.jobs import daily_message

    entry = seed_library.get("53529")
    assert entry is not None
    posted = daily_message(entry, "zh")
    assert posted.text == (
        "今日 PR: 新增 Qwen3-VL DeepStack 编译契约回归测试 https://github.com/vllm-project/vllm/pull/53529"
    )
    assert posted.blocks[:2] == [
        {"type": "header", "text": {"type": "plain_text", "text": "今日 PR", "emoji": True}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "*<https://github.com/vllm-project/vllm/pull/53529|新增 Qwen3-VL DeepStack 编译契约回归测试>*"
                "  `#53529`",
            },
        },
    ]
    assert posted.blocks[-1] == {
        "type": "context",
        "elements": [
            {"type": "mrkdwn", "text": "有问题？直接在本帖的讨论串里追问，例如“重点看什么？”“有什么风险？”"}
        ],
    }
    assert {"type": "mrkdwn", "text": "*注意*\n• 由于 #53516 尚未调查清楚，该契约未来仍可能被重新审视"} in [
        b.get("text") for b in posted.blocks
    ]
