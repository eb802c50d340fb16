"""The bot's Web API client (chatbot.slack.retries.web_client) against a fake Slack that acts on a call
and then drops the connection: reads and idempotent calls are sent again, posts never are."""

from __future__ import annotations

import logging
from http.client import RemoteDisconnected
from urllib.error import URLError

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.state import RetryState

from chatbot.slack.retries import PostOnceRetryHandler, safe_to_repeat, web_client
from tests.fakeslack import FakeSlack
from tests.test_slack_http import settings_for


def test_a_dropped_post_is_not_sent_again_and_its_outcome_is_logged_once(
    fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    client = web_client(settings_for(fake_slack), "xoxb-test")
    fake_slack.drop_after_acting("chat.postMessage")
    fake_slack.drop_after_acting("chat.postEphemeral")
    with caplog.at_level(logging.WARNING, logger="chatbot.slack.retries"):
        with pytest.raises(RemoteDisconnected):
            client.chat_postMessage(channel="C1", text="once")
        with pytest.raises(RemoteDisconnected):
            client.chat_postEphemeral(channel="C1", user="U1", text="once")
    assert [m["text"] for m in fake_slack.messages("C1")] == ["once"]
    assert len(fake_slack.calls("chat.postMessage")) == 1 and len(fake_slack.calls("chat.postEphemeral")) == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "chatbot.slack.retries"]
    assert len(lines) == 2 and "chat.postMessage" in lines[0] and "chat.postEphemeral" in lines[1]


def test_dropped_reads_and_idempotent_calls_are_sent_again(fake_slack: FakeSlack) -> None:
    client = web_client(settings_for(fake_slack), "xoxb-test")
    posted = client.chat_postMessage(channel="C1", text="v1")
    fake_slack.drop_after_acting("conversations.history")
    fake_slack.drop_after_acting("chat.update")
    assert [m["text"] for m in client.conversations_history(channel="C1")["messages"]] == ["v1"]
    assert client.chat_update(channel="C1", ts=posted["ts"], text="v2")["ok"] is True
    assert len(fake_slack.calls("conversations.history")) == 2 and len(fake_slack.calls("chat.update")) == 2
    assert [m["text"] for m in fake_slack.messages("C1")] == ["v2"]


@pytest.mark.parametrize(
    "method", ["chat.postMessage", "views.open", "chat.scheduleMessage", "some.newMethod"]
)
def test_a_post_is_sent_again_only_when_it_never_left(method: str) -> None:
    """Connection refused / host not found: nothing reached Slack, so another try is safe; a
    dropped connection or a reset may come after Slack acted."""
    handler = PostOnceRetryHandler(max_retry_count=2)
    request = HttpRequest(method="POST", url=f"https://slack.com/api/{method}", headers={})
    for error, again in [
        (URLError(ConnectionRefusedError(111, "refused")), True),
        (RemoteDisconnected("closed"), False),
        (ConnectionResetError(104, "reset"), False),
        (URLError(ConnectionResetError(104, "reset")), False),
    ]:
        assert handler.can_retry(state=RetryState(), request=request, error=error) is again, error


@given(
    st.sampled_from(["chat", "views", "files", "conversations"]), st.from_regex(r"[a-z]{1,8}", fullmatch=True)
)
def test_only_reads_and_known_idempotent_writes_count_as_safe(family: str, verb: str) -> None:
    method = f"{family}.post{verb.capitalize()}"
    assert not safe_to_repeat(method)
    assert safe_to_repeat(f"{family}.info") and safe_to_repeat(f"{family}.list")
