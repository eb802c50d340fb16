"""The usage part: normalising and redaction (properties), votes, retention, the weekly report
claimed once across replicas, all on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk import WebClient
from sqlalchemy import func, select

from chatbot.observability import Metrics
from chatbot.observability.logs import redact
from chatbot.slack.curator import render_curator_report
from chatbot.slack.webapi import SlackMessage
from chatbot.store import SqlStore
from chatbot.usage import FeedbackTarget, UsageStore, normalise
from chatbot.usage.recorder import UsageRecorder
from chatbot.usage.report import CuratorReport, build_report, parse_since
from chatbot.usage.store import answer_row, entry_event_row, search_rows
from chatbot.usage.tables import usage_feedback, usage_searches
from chatbot.usage.weekly import WeeklyReport, iso_week
from tests.fakeslack import FakeSlack
from tests.slackrequests import all_text

NOW = dt.datetime(2026, 11, 30, 2, 0, tzinfo=dt.UTC)
ZONE = ZoneInfo("Asia/Shanghai")

tokens = st.from_regex(r"x(ox[bpa]|app)-[0-9A-Za-z\-]{4,40}", fullmatch=True)


@given(st.text(max_size=300))
def test_normalise_is_idempotent_and_keeps_no_markup(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert once == once.strip() and "  " not in once
    assert "<@" not in once and "<!" not in once


@given(st.text(max_size=80), tokens, st.text(max_size=80))
def test_no_token_survives_redaction_or_normalising(before: str, token: str, after: str) -> None:
    text = f"{before} {token} {after}"
    assert token not in redact(text)
    assert token.casefold() not in normalise(text)


@given(st.text(max_size=60), st.sampled_from(["U07ALICE42", "W0123ABCD9", "U1234567890"]))
def test_user_ids_and_hook_urls_are_redacted(text: str, user: str) -> None:
    hook = "https://hooks.slack.com/commands/T000/123/abcDEF"
    redacted = redact(f"{text} <@{user}> {hook}")
    assert user not in redacted and hook not in redacted


def test_spellings_of_one_query_normalise_alike() -> None:
    assert {normalise(q) for q in ("Spec  Decode?", "spec decode", "「Spec Decode」", " SPEC DECODE！")} == {
        "spec decode"
    }
    assert normalise("<@U07ALICE42> 投机解码？") == "投机解码"


@pytest.fixture
def usage(db_url: str) -> Iterator[UsageStore]:
    store = SqlStore.open(db_url)
    yield UsageStore(store.engine)
    store.close()


def test_a_second_vote_by_the_same_person_changes_it(usage: UsageStore) -> None:
    target = FeedbackTarget("answer", "C1:1800000000.000100", "e1", "risks")
    assert usage.vote(target, "hash-a", 1, NOW) == "new"
    assert usage.vote(target, "hash-a", 1, NOW) == "same"
    assert usage.vote(target, "hash-a", -1, NOW) == "changed"
    assert usage.vote(target, "hash-b", -1, NOW) == "new"
    assert usage.note_missing(target, "hash-a", "numbers")
    assert not usage.note_missing(target, "hash-nobody", "numbers")
    with usage.engine.connect() as conn:
        rows = conn.execute(
            select(usage_feedback.c.voter, usage_feedback.c.vote, usage_feedback.c.missing).order_by(
                usage_feedback.c.voter
            )
        ).all()
    assert [tuple(r) for r in rows] == [("hash-a", -1, "numbers"), ("hash-b", -1, None)]


def test_the_voter_is_a_salted_hash_stable_per_person(usage: UsageStore) -> None:
    one = UsageRecorder(Metrics(), usage, voter_key=b"k1", clock=lambda: NOW)
    other_salt = UsageRecorder(Metrics(), usage, voter_key=b"k2", clock=lambda: NOW)
    assert one.voter("U07ALICE42") == one.voter("U07ALICE42") != one.voter("U07BOB0099")
    assert one.voter("U07ALICE42") != other_salt.voter("U07ALICE42")
    assert "U07ALICE42" not in one.voter("U07ALICE42")


def test_rows_older_than_the_retention_are_pruned(usage: UsageStore) -> None:
    old, recent = NOW - dt.timedelta(days=91), NOW - dt.timedelta(days=89)
    usage.insert(search_rows(old, "command", "old query", 0, []))
    usage.insert(search_rows(recent, "command", "recent query", 1, ["e1"]))
    usage.vote(FeedbackTarget("search", "old query", "e1"), "h", 1, old)
    recorder = UsageRecorder(Metrics(), usage, clock=lambda: NOW)
    assert recorder.prune_if_due() == 2
    assert recorder.prune_if_due() == 0  # at most once an hour
    with usage.engine.connect() as conn:
        assert conn.execute(select(usage_searches.c.query)).scalars().all() == ["recent query"]
        assert conn.execute(select(func.count()).select_from(usage_feedback)).scalar() == 0


def test_report_groups_gaps_and_counts_entries(usage: UsageStore) -> None:
    for day, query, results in [(1, "quantum teleport", 0), (2, "quantum teleport", 0), (2, "compile", 1)]:
        usage.insert(
            search_rows(
                NOW - dt.timedelta(days=day), "command", query, results, ["e1"] if results else [], "public"
            )
        )
    usage.insert([answer_row(NOW, "e1", "risks", False, "有什么风险", "public")])
    usage.insert([answer_row(NOW, "e1", "focus", True, None)])
    usage.insert([entry_event_row(NOW, "e1", "shared")])
    report = build_report(usage.engine, NOW - dt.timedelta(days=7), NOW, lambda e: ("Title", 12345))
    assert report.searches == 3
    assert report.no_match[0]["query"] == "quantum teleport" and report.no_match[0]["searches"] == 2
    assert [(d["searches"], d["no_match"]) for d in report.searches_per_day] == [(2, 1), (1, 1)]
    (entry,) = report.entries
    assert (entry.views, entry.shares, entry.questions) == (1, 1, 2)
    assert report.not_in_note == [
        {"entry": "e1", "title": "Title", "intent": "risks", "question": "有什么风险", "count": 1}
    ]
    assert build_report(usage.engine, NOW - dt.timedelta(hours=1), NOW).searches == 0


def test_parse_since() -> None:
    assert parse_since("30d", NOW) == NOW - dt.timedelta(days=30)
    assert parse_since("2w", NOW) == NOW - dt.timedelta(weeks=2)
    assert parse_since("2026-11-01", NOW) == dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    with pytest.raises(ValueError, match="30d"):
        parse_since("a month", NOW)


def weekly(usage: UsageStore, fake: FakeSlack, statuses: list[str]) -> WeeklyReport:
    def render(report: CuratorReport) -> SlackMessage:
        shown = render_curator_report(report, "en")
        return SlackMessage(shown["text"], shown["blocks"])

    return WeeklyReport(
        usage,
        usage.engine,
        WebClient(token="xoxb-test", base_url=fake.api_url),
        "C0CURATOR",
        render,
        lambda e: ("", None),
        ZONE,
        clock=lambda: NOW,
        on_result=statuses.append,
    )


def test_the_weekly_report_is_posted_once_per_week_across_replicas(
    usage: UsageStore, fake_slack: FakeSlack
) -> None:
    usage.insert(search_rows(NOW - dt.timedelta(days=1), "command", "<!channel> quantum", 0, [], "public"))
    statuses: list[str] = []
    replicas = [weekly(usage, fake_slack, statuses) for _ in range(3)]
    fake_slack.fail("chat.postMessage", error="channel_not_found")
    assert replicas[0].run() == "failed"  # claim released: a later run tries again
    assert [r.run() for r in replicas] == ["posted", "already posted", "already posted"]
    assert statuses == ["failed", "posted", "already posted", "already posted"]
    posted = fake_slack.messages("C0CURATOR")
    assert len(posted) == 1
    shown = all_text(posted[0])
    assert "Queries with no match" in shown and "&lt;!channel&gt; quantum" in shown
    assert "<!channel>" not in shown
    assert iso_week(NOW, ZONE) == "2026-W49"


@pytest.mark.parametrize("text", ["<@", "<!", "<<@U1>", "a <@ b", "<<@@", "spec <!here decode"])
def test_markup_that_never_closes_leaves_no_mention_opening(text: str) -> None:
    once = normalise(text)
    assert "<@" not in once and "<!" not in once and normalise(once) == once
