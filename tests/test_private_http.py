"""Private stays private: shares only into the sharer's channels, App Home only the viewer's —
signed requests over real HTTP in, what the fake Slack received (or did not) out."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from chatbot.slack.membership import ChannelMembers, slack_members
from tests.fakeslack import FakeSlack
from tests.slackrequests import all_text, button_body, buttons, post, view_submission_body
from tests.test_surfaces_http import (
    DEEPSTACK_TITLE,
    DEEPSTACK_URL,
    Served,
    assert_valid_view,
    dm,
    home_opened,
    link_shared,
    serve,
    served,
    settings_for,
)

__all__ = ["served"]  # the fixture, shared with test_surfaces_http


def secret_channels(fake: FakeSlack) -> None:
    """CSECRET: private, U2 and the bot; CPUBLIC1: public, U2 only (U0ASKER has not joined);
    GHIDDEN: private without the bot (Slack answers channel_not_found)."""
    fake.set_members("CSECRET", ["U2", fake.bot_user_id], private=True)
    fake.set_members("GHIDDEN", ["U2"], private=True)
    fake.set_members("CPUBLIC1", ["U2", fake.bot_user_id])


def share_button(served: Served) -> dict[str, Any]:
    answer = served.form(f"{_command('compile')}")
    return next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))


def _command(text: str) -> str:
    from tests.slackrequests import command_body

    return command_body(text, "http://127.0.0.1:9/unused")


@pytest.mark.parametrize("channel", ["CSECRET", "CPUBLIC1", "GHIDDEN"])
def test_a_share_press_naming_a_channel_the_sharer_is_not_in_posts_nothing(
    served: Served, channel: str
) -> None:
    secret_channels(served.fake)
    share = share_button(served)
    key = f"press-{channel}"
    post(served.url, button_body(share, served.fake.response_url(key), channel=channel, user="U0ASKER"))
    told = served.fake.wait_for("response", where=lambda c: c.path.endswith(key)).params
    served.settle()
    assert told["response_type"] == "ephemeral"
    assert "only to a channel you are a member of" in all_text(told)
    assert served.fake.calls("chat.postMessage") == []
    assert served.fake.calls("conversations.members")[0].params["channel"] == channel


def test_a_member_shares_and_the_membership_is_asked_once_a_minute(served: Served) -> None:
    secret_channels(served.fake)
    share = share_button(served)
    post(served.url, button_body(share, served.fake.response_url("a"), channel="CSECRET", user="U2"))
    shared = served.fake.wait_for("chat.postMessage")
    assert shared.params["channel"] == "CSECRET" and DEEPSTACK_TITLE in all_text(shared.params)
    post(served.url, button_body(share, served.fake.response_url("b"), channel="CSECRET", user="U0ASKER"))
    served.fake.wait_for("response", where=lambda c: c.path.endswith("/b"))
    served.settle()
    assert len(served.fake.calls("chat.postMessage")) == 1
    assert len(served.fake.calls("conversations.members")) == 1  # cached


def test_the_share_pickers_submission_for_someone_elses_channel_is_refused(served: Served) -> None:
    secret_channels(served.fake)
    served.event(dm("compile", ts="1800000000.000600", user="U0EN"))
    answer = served.fake.wait_for("chat.postMessage").params
    share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
    press = button_body(share, served.fake.response_url("press"), channel="D0DM", user="U0EN")
    served.form(press)
    picker = served.fake.wait_for("views.open").params["view"]
    for channel in ("CSECRET", "CPUBLIC1"):
        chosen = {
            "share_channel": {
                "share_channel": {"type": "conversations_select", "selected_conversation": channel}
            }
        }
        refused = served.form(view_submission_body(picker, chosen, user="U0EN"))
        assert refused["response_action"] == "errors"
        assert "only to a channel you are a member of" in refused["errors"]["share_channel"]
    served.settle()
    assert len(served.fake.calls("chat.postMessage")) == 1  # the DM answer only
    assert served.fake.messages("CSECRET") == [] and served.fake.messages("CPUBLIC1") == []


def test_ask_in_a_thread_on_a_preview_in_a_channel_the_presser_is_not_in_posts_nothing(
    served: Served,
) -> None:
    secret_channels(served.fake)
    served.event(link_shared(DEEPSTACK_URL, channel="CSECRET"))
    preview = served.fake.wait_for("chat.unfurl").params["unfurls"][DEEPSTACK_URL]
    ask = buttons(preview)[0]
    body = button_body(ask, served.fake.response_url("ask"), channel="CSECRET", user="U0ASKER")
    post(
        served.url,
        body.replace("%22is_ephemeral%22", "%22message_ts%22%3A+%221800000000.000100%22%2C+%22x%22"),
    )
    told = served.fake.wait_for("response", where=lambda c: c.path.endswith("/ask")).params
    served.settle()
    assert told["response_type"] == "ephemeral" and "只能分享到你所在的频道" in all_text(told)
    assert served.fake.calls("chat.postMessage") == []


def test_app_home_lists_only_the_viewers_channels_as_mentions(fake_slack: FakeSlack) -> None:
    secret_channels(fake_slack)
    settings = settings_for(fake_slack).model_copy(
        update={"daily_channels": ["CPUBLIC1", "secret-launch-plans", "CSECRET", "C0DAILY"]}
    )
    app = serve(fake_slack, settings)
    try:
        app.event(home_opened(user="U0EN"))
        outsider = fake_slack.wait_for("views.publish").params["view"]
        app.event(home_opened(user="U2"))
        member = fake_slack.wait_for("views.publish", count=2).params["view"]
    finally:
        app.server.stop()
        app.bot.close()
    for view in (outsider, member):
        assert_valid_view(view)
        assert "secret-launch-plans" not in all_text(view)
    shown = all_text(outsider)
    assert "<#C0DAILY>" in shown and "CSECRET" not in shown and "CPUBLIC1" not in shown
    assert "goes to: <#CPUBLIC1>, <#CSECRET>, <#C0DAILY>\n" in all_text(member)


def test_channel_members_come_from_every_page_and_a_failure_is_no_member(fake_slack: FakeSlack) -> None:
    from slack_sdk import WebClient

    people = [f"U{n:05d}" for n in range(2500)]
    fake_slack.set_members("CBIG", people)
    client = WebClient(token="xoxb-test", base_url=fake_slack.api_url)
    now = [0.0]
    members = ChannelMembers(slack_members(client), keep=60, clock=lambda: now[0])
    assert members.is_member("CBIG", "U02499") and not members.is_member("CBIG", "U99999")
    assert len(fake_slack.calls("conversations.members")) == 3  # 1000 a page
    now[0] = 61.0
    fake_slack.fail("conversations.members", error="ratelimited")
    assert not members.is_member("CBIG", "U02499")  # Slack would not say: no share on a guess
    assert members.is_member("CBIG", "U02499")  # the failure was not cached
    assert not members.is_member("#general", "U02499")  # a name is never a member check


def test_the_weekly_report_quotes_only_what_was_asked_in_public_channels(
    fake_slack: FakeSlack, tmp_path: Any
) -> None:
    from chatbot.store import SqlStore
    from chatbot.usage.report import build_report
    from tests.slackrequests import command_body

    secret_channels(fake_slack)
    store = SqlStore.open(f"sqlite:///{tmp_path / 'bot.db'}")
    settings = settings_for(fake_slack).model_copy(update={"curator_channel": "C0CURATOR"})
    app = serve(fake_slack, settings, store)
    try:
        app.event(dm("project nightingale layoffs plan", ts="1800000000.000700", user="U2"))
        fake_slack.wait_for("chat.postMessage")
        app.form(command_body("secret roadmap xyzzy", fake_slack.response_url("p"), channel="CSECRET"))
        app.form(command_body("quantum teleport", fake_slack.response_url("q"), channel="C0PUB"))
        app.bot.threads.register("CSECRET", "1800000000.000800", app.bot.live.newest().id)  # type: ignore[union-attr]
        reply = {"type": "message", "channel_type": "group", "channel": "CSECRET", "user": "U2"}
        question = "nightingale 裁员名单什么时候公布？"
        app.event(reply | {"text": question, "ts": "1800000000.000801", "thread_ts": "1800000000.000800"})
        fake_slack.wait_for("chat.postMessage", count=2)
        app.settle()
        app.settle()
        assert app.bot.curator is not None and app.bot.curator.run() == "posted"
        report = build_report(
            store.engine, app.bot.curator.clock() - dt.timedelta(days=7), app.bot.curator.clock()
        )
    finally:
        app.server.stop()
        app.bot.close()
    (posted,) = fake_slack.messages("C0CURATOR")
    shown = all_text(posted)
    for private in ("nightingale", "layoffs", "secret roadmap", "xyzzy", "裁员"):
        assert private not in shown
    assert "quantum teleport" in shown
    assert report.unquoted["searches"] == 2 and report.searches == 3
    assert "未引用（私信、私有频道、App 主页）：2 次搜索，1 个未答问题" in shown
    assert report.not_in_note == []


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_forged_subscribe_for_a_channel_the_asker_is_not_in_changes_nothing(
    fake_slack: FakeSlack, db_url: str
) -> None:
    from tests import test_subscriptions_http as subs

    secret_channels(fake_slack)
    app = subs.serve(fake_slack, db_url)
    try:
        for text in ("subscribe kv cache", "unsubscribe"):
            answer = app.command(text, channel="CSECRET", user="U0ASKER")
            assert "Only a member of this channel can change its PR of the day" in all_text(answer)
        app.bot.wait_idle(10)
        assert app.notices("CSECRET") == [] and app.subscriptions.get("CSECRET") is None
        member = app.command("subscribe kv cache", channel="CSECRET", user="U2")
        assert "Done" in all_text(member) and app.subscriptions.get("CSECRET") is not None
    finally:
        app.server.stop()
        app.bot.close()
