"""The fake Slack server answers the way slack_sdk expects, so other tests can trust it."""

from __future__ import annotations

import threading
from http.client import RemoteDisconnected

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.webhook import WebhookClient

from tests.fakeslack import FakeSlack


def client(fake: FakeSlack) -> WebClient:
    return WebClient(token="xoxb-test", base_url=fake.api_url)


def test_post_stores_message_with_metadata_and_history_returns_it(fake_slack: FakeSlack) -> None:
    web = client(fake_slack)
    assert web.auth_test()["user_id"] == fake_slack.bot_user_id
    metadata = {"event_type": "pr_of_the_day", "event_payload": {"entry_id": "abc"}}
    first = web.chat_postMessage(channel="C1", text="one", metadata=metadata)
    second = web.chat_postMessage(channel="C1", text="two")
    assert float(second["ts"]) > float(first["ts"])
    web.chat_postMessage(channel="C1", text="reply", thread_ts=first["ts"])

    history = web.conversations_history(channel="C1", include_all_metadata=True)
    assert [m["text"] for m in history["messages"]] == ["two", "one"]
    assert history["messages"][1]["metadata"] == metadata
    newer = web.conversations_history(channel="C1", oldest=first["ts"])
    assert [m["text"] for m in newer["messages"]] == ["two"]
    assert "metadata" not in web.conversations_history(channel="C1")["messages"][1]
    replies = web.conversations_replies(channel="C1", ts=first["ts"])
    assert [m["text"] for m in replies["messages"]] == ["one", "reply"]

    call = fake_slack.calls("chat.postMessage")[0]
    assert call.token == "xoxb-test"
    assert call.params["metadata"] == metadata


def test_form_bodies_are_parsed_like_json_ones(fake_slack: FakeSlack) -> None:
    web = client(fake_slack)
    web.api_call("chat.postMessage", data={"channel": "C2", "text": "hi", "blocks": '[{"type": "divider"}]'})
    assert fake_slack.messages("C2")[0]["blocks"] == [{"type": "divider"}]


def test_queued_errors_are_answered_in_order(fake_slack: FakeSlack) -> None:
    fake_slack.fail("chat.postMessage", error="channel_not_found")
    with pytest.raises(SlackApiError) as err:
        client(fake_slack).chat_postMessage(channel="C1", text="x")
    assert err.value.response["error"] == "channel_not_found"
    assert client(fake_slack).chat_postMessage(channel="C1", text="x")["ok"]


def test_a_bare_5xx_has_no_slack_error_code(fake_slack: FakeSlack) -> None:
    fake_slack.fail("chat.postMessage", status=502, bare=True)
    fake_slack.fail("chat.postMessage", status=500, error="something_new")
    with pytest.raises(SlackApiError) as bare:
        client(fake_slack).chat_postMessage(channel="C1", text="x")
    assert bare.value.response.status_code == 502
    assert bare.value.response["error"] == (
        "Received a response in a non-JSON format: <html><body><h1>502</h1>upstream trouble</body></html>"
    )
    with pytest.raises(SlackApiError) as unknown:
        client(fake_slack).chat_postMessage(channel="C1", text="x")
    assert (unknown.value.response.status_code, unknown.value.response["error"]) == (500, "something_new")
    assert fake_slack.messages("C1") == []


def test_server_errors_and_rate_limits_are_retried_by_slack_handlers(fake_slack: FakeSlack) -> None:
    fake_slack.fail("chat.postMessage", status=500)
    fake_slack.fail("chat.postMessage", status=429, retry_after=0)
    web = client(fake_slack)
    fast = FixedValueRetryIntervalCalculator(0.01)
    web.retry_handlers.extend(
        [
            ServerErrorRetryHandler(max_retry_count=2, interval_calculator=fast),
            RateLimitErrorRetryHandler(max_retry_count=2),
        ]
    )
    web.chat_postMessage(channel="C1", text="x")
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [500, 429, 200]
    rate_limited = fake_slack.calls("chat.postMessage")[1]
    assert rate_limited.response == {"ok": False, "error": "ratelimited"}


def test_wait_for_returns_when_the_call_arrives_from_another_thread(fake_slack: FakeSlack) -> None:
    url = fake_slack.response_url("cmd1")
    thread = threading.Thread(target=lambda: WebhookClient(url).send(text="hello"))
    thread.start()
    call = fake_slack.wait_for("response", where=lambda c: c.path.endswith("/cmd1"))
    assert call.params["text"] == "hello"
    thread.join()
    with pytest.raises(AssertionError, match="no 2× response"):
        fake_slack.wait_for("response", count=2, timeout=0.05)


def test_surface_methods_record_their_payloads_and_refuse_what_slack_refuses(fake_slack: FakeSlack) -> None:
    web = client(fake_slack)
    fake_slack.set_locale("U1", "zh-CN")
    assert web.users_info(user="U1", include_locale=True)["user"]["locale"] == "zh-CN"
    assert web.users_info(user="U2", include_locale=True)["user"]["locale"] == "en-US"
    assert "locale" not in web.users_info(user="U1")["user"]
    unfurls = {"https://github.com/o/r/pull/1": {"blocks": [{"type": "divider"}]}}
    assert web.chat_unfurl(channel="C1", ts="1.1", unfurls=unfurls)["ok"]
    assert fake_slack.calls("chat.unfurl")[0].params["unfurls"] == unfurls
    view = {"type": "home", "blocks": [{"type": "divider"}]}
    assert web.views_publish(user_id="U1", view=view)["view"]["id"].startswith("V")
    assert fake_slack.calls("views.publish")[0].params["view"] == view
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "t"}, "blocks": []}
    assert web.views_open(trigger_id="1.2", view=modal)["ok"]
    assert web.views_push(trigger_id="1.3", view=modal)["ok"]
    with pytest.raises(SlackApiError, match="invalid_trigger_id"):
        web.views_open(trigger_id="", view=modal)
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        web.chat_unfurl(channel="C1", ts="1.1", unfurls={})


def test_a_dropped_call_is_carried_out_and_then_left_unanswered(fake_slack: FakeSlack) -> None:
    """The post is stored and recorded, but the client gets no status line, only a closed
    connection; the next call is answered as usual."""
    fake_slack.drop_after_acting("chat.postMessage")
    web = client(fake_slack)
    web.retry_handlers = []
    with pytest.raises(RemoteDisconnected):
        web.chat_postMessage(channel="C1", text="lost answer")
    assert [m["text"] for m in fake_slack.messages("C1")] == ["lost answer"]
    assert fake_slack.wait_for("chat.postMessage").params["text"] == "lost answer"
    assert web.chat_postMessage(channel="C1", text="next")["ok"] is True
    assert [m["text"] for m in fake_slack.messages("C1")] == ["lost answer", "next"]


def test_membership_answers_like_slack(fake_slack: FakeSlack) -> None:
    web = WebClient(token="xoxb-test", base_url=fake_slack.api_url)
    fake_slack.set_members("CPRIV", ["U2", fake_slack.bot_user_id], private=True)
    fake_slack.set_members("GNOBOT", ["U2"], private=True)
    fake_slack.set_members("CPUB", ["U2", "U3", "U4"])
    first = web.conversations_members(channel="CPUB", limit=2)
    assert first["members"] == ["U2", "U3"] and first["response_metadata"]["next_cursor"] == "2"
    assert web.conversations_members(channel="CPUB", limit=2, cursor="2")["members"] == ["U4"]
    assert "U0ASKER" in web.conversations_members(channel="CANY")["members"]  # the workspace's people
    with pytest.raises(SlackApiError, match="channel_not_found"):
        web.conversations_members(channel="GNOBOT")
    assert web.conversations_info(channel="CPRIV")["channel"]["is_private"] is True
    assert web.conversations_info(channel="CPUB")["channel"]["is_channel"] is True
    assert web.conversations_info(channel="D0DM")["channel"]["is_im"] is True
    mine = [c["id"] for c in web.users_conversations(user="U2")["channels"]]
    assert mine == ["CPRIV", "CPUB"]  # not the private channel without the bot
