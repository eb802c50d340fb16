"""Slack surfaces end to end: link previews, App Home, direct messages, the message shortcut and
each person's language — signed requests over real HTTP in, what the fake Slack received out."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from chatbot.bot import Bot
from chatbot.digest import Library
from chatbot.live import LiveIndex
from chatbot.settings import Settings
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.conftest import DIGESTS
from tests.fakeslack import Call, FakeSlack
from tests.slackrequests import (
    all_text,
    button_body,
    buttons,
    command_body,
    event_body,
    post,
    shortcut_body,
    signed_headers,
    view_submission_body,
)
from tests.test_slack_http import settings_for as http_settings

DEEPSTACK_TITLE = "新增 Qwen3-VL DeepStack 编译契约回归测试"
DEEPSTACK_URL = "https://github.com/vllm-project/vllm/pull/53529"
MEDIA_TITLE = "混合模态媒体并发解析提速 8%-22%"
MEDIA_URL = "https://github.com/vllm-project/vllm/pull/54537"


@dataclass
class Served:
    fake: FakeSlack
    bot: Bot
    server: HttpServer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/slack/events"

    def event(self, event: dict[str, Any], retry: int = 0, body: str | None = None) -> str:
        """Send an event_callback (JSON, signed); its body, to send again as a retry."""
        body = body or event_body(event)
        headers = {**signed_headers(body), "Content-Type": "application/json"}
        if retry:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        assert post(self.url, body, headers).status_code == 200
        return body

    def form(self, body: str) -> dict[str, Any]:
        response = post(self.url, body)
        assert response.status_code == 200, response.text
        return response.json() if response.content else {}

    def settle(self) -> None:
        assert self.bot.wait_idle(timeout=10)


def settings_for(fake: FakeSlack, digest_dir: Path = DIGESTS, language: str = "auto") -> Settings:
    """The HTTP tests' settings with a daily channel (shown on Home), LANGUAGE=auto by default."""
    settings = http_settings(fake, language)
    return settings.model_copy(update={"digest_dir": digest_dir, "daily_channels": ["C0DAILY"]})


def serve(fake: FakeSlack, settings: Settings, store: SqlStore | None = None) -> Served:
    bot = build(settings, store=store)
    return Served(fake, bot, HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start())


@pytest.fixture
def served(fake_slack: FakeSlack) -> Iterator[Served]:
    fake_slack.set_locale("U0ZH", "zh-CN")
    fake_slack.set_locale("U0EN", "en-US")
    app = serve(fake_slack, settings_for(fake_slack))
    yield app
    app.server.stop()
    app.bot.close()


def assert_valid_blocks(blocks: list[dict[str, Any]]) -> None:
    """Every block parses with slack_sdk's models, passes their checks and loses nothing."""
    for block in blocks:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()
        assert parsed.to_dict() == block


def assert_valid_view(view: dict[str, Any]) -> None:
    model = View(**view)
    model.validate_json()
    assert_valid_blocks(view["blocks"])
    assert model.to_dict()["blocks"] == view["blocks"]


def link_shared(url: str, ts: str = "1800000000.000100", **extra: Any) -> dict[str, Any]:
    return {
        "type": "link_shared",
        "channel": "C0CHAN",
        "user": "U0ZH",
        "message_ts": ts,
        "links": [{"domain": "github.com", "url": url}],
        **extra,
    }


def dm(text: str, ts: str, user: str = "U0ZH", **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "channel_type": "im",
        "channel": "D0DM",
        "user": user,
        "text": text,
        "ts": ts,
        **extra,
    }


# -- link previews ------------------------------------------------------------------------------


def test_a_link_to_a_pr_in_the_digest_unfurls_to_the_curators_card(served: Served) -> None:
    served.event(link_shared(DEEPSTACK_URL))
    call = served.fake.wait_for("chat.unfurl")
    assert call.params["channel"] == "C0CHAN" and call.params["ts"] == "1800000000.000100"
    preview = call.params["unfurls"][DEEPSTACK_URL]
    shown = all_text(preview)
    assert "DeepStack" in shown and f"<{DEEPSTACK_URL}|{DEEPSTACK_TITLE}>" in shown
    assert "值得精读" in shown and "重点关注" in shown
    assert [b["text"]["text"] for b in buttons(preview)] == ["在讨论串里提问"]
    assert_valid_blocks(preview["blocks"])


@pytest.mark.parametrize(
    "url",
    [
        f"{DEEPSTACK_URL}/",
        f"{DEEPSTACK_URL}/files",
        f"{DEEPSTACK_URL}/files#diff-0a1b2c",
        f"{DEEPSTACK_URL}#issuecomment-3221234567",
        f"{DEEPSTACK_URL}/commits/4f2e9c1",
        f"{DEEPSTACK_URL}?w=1",
        "http://www.github.com/vLLM-project/vllm/pull/53529",
    ],
)
def test_every_url_form_of_the_pr_unfurls(served: Served, url: str) -> None:
    served.event(link_shared(url))
    call = served.fake.wait_for("chat.unfurl")
    assert list(call.params["unfurls"]) == [url]
    assert DEEPSTACK_TITLE in all_text(call.params["unfurls"][url])


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/vllm-project/vllm/pull/1",  # not in the digest
        "https://github.com/vllm-project/vllm/issues/53529",  # an issue, not the PR
        "https://github.com/sgl-project/sglang/pull/53529",  # another repository's PR 53529
        "https://github.com/vllm-project/vllm/pull/535290",
        "https://github.com/vllm-project/vllm",
    ],
)
def test_links_that_are_not_a_pr_in_the_digest_are_left_alone(served: Served, url: str) -> None:
    served.event(link_shared(url))
    served.settle()
    assert [c.method for c in served.fake.calls()] == ["auth.test"]  # Bolt's own, at start


def test_a_message_with_several_links_unfurls_the_digest_ones_and_a_retry_unfurls_nothing(
    served: Served,
) -> None:
    event = link_shared(DEEPSTACK_URL)
    event["links"] += [
        {"domain": "github.com", "url": "https://github.com/vllm-project/vllm/pull/1"},
        {"domain": "github.com", "url": f"{MEDIA_URL}/files"},
    ]
    body = served.event(event)
    served.event(event, retry=1, body=body)
    served.event(event, retry=2, body=body)
    served.settle()
    calls = served.fake.calls("chat.unfurl")
    assert len(calls) == 1
    assert sorted(calls[0].params["unfurls"]) == [DEEPSTACK_URL, f"{MEDIA_URL}/files"]
    assert MEDIA_TITLE in all_text(calls[0].params["unfurls"][f"{MEDIA_URL}/files"])


def test_a_link_in_the_composer_unfurls_by_its_unfurl_id(served: Served) -> None:
    served.event(link_shared(DEEPSTACK_URL, ts="", unfurl_id="C0CHAN.U0ZH.abc", source="composer"))
    call = served.fake.wait_for("chat.unfurl")
    assert call.params["unfurl_id"] == "C0CHAN.U0ZH.abc" and call.params["source"] == "composer"


def test_ask_in_a_thread_posts_the_card_under_the_link_and_answers_follow_ups_there(served: Served) -> None:
    served.event(link_shared(DEEPSTACK_URL))
    preview = served.fake.wait_for("chat.unfurl").params["unfurls"][DEEPSTACK_URL]
    press = button_body(buttons(preview)[0], served.fake.response_url("press"))
    press = press.replace("%22is_ephemeral%22%3A+true", "%22message_ts%22%3A+%221800000000.000100%22")
    served.form(press)
    card = served.fake.wait_for("chat.postMessage")
    assert card.params["thread_ts"] == "1800000000.000100" and card.params["channel"] == "C0CHAN"
    assert DEEPSTACK_TITLE in all_text(card.params) and "讨论串里追问" in all_text(card.params)
    reply = {"type": "message", "channel_type": "channel", "channel": "C0CHAN", "user": "U0ZH"}
    served.event(
        reply | {"text": "有什么风险？", "ts": "1800000000.000200", "thread_ts": "1800000000.000100"}
    )
    answer = served.fake.wait_for("chat.postMessage", count=2)
    assert answer.params["thread_ts"] == "1800000000.000100"
    assert "53516" in all_text(answer.params)


# -- App Home -----------------------------------------------------------------------------------


def home_opened(user: str = "U0ZH", view: dict[str, Any] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "app_home_opened", "user": user, "channel": "D0DM", "tab": "home"}
    if view is not None:
        event["view"] = view
    return event


def test_app_home_shows_todays_entry_newest_topics_and_channels(served: Served) -> None:
    served.event(home_opened())
    call = served.fake.wait_for("views.publish")
    assert call.params["user_id"] == "U0ZH"
    view = call.params["view"]
    assert view["type"] == "home"
    assert_valid_view(view)
    today = served.bot.live.newest()
    assert today is not None
    shown = all_text(view)
    texts = [b["text"]["text"] for b in view["blocks"] if b.get("text")]
    assert texts[texts.index("今日 PR") + 1].startswith(f"*<{today.url}|{today.title}>*")
    assert "最新条目" in shown and MEDIA_TITLE in shown
    topic, count = served.bot.index.topics()[0]
    assert f"`{topic}` ({count})" in shown
    assert "<#C0DAILY>" in shown
    search = next(b for b in view["blocks"] if b["type"] == "input")
    assert search["dispatch_action"] is True and search["element"]["type"] == "plain_text_input"


def test_app_home_is_published_again_only_when_the_digest_changed(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    digests = tmp_path / "digests"
    shutil.copytree(DIGESTS, digests)
    app = serve(fake_slack, settings_for(fake_slack, digests))
    app.bot.live.refresh_every = 0
    try:
        app.event(home_opened())
        first = fake_slack.wait_for("views.publish").params["view"]
        app.event(home_opened(view=first))  # Slack sends the current view: still up to date
        app.event({**home_opened(), "tab": "messages"})  # the Messages tab: not ours to publish
        app.settle()
        assert len(fake_slack.calls("views.publish")) == 1
        (digests / "vllm-digest-2026-09.yaml").write_text(
            "repo: vllm-project/vllm\ndigest: vllm-digest-2026-09\nentries:\n"
            "  - title: 新条目标题 Home 刷新\n    pr: 60001\n    date: 2026-09-02\n"
            "    note: 值得精读。测试 Home 的刷新。\n",
            encoding="utf-8",
        )
        assert app.bot.live.wait_reloaded(30)  # the reload runs in the background
        app.event(home_opened(view=first))
        second = fake_slack.wait_for("views.publish", count=2).params["view"]
        assert second["private_metadata"] != first["private_metadata"]
        assert "新条目标题 Home 刷新" in all_text(second)
    finally:
        app.server.stop()
        app.bot.close()


def test_open_on_home_shows_the_full_card_in_a_modal_and_search_opens_results(served: Served) -> None:
    served.event(home_opened())
    view = served.fake.wait_for("views.publish").params["view"]
    open_media = next(b for b in view["blocks"] if b.get("accessory", {}).get("value") == "0e7c6e404a")
    press = {"type": "block_actions", "user": {"id": "U0ZH"}, "trigger_id": "9.9.9", "view": view}
    press |= {"container": {"type": "view"}, "actions": [open_media["accessory"]]}
    served.form(form_payload(press))
    modal = served.fake.wait_for("views.open").params
    assert modal["trigger_id"] == "9.9.9" and modal["view"]["type"] == "modal"
    assert_valid_view(modal["view"])
    shown = all_text(modal["view"])
    assert MEDIA_TITLE in shown and "重点关注" in shown and "为什么值得读" in shown

    search = {"type": "block_actions", "user": {"id": "U0ZH"}, "trigger_id": "9.9.8", "view": view}
    search |= {"actions": [{"type": "plain_text_input", "action_id": "home_search", "value": "compile"}]}
    served.form(form_payload(search))
    results = served.fake.wait_for("views.open", count=2).params["view"]
    assert_valid_view(results)
    assert DEEPSTACK_TITLE in all_text(results)
    # Open from the results modal pushes the card on top of it.
    open_deepstack = next(b for b in results["blocks"] if b.get("accessory", {}).get("value") == "51badd0821")
    push = {"type": "block_actions", "user": {"id": "U0ZH"}, "trigger_id": "9.9.7", "view": results}
    push |= {"actions": [open_deepstack["accessory"]]}
    served.form(form_payload(push))
    pushed = served.fake.wait_for("views.push").params["view"]
    assert_valid_view(pushed)
    assert f"<{DEEPSTACK_URL}|{DEEPSTACK_TITLE}>" in all_text(pushed)


def form_payload(payload: dict[str, Any]) -> str:
    import json
    from urllib.parse import urlencode

    return urlencode({"payload": json.dumps(payload)})


# -- direct messages ----------------------------------------------------------------------------


def test_a_dm_topic_gets_the_entry_card_and_its_thread_takes_follow_ups(served: Served) -> None:
    served.event(dm("compile", ts="1800000000.000300"))
    answer = served.fake.wait_for("chat.postMessage")
    assert answer.params["channel"] == "D0DM" and not answer.params.get("thread_ts")
    shown = all_text(answer.params)
    assert f"<{DEEPSTACK_URL}|{DEEPSTACK_TITLE}>" in shown and "讨论串里追问" in shown
    assert_valid_blocks(answer.params["blocks"])
    assert any(b["action_id"].startswith("share_entry") for b in buttons(answer.params))
    card_ts = answer.response["ts"]
    served.event(dm("有什么风险？", ts="1800000000.000301", thread_ts=card_ts))
    reply = served.fake.wait_for("chat.postMessage", count=2)
    assert reply.params["thread_ts"] == card_ts
    assert "53516" in all_text(reply.params)


def test_a_dm_is_answered_once_and_the_bots_own_dm_messages_are_not(served: Served) -> None:
    body = served.event(dm("compile", ts="1800000000.000400"))
    served.event({}, retry=1, body=body)
    served.event(dm("compile", ts="1800000000.000400"))  # same message, another event id
    served.event(dm("card", ts="1800000000.000401", user=served.fake.bot_user_id, bot_id="BBOT0001"))
    served.event(dm("", ts="1800000000.000402", subtype="message_changed"))
    served.settle()
    assert len(served.fake.calls("chat.postMessage")) == 1


def test_a_dm_with_no_match_says_so(served: Served) -> None:
    served.event(dm("xyzzy plugh", ts="1800000000.000500"))
    shown = all_text(served.fake.wait_for("chat.postMessage").params)
    assert "没有找到与 “xyzzy plugh” 相关的条目" in shown


def test_a_dm_of_a_subcommand_answers_like_the_command(served: Served) -> None:
    served.event(dm("help", ts="1800000000.000510"))
    shown = all_text(served.fake.wait_for("chat.postMessage").params)
    assert "/vllm-digest today" in shown and "按主题搜索精读条目" in shown
    served.event(dm("latest", ts="1800000000.000511", user="U0EN"))
    latest = served.fake.wait_for("chat.postMessage", count=2).params
    assert "Newest entries" in all_text(latest) and MEDIA_TITLE in all_text(latest)
    served.event(dm("today", ts="1800000000.000512"))
    today = served.fake.wait_for("chat.postMessage", count=3)
    assert "今日 PR" in all_text(today.params)
    served.event(dm("有什么风险？", ts="1800000000.000513", thread_ts=today.response["ts"]))
    answer = served.fake.wait_for("chat.postMessage", count=4).params
    assert answer["thread_ts"] == today.response["ts"]


def test_share_to_channel_from_a_dm_picks_a_channel(served: Served) -> None:
    served.event(dm("compile", ts="1800000000.000600"))
    answer = served.fake.wait_for("chat.postMessage").params
    share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
    press = button_body(share, served.fake.response_url("press"), channel="D0DM").replace(
        "%22name%22%3A+%22vllm%22", "%22name%22%3A+%22directmessage%22"
    )
    served.form(press)
    picker = served.fake.wait_for("views.open").params["view"]
    assert_valid_view(picker)
    select = next(b for b in picker["blocks"] if b["type"] == "input")
    assert select["element"]["type"] == "conversations_select"
    assert served.fake.calls("response") == []  # no "invite the bot" failure

    served.fake.fail("chat.postMessage", error="not_in_channel")
    chosen = {
        "share_channel": {
            "share_channel": {"type": "conversations_select", "selected_conversation": "C0NOBOT"}
        }
    }
    refused = served.form(view_submission_body(picker, chosen))
    assert refused["response_action"] == "errors" and "/invite" in refused["errors"]["share_channel"]

    chosen["share_channel"]["share_channel"]["selected_conversation"] = "C0TEAM"
    assert served.form(view_submission_body(picker, chosen)) == {}
    shared = served.fake.wait_for("chat.postMessage", count=3)
    assert shared.params["channel"] == "C0TEAM" and DEEPSTACK_TITLE in all_text(shared.params)
    assert served.bot.threads.entry_for("C0TEAM", shared.response["ts"]) == share["value"]


# -- the message shortcut -----------------------------------------------------------------------


def shortcut_answer(served: Served, text: str, user: str = "U0ZH") -> Call:
    key = f"sc{len(served.fake.calls('response'))}"
    served.form(shortcut_body("ask_vllm_digest", text, served.fake.response_url(key), user=user))
    return served.fake.wait_for("response", where=lambda c: c.path.endswith(f"/{key}"))


def test_the_shortcut_on_a_message_naming_a_pr_answers_with_its_entry(served: Served) -> None:
    answer = shortcut_answer(served, "看了 #54537 吗？感觉 #1 也相关").params
    assert answer["response_type"] == "ephemeral"
    shown = all_text(answer)
    assert f"<{MEDIA_URL}|{MEDIA_TITLE}>" in shown and DEEPSTACK_TITLE not in shown
    assert_valid_blocks(answer["blocks"])


def test_the_shortcut_finds_pr_links_and_topics(served: Served) -> None:
    linked = all_text(shortcut_answer(served, f"see <{DEEPSTACK_URL}/files> and <{MEDIA_URL}|this>").params)
    assert DEEPSTACK_TITLE in linked and MEDIA_TITLE in linked
    assert linked.index(DEEPSTACK_TITLE) < linked.index(MEDIA_TITLE)
    topic = all_text(shortcut_answer(served, "anyone looked at speculative decoding on SM120?").params)
    assert "修复 SM120 上 DSv4 投机解码启动崩溃" in topic
    nothing = all_text(shortcut_answer(served, "<https://example.com/a>").params)
    assert "没有 digest 里的 PR" in nothing


# -- each person's language ---------------------------------------------------------------------


def test_each_person_gets_the_interface_in_their_slack_locale(served: Served) -> None:
    english = all_text(served.form(command_body("help", served.fake.response_url(), user="U0EN")))
    chinese = all_text(served.form(command_body("help", served.fake.response_url(), user="U0ZH")))
    assert "searches the digest by topic" in english and "按主题搜索" not in english
    assert "按主题搜索精读条目" in chinese and "searches the digest" not in chinese
    latest = all_text(served.form(command_body("latest", served.fake.response_url(), user="U0EN")))
    assert "Newest entries" in latest and "Share to channel" in latest

    served.event(home_opened(user="U0EN"))
    home = all_text(served.fake.wait_for("views.publish").params["view"])
    assert "PR of the day" in home and "Newest entries" in home and "今日 PR" not in home
    served.event(dm("compile", ts="1800000000.000700", user="U0EN"))
    assert "Share to channel" in all_text(served.fake.wait_for("chat.postMessage").params)
    shortcut = all_text(shortcut_answer(served, "#54537", user="U0EN").params)
    assert "PRs in this message" in shortcut
    # One users.info per person, whatever they do next.
    looked_up = [c.params["user"] for c in served.fake.calls("users.info")]
    assert sorted(looked_up) == ["U0EN", "U0ZH"]
    assert all(c.params["include_locale"] in (True, "true", "1") for c in served.fake.calls("users.info"))


def test_a_forced_language_never_asks_slack(fake_slack: FakeSlack) -> None:
    fake_slack.set_locale("U0ZH", "zh-CN")
    app = serve(fake_slack, settings_for(fake_slack, language="en"))
    try:
        shown = all_text(app.form(command_body("help", fake_slack.response_url(), user="U0ZH")))
        assert "searches the digest by topic" in shown
        app.event(home_opened(user="U0ZH"))
        assert "PR of the day" in all_text(fake_slack.wait_for("views.publish").params["view"])
        assert fake_slack.calls("users.info") == []
    finally:
        app.server.stop()
        app.bot.close()


def test_a_failed_locale_lookup_answers_in_the_channel_language(served: Served) -> None:
    served.fake.fail("users.info", error="user_not_found")
    shown = all_text(served.form(command_body("help", served.fake.response_url(), user="U0GONE")))
    assert "按主题搜索精读条目" in shown


def test_app_home_is_rebuilt_when_the_day_turns(fake_slack: FakeSlack, seed_library: Library) -> None:
    from slack_sdk import WebClient

    from chatbot.slack.handlers.home import HomeTab
    from chatbot.slack.membership import ChannelMembers, slack_members

    client = WebClient(token="xoxb-test", base_url=fake_slack.api_url)
    live = LiveIndex(seed_library)
    day = [dt.date(2026, 11, 30)]
    picks = {dt.date(2026, 11, 30): "53529", dt.date(2026, 12, 1): "54537"}
    home = HomeTab(
        live,
        lambda: seed_library.get(picks[day[0]]),
        live.latest,
        seed_library.get,
        lambda: ["C0DAILY"],
        lambda: live.generation,
        lambda: day[0],
        lambda user: "en",
        ChannelMembers(slack_members(client)),
    )
    home.opened(home_opened(), client)
    first = fake_slack.wait_for("views.publish").params["view"]
    home.opened(home_opened(view=first), client)
    assert len(fake_slack.calls("views.publish")) == 1
    day[0] = dt.date(2026, 12, 1)
    home.opened(home_opened(view=first), client)
    second = fake_slack.wait_for("views.publish", count=2).params["view"]
    today = [b["text"]["text"] for b in second["blocks"] if b.get("text")]
    assert today[today.index("PR of the day") + 1].startswith(f"*<{MEDIA_URL}|{MEDIA_TITLE}>*")
    assert "Updated 2026-12-01" in all_text(second)


def test_a_link_unfurls_once_across_retries_and_a_restart_on_the_store(
    fake_slack: FakeSlack, db_url: str
) -> None:
    event = link_shared(DEEPSTACK_URL)
    body = event_body(event)
    for retry in range(3):  # a first delivery, then Slack's retries, each to a fresh process
        store = SqlStore.open(db_url)
        app = serve(fake_slack, settings_for(fake_slack), store)
        try:
            app.event(event, retry=retry, body=body)
            app.settle()
        finally:
            app.server.stop()
            app.bot.close()
            store.close()
    calls = fake_slack.calls("chat.unfurl")
    assert len(calls) == 1 and DEEPSTACK_TITLE in all_text(calls[0].params["unfurls"][DEEPSTACK_URL])
