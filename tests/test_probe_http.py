"""Strange text through real signed HTTP: whatever a person types, the slash command, a DM and a
mention answer with a non-empty, markup-safe message that quotes it as typed (escaped once),
with no control or bidi-override characters and never a 500.

Slack sends what people type with `&`, `<` and `>` as entities and mentions, channels and links
as markup; `escape` below makes the Slack form of a typed text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatbot.slack.mrkdwn import escape
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.wiring import build
from tests.fakeslack import BOT_USER_ID, FakeSlack
from tests.slackrequests import (
    all_text,
    button_body,
    command_body,
    event_body,
    post,
    rendered_strings,
    signed_headers,
)
from tests.test_slack_http import settings_for

# Slack's markup as it arrives in a message or a command (not typed: Slack writes it).
MARKUP = [
    "<@U0123ABC>",
    "<@U0123ABC|Ann Lee>",
    "<#C0123|general>",
    "<!here>",
    "<!channel>",
    "<!subteam^S0123|@team>",
    "<https://github.com/vllm-project/vllm/pull/53529|the PR>",
    "<https://example.com/x>",
]
# Typed pieces: anything but `;` (so no entity can be typed literally: every `&lt;` in what
# Slack sends is Slack's escaping of a typed `<`), with controls, bidi overrides, zero-width
# characters, emoji and full-width letters among them.
ODD = "<>&\"'`*_~#|\x00\x01\x07\x1b\x7f\x85\u200b\u200d\u202a\u202e\u2066\u2069\ufeff👨‍👩‍👧ｃｏｍｐｉｌｅ编译"
TYPED = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters=";"),
        st.sampled_from(ODD),
    ),
    max_size=60,
)
WORDS = st.sampled_from(["compile", "cuda", "xyzzy", "help", "latest", "topics", "#53529", " ", "\n"])
SLACK_TEXT = st.lists(st.one_of(TYPED.map(escape), WORDS, st.sampled_from(MARKUP)), max_size=6).map("".join)

DOUBLE_ESCAPED = ("&amp;lt;", "&amp;gt;", "&amp;amp;")
UNSEEN = {
    *map(chr, (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0))),
    *map(chr, (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200B, 0x2060, 0xFEFF)),
}


@dataclass
class Probed:
    fake: FakeSlack
    url: str


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Probed]:
    """One server for many examples (hypothesis runs each through HTTP)."""
    cache: Path = tmp_path_factory.mktemp("cache")
    with FakeSlack() as fake:
        bot = build(settings_for(fake, language="en", cache_dir=cache))
        server = HttpServer(asgi_app(bot.app, bot.health), host="127.0.0.1", port=0).start()
        yield Probed(fake, f"http://127.0.0.1:{server.port}/slack/events")
        server.stop()
        bot.close()


def assert_safe_answer(message: dict[str, Any], *, typed_entities: bool = False) -> str:
    """A message with something to read, no markup a person could have smuggled in, nothing
    escaped twice (unless an entity was typed as such), no controls or bidi overrides; its
    rendered text."""
    shown = rendered_strings(message)
    text = "\n".join(shown)
    assert message.get("text", "").strip(), message
    for piece in shown:
        for markup in ("<!", "<@", "<#"):
            assert markup not in piece, piece
    for twice in DOUBLE_ESCAPED:
        assert typed_entities or twice not in text, text
    assert not UNSEEN & set(text), [c for c in text if c in UNSEEN]
    assert "Traceback" not in text
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=SLACK_TEXT)
def test_any_slash_text_gets_a_safe_answer_in_the_ack(probed: Probed, text: str) -> None:
    response = post(probed.url, command_body(text, probed.fake.response_url("probe")), timeout=10)
    assert response.status_code == 200
    assert_safe_answer(response.json())


@pytest.mark.parametrize(
    ("typed", "quoted"),
    [
        ("xyzzy <b> & co", "“xyzzy &lt;b&gt; &amp; co”"),
        ("plugh&lt;", "“plugh&amp;lt;”"),  # typed as such: Slack sends `&amp;lt;`
        ("a\u202ezyx\u202c b\x00c", "“azyx b c”"),
    ],
)
def test_the_slash_command_quotes_what_was_typed(probed: Probed, typed: str, quoted: str) -> None:
    answer = post(probed.url, command_body(escape(typed), probed.fake.response_url("q"))).json()
    assert quoted in assert_safe_answer(answer, typed_entities="&lt;" in typed)


@pytest.mark.parametrize(
    "text", ["ＨＥＬＰ", "Ｈｅｌｐ", "ｈｅｌｐ", "\u200bhelp", "help\ufeff", "\u2060HELP\u200b"]
)
def test_a_subcommand_in_full_width_or_with_invisible_characters_is_the_subcommand(
    probed: Probed, text: str
) -> None:
    answer = post(probed.url, command_body(text, probed.fake.response_url("w"))).json()
    shown = all_text(answer)
    for sub in ("today", "latest", "topics", "help"):
        assert f"/vllm-digest {sub}" in shown


@pytest.mark.parametrize(
    "event",
    [
        {"type": "app_mention", "channel": "C0PROBE", "user": "U0ASKER", "text": f"<@{BOT_USER_ID}> "},
        {"type": "message", "channel_type": "im", "channel": "D0PROBE", "user": "U0ASKER", "text": ""},
    ],
    ids=["mention", "dm"],
)
def test_a_message_quotes_what_was_typed(probed: Probed, event: dict[str, Any]) -> None:
    ts = f"1800000000.{abs(hash(event['type'])) % 1000000:06d}"
    typed = "xyzzy <b> & co \u202eplugh"
    body = event_body({**event, "text": event["text"] + escape(typed), "ts": ts})
    headers = {**signed_headers(body), "Content-Type": "application/json"}
    assert post(probed.url, body, headers).status_code == 200
    posted = probed.fake.wait_for(
        "chat.postMessage", where=lambda c: c.params.get("channel") == event["channel"]
    )
    assert "“xyzzy &lt;b&gt; &amp; co plugh”" in assert_safe_answer(posted.params)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ('{"q": "cuda", "o": -5}', "Results for “cuda”: 1–2 of 2"),
        ('{"q": "cuda", "o": 1000000000000}', "Results for “cuda”: 1–2 of 2"),  # past the end
        ("garbage", "can't be paged any more"),
        ('{"q": "cuda", "o": "5"}', "can't be paged any more"),
        ('{"q": "cuda", "o": Infinity}', "can't be paged any more"),
        ('{"q": ["cuda"], "o": 5}', "can't be paged any more"),
        ('{"o": 5}', "can't be paged any more"),
        ("[]", "can't be paged any more"),
        (None, "can't be paged any more"),
    ],
)
def test_a_more_results_press_with_an_odd_value_gets_a_page_or_says_why_not(
    probed: Probed, value: str | None, shown: str
) -> None:
    """The offset is clamped to the results (the digest may have changed since the button was
    made); a value we never wrote gets one line, not silence."""
    key = f"more{abs(hash(value))}"
    button = {"action_id": "more_results:5", "value": value}
    assert post(probed.url, button_body(button, probed.fake.response_url(key))).status_code == 200
    answer = probed.fake.wait_for("response", where=lambda c: c.path.endswith(f"/{key}"))
    assert shown in assert_safe_answer(answer.params)


COMPILE_ID = "51badd0821"  # the bundled digest's compile entry (#53529)
PICKED = {
    "share_channel": {"share_channel": {"type": "conversations_select", "selected_conversation": "C0PICKED"}}
}


@pytest.mark.parametrize(
    ("state", "error"),
    [
        (None, "Pick a channel to share to."),
        ({}, "Pick a channel to share to."),
        ({"values": {}}, "Pick a channel to share to."),
        ({"values": {"share_channel": "C0PICKED"}}, "Pick a channel to share to."),
        (
            {"values": {"share_channel": {"share_channel": {"selected_conversation": ["C0PICKED"]}}}},
            "Pick a channel to share to.",
        ),
        ({"values": PICKED, "gone": True}, "That entry is no longer in the digest."),
    ],
    ids=[
        "no-state",
        "no-values",
        "no-block",
        "block-not-an-object",
        "conversation-not-a-string",
        "entry-gone",
    ],
)
def test_a_share_picker_submission_without_a_channel_keeps_the_modal_open_with_the_reason(
    probed: Probed, state: dict[str, Any] | None, error: str
) -> None:
    metadata = "no-such-entry" if state and state.pop("gone", False) else COMPILE_ID
    view: dict[str, Any] = {
        "type": "modal",
        "id": "V0",
        "callback_id": "share_picker",
        "private_metadata": metadata,
    }
    if state is not None:
        view["state"] = state
    payload = {"type": "view_submission", "team": {"id": "T1"}, "user": {"id": "U0ASKER"}, "view": view}
    response = post(probed.url, urlencode({"payload": json.dumps(payload)}))
    assert response.status_code == 200
    assert response.json() == {"response_action": "errors", "errors": {"share_channel": error}}
    assert not [
        c for c in probed.fake.calls("chat.postMessage") if "C0PICKED" in str(c.params.get("channel"))
    ]


def test_the_home_search_box_quotes_no_controls_or_bidi_overrides(probed: Probed) -> None:
    box = {"action_id": "home_search", "value": "xyzzy\x00plugh \u202eyzzyx\x1b"}
    assert post(probed.url, button_body(box, probed.fake.response_url("home"))).status_code == 200
    opened = probed.fake.wait_for(
        "views.open", where=lambda c: "xyzzy" in json.dumps(c.params, ensure_ascii=False)
    )
    shown = "\n".join(rendered_strings({"blocks": opened.params["view"]["blocks"]}))
    assert "“xyzzy plugh yzzyx”" in shown
    assert not UNSEEN & set(shown)


@pytest.mark.parametrize(
    "odd",
    ["not an object", {"url": None}, {"domain": "github.com"}, {"url": ["x"]}, 7],
    ids=["string", "url-null", "no-url", "url-list", "number"],
)
def test_an_odd_link_in_link_shared_does_not_stop_the_others_unfurling(probed: Probed, odd: object) -> None:
    url = "https://github.com/vllm-project/vllm/pull/53529/files"
    ts = f"1800000100.{abs(hash(str(odd))) % 1000000:06d}"
    links = [odd, {"domain": "github.com", "url": url}]
    body = event_body(
        {"type": "link_shared", "channel": "C0LINKS", "user": "U0ASKER", "message_ts": ts, "links": links}
    )
    assert (
        post(probed.url, body, {**signed_headers(body), "Content-Type": "application/json"}).status_code
        == 200
    )
    unfurl = probed.fake.wait_for("chat.unfurl", where=lambda c: c.params.get("ts") == ts)
    assert list(unfurl.params["unfurls"]) == [url]
    assert "新增 Qwen3-VL DeepStack 编译契约回归测试" in json.dumps(
        unfurl.params["unfurls"], ensure_ascii=False
    )


_dm_numbers = iter(range(10**6))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=SLACK_TEXT)
def test_any_direct_message_gets_one_safe_answer(probed: Probed, text: str) -> None:
    ts = f"1800000200.{next(_dm_numbers):06d}"
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D0ANY",
        "user": "U0ASKER",
        "text": text,
        "ts": ts,
    }
    body = event_body(event)
    assert (
        post(probed.url, body, {**signed_headers(body), "Content-Type": "application/json"}).status_code
        == 200
    )
    posted = probed.fake.wait_for(
        "chat.postMessage", where=lambda c: c.params.get("channel") == "D0ANY", count=1 + int(ts[-6:])
    )
    assert_safe_answer(posted.params)


@pytest.mark.parametrize("odd", ["a string", 7, None, ["nested"]], ids=["string", "number", "null", "list"])
def test_an_odd_attachment_does_not_stop_the_message_shortcut_answering(probed: Probed, odd: object) -> None:
    key = f"shortcut{abs(hash(str(odd)))}"
    message = {"type": "message", "user": "U0AUTHOR", "text": "look", "ts": "1700000000.000100"}
    message["attachments"] = [odd, {"fallback": "see #53529"}]
    payload = {
        "type": "message_action",
        "callback_id": "ask_vllm_digest",
        "team": {"id": "T0000001"},
        "user": {"id": "U0ASKER", "username": "asker"},
        "channel": {"id": "C0CHAN", "name": "vllm"},
        "message": message,
        "response_url": probed.fake.response_url(key),
        "trigger_id": "1.2.3",
    }
    assert post(probed.url, urlencode({"payload": json.dumps(payload)})).status_code == 200
    answer = probed.fake.wait_for("response", where=lambda c: c.path.endswith(f"/{key}"))
    assert "新增 Qwen3-VL DeepStack 编译契约回归测试" in assert_safe_answer(answer.params)
