"""Live PR facts from GitHub, against the fake GitHub REST API on loopback (tests/fakegithub.py):
what a refresh fetches and keeps, how it treats GitHub (ETags, rate limits, failures), and the
facts in cards, thread answers and the PR of the day."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.answers import Answerer
from chatbot.daily import pick_entry
from chatbot.digest import Entry, Library, facts_lookup, passed_over
from chatbot.github import FactsRefresher, GitHubClient, GitHubFacts, load_facts
from chatbot.github.client import Fetched
from chatbot.slack.blocks import render_entry_card
from chatbot.store import SqlStore
from chatbot.store.prfacts import PrFactsStore
from tests.fakegithub import FakeGitHub
from tests.fakeslack import FakeSlack

REPO = "vllm-project/vllm"
DAY = dt.date(2026, 9, 1)
NOW = dt.datetime(2026, 9, 3, 8, 0, tzinfo=dt.UTC)


class Clock:
    """A clock the test moves."""

    def __init__(self, now: dt.datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    yield fake
    fake.close()


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    """The store on SQLite and (with TEST_DATABASE_URL) PostgreSQL."""
    store = SqlStore.open(db_url)
    yield store
    store.close()


def seed_github(fake: FakeGitHub, library: Library) -> None:
    """Every digest PR merged; 53529 reviewed and reverted, 54537 closed unmerged, 52068 followed up."""
    for entry in library:
        assert entry.pr is not None
        fake.add_pr(REPO, entry.pr, merged_at="2026-08-20T09:00:00Z", title=f"title of {entry.pr}")
    fake.add_pr(REPO, 53529, merged_at="2026-08-24T10:00:00Z", title="[Test] DeepStack", author="maithili")
    fake.add_review(REPO, 53529, "ywang96", "COMMENTED")
    fake.add_review(REPO, 53529, "ywang96", "APPROVED")
    fake.add_review(REPO, 53529, "DarkLight1337", "CHANGES_REQUESTED")
    fake.add_cross_reference(
        REPO, 53529, 53600, title='Revert "[Test] DeepStack"', body="Reverts vllm-project/vllm#53529"
    )
    fake.add_pr(REPO, 54537, state="closed", closed_at="2026-08-30T00:00:00Z")
    fake.add_cross_reference(REPO, 52068, 57453, title="[KV Offload] fix the fix", body="follows #52068")


def refresher(
    fake: FakeGitHub, store: SqlStore, clock: Clock | None = None, **kwargs: object
) -> FactsRefresher:
    clock = clock or Clock()
    client = GitHubClient(fake.api_url, "ghp_test", timeout=kwargs.pop("timeout", 5.0), clock=clock)  # type: ignore[arg-type]
    return FactsRefresher(client, PrFactsStore(store.engine), clock=clock, **kwargs)  # type: ignore[arg-type]


def entry(library: Library, pr: int) -> Entry:
    found = library.get(str(pr))
    assert found is not None
    return found


def test_a_refresh_fetches_state_reviews_and_reverts(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    report = refresher(fake, store).refresh(seed_library.entries)
    assert report.error is None and report.checked == len(seed_library)
    assert "reverted: #53529 [Test] DeepStack (in #53600)" in report.changes
    assert "closed without merging: #54537 PR 54537" in report.changes
    facts = load_facts(PrFactsStore(store.engine))
    reverted = facts[(REPO, 53529)]
    assert reverted.merged and reverted.merged_at == dt.datetime(2026, 8, 24, 10, tzinfo=dt.UTC)
    assert reverted.reverted_by == 53600
    assert reverted.reviewer_line() == "ywang96 (approved), DarkLight1337 (changes requested)"
    assert reverted.size_line() == "+10 −2 in 1 files"
    assert facts[(REPO, 52068)].follow_ups == (57453,)
    assert facts[(REPO, 52068)].reverted_by is None
    assert facts[(REPO, 54537)].state_line() == "closed without merging"
    paths = {c.path for c in fake.calls}
    assert {"/repos/vllm-project/vllm/pulls/53529", "/repos/vllm-project/vllm/pulls/53529/reviews"} <= paths
    assert "/repos/vllm-project/vllm/issues/53529/timeline" in paths
    assert all(c.headers["authorization"] == "Bearer ghp_test" for c in fake.calls)


def test_facts_show_on_cards_in_answers_and_in_the_daily_pick(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    refresher(fake, store).refresh(seed_library.entries)
    lookup = facts_lookup(load_facts(PrFactsStore(store.engine)))

    card = render_entry_card(entry(seed_library, 53529), "en", facts=lookup(entry(seed_library, 53529)))
    assert "⚠ reverted in #53600" in str(card["blocks"])
    merged = render_entry_card(entry(seed_library, 54492), "en", facts=lookup(entry(seed_library, 54492)))
    assert "merged 2026-08-20" in str(merged["blocks"])
    closed = render_entry_card(entry(seed_library, 54537), "en", facts=lookup(entry(seed_library, 54537)))
    assert "closed without merging" in str(closed["blocks"])

    answerer = Answerer(seed_library, facts=lookup)
    reverted = entry(seed_library, 53529)
    assert answerer.answer(reverted, "合了没").text.startswith("已合入：2026-08-24（⚠ 已在 #53600 回滚）")
    assert answerer.answer(reverted, "when was it merged?").text.startswith("Merged on 2026-08-24.")
    assert answerer.answer(reverted, "who reviewed it?").text.startswith(
        "Reviewed by ywang96 (approved), DarkLight1337 (changes requested)."
    )
    assert answerer.answer(reverted, "was it reverted?").text.startswith("Yes: reverted in #53600.")
    assert answerer.answer(reverted, "how big is it?").text.startswith("Size: +10 −2 in 1 files.")
    assert answerer.answer(entry(seed_library, 52068), "any follow-up fix?").text.startswith(
        "Follow-ups: #57453"
    )
    # Facts checked more than a day ago say when (they were checked at NOW, 2026-09-03).
    assert "(checked on GitHub 2026-09-03 08:00 UTC)" in answerer.answer(reverted, "was it reverted?").text

    skip = passed_over(seed_library.entries, lookup)
    assert skip[reverted.id] == "#53529 reverted in #53600"
    assert skip[entry(seed_library, 54537).id] == "#54537 closed without merging"
    for day in (DAY + dt.timedelta(days=n) for n in range(10)):
        pick = pick_entry(seed_library.entries, [], "C1", day, passed_over=skip)
        assert pick is not None and pick.entry.pr not in (53529, 54537)


def test_the_second_refresh_is_conditional_and_a_304_keeps_the_facts(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    clock = Clock()
    refresh = refresher(fake, store, clock)
    refresh.refresh(seed_library.entries)
    first = PrFactsStore(store.engine).all()[(REPO, 53529)]
    sent = len(fake.calls)
    clock.now += dt.timedelta(hours=6)
    report = refresh.refresh(seed_library.entries)
    second_round = fake.calls[sent:]
    assert len(second_round) == 3 * len(seed_library)
    assert all(c.headers.get("if-none-match", "").startswith('"') for c in second_round)
    assert {c.status for c in second_round} == {304}
    assert report.changes == [] and report.error is None
    again = PrFactsStore(store.engine).all()[(REPO, 53529)]
    assert again.sections == first.sections and again.fetched_at == first.fetched_at
    assert again.checked_at == NOW + dt.timedelta(hours=6)


def test_a_spent_rate_limit_sends_nothing_until_the_reset(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    reset = NOW + dt.timedelta(minutes=30)
    fake.fail(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(reset.timestamp()))})
    clock = Clock()
    report = refresher(fake, store, clock).refresh(seed_library.entries)
    assert report.error is not None and "rate limit" in report.error
    assert len(fake.calls) == 1
    # Another process (a replica, the next `github refresh`) waits too: the wait is in the store.
    clock.now += dt.timedelta(minutes=10)
    later = refresher(fake, store, clock).refresh(seed_library.entries)
    assert later.error is not None and len(fake.calls) == 1
    clock.now = reset + dt.timedelta(seconds=1)
    after = refresher(fake, store, clock).refresh(seed_library.entries)
    assert after.error is None and len(fake.calls) == 1 + 3 * len(seed_library)


def test_github_down_or_hanging_keeps_the_last_facts_and_the_next_refresh_retries(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    clock = Clock()
    refresher(fake, store, clock).refresh(seed_library.entries)
    fake.add_pr(REPO, 53529, state="closed", closed_at="2026-09-01T00:00:00Z")  # changed on GitHub
    fake.fail(502)
    clock.now += dt.timedelta(hours=6)
    down = refresher(fake, store, clock).refresh(seed_library.entries)
    assert down.error is not None and "502" in down.error and down.checked == 0
    assert load_facts(PrFactsStore(store.engine))[(REPO, 53529)].merged  # the last facts, kept

    fake.hang()
    hung = refresher(fake, store, clock, timeout=0.3).refresh(seed_library.entries)
    assert hung.error is not None and "Timeout" in hung.error
    fake.release()
    kept = load_facts(PrFactsStore(store.engine))[(REPO, 53529)]
    assert kept.merged and kept.checked_note(NOW + dt.timedelta(days=2)) is not None

    retried = refresher(fake, store, clock).refresh(seed_library.entries)
    assert retried.error is None
    assert load_facts(PrFactsStore(store.engine))[(REPO, 53529)].closed_unmerged


def test_an_unknown_pr_is_a_digest_problem_at_its_line(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    del fake.pulls[(REPO, 54509)]
    report = refresher(fake, store).refresh(seed_library.entries)
    unknown = entry(seed_library, 54509)
    assert [str(p) for p in report.problems] == [
        f"{unknown.source}: warning: PR #54509 is not on GitHub ({REPO}); check the number"
    ]
    assert load_facts(PrFactsStore(store.engine))[(REPO, 54509)].found is False


def test_a_revoked_token_is_said_once_and_the_client_goes_on_without_it(
    fake: FakeGitHub, store: SqlStore, seed_library: Library, caplog: pytest.LogCaptureFixture
) -> None:
    seed_github(fake, seed_library)
    fake.revoke("ghp_test")
    report = refresher(fake, store).refresh(seed_library.entries)
    assert report.error is None and report.checked == len(seed_library)
    refused = [c for c in fake.calls if c.status == 401]
    assert len(refused) == 1
    assert all("authorization" not in c.headers for c in fake.calls[1:])
    assert [r.message for r in caplog.records if "GITHUB_TOKEN" in r.message] == [
        "GitHub: GITHUB_TOKEN was refused (401, revoked?); going on unauthenticated"
    ]


def test_requests_per_refresh_are_bounded(fake: FakeGitHub, store: SqlStore, seed_library: Library) -> None:
    seed_github(fake, seed_library)
    report = refresher(fake, store, max_requests=6).refresh(seed_library.entries)
    assert len(fake.calls) == 6 and report.checked == 2 and report.deferred == len(seed_library) - 2


def test_one_replica_refreshes_a_period_and_every_replica_reads_the_facts(
    fake: FakeGitHub, store: SqlStore, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    clock = Clock()
    replicas = [
        GitHubFacts(
            refresher(fake, store, clock),
            PrFactsStore(store.engine),
            lambda: seed_library.entries,
            dt.timedelta(hours=6),
            f"replica-{n}",
            clock=clock,
        )
        for n in range(2)
    ]
    reports = [replica.tick() for replica in replicas]
    assert reports[0] is not None and reports[1] is None
    assert len(fake.calls) == 3 * len(seed_library)
    replicas[1].reload()
    assert all(r.lookup(entry(seed_library, 53529)) is not None for r in replicas)


def test_the_lookup_never_waits_on_github(fake: FakeGitHub, store: SqlStore, seed_library: Library) -> None:
    """A refresh stuck on a hanging GitHub does not hold up a card or an answer."""
    seed_github(fake, seed_library)
    clock = Clock()
    facts = GitHubFacts(
        refresher(fake, store, clock, timeout=10.0),
        PrFactsStore(store.engine),
        lambda: seed_library.entries,
        dt.timedelta(hours=6),
        "me",
        clock=clock,
    )
    fake.hang()
    stop = threading.Event()
    facts.start(stop)
    fake.wait_for(lambda calls: len(calls) >= 1)
    answer = Answerer(seed_library, facts=facts.lookup).answer(entry(seed_library, 53529), "合了没")
    assert answer.intent == "state"  # answered from the note: nothing fetched yet
    stop.set()
    fake.release()
    assert facts.refreshed.wait(5)


# -- the command line --------------------------------------------------------------------------


def cli(tmp_path: Path, *args: str, github: str | None, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "SLACK_", "DATABASE_URL"))}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'bot.db'}"
    env.update(extra)
    if github:
        env["GITHUB_API_URL"] = github
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args], env=env, cwd=tmp_path, capture_output=True, text=True
    )


def test_commands_read_the_facts_after_github_refresh(
    fake: FakeGitHub, tmp_path: Path, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    would_be = pick_entry(seed_library.entries, [], "console", DAY)
    assert would_be is not None and would_be.entry.pr is not None
    fake.add_cross_reference(REPO, would_be.entry.pr, 59999, title='Revert "x"')

    refreshed = cli(tmp_path, "github", "refresh", github=fake.api_url)
    assert refreshed.returncode == 0, refreshed.stderr
    assert f"reverted: #{would_be.entry.pr} title of {would_be.entry.pr} (in #59999)" in refreshed.stdout
    assert "no GITHUB_TOKEN; unauthenticated" in refreshed.stderr

    merged = cli(tmp_path, "ask", "53529", "合了没", github=fake.api_url)
    assert merged.stdout.startswith("已合入：2026-08-24"), merged.stderr
    reviewed = cli(tmp_path, "ask", "53529", "who reviewed it?", github=fake.api_url)
    assert reviewed.stdout.startswith("Reviewed by ywang96 (approved)")
    reverted = cli(tmp_path, "ask", "53529", "was it reverted?", github=fake.api_url)
    assert reverted.stdout.startswith("Yes: reverted in #53600.")

    today = cli(tmp_path, "today", "--date", DAY.isoformat(), github=fake.api_url)
    assert today.returncode == 0, today.stderr
    assert f"#{would_be.entry.pr} " not in today.stdout.splitlines()[0]
    assert f"why: passed over #{would_be.entry.pr} reverted in #59999; " in today.stdout


def test_without_github_settings_commands_are_as_before(fake: FakeGitHub, tmp_path: Path) -> None:
    asked = cli(tmp_path, "ask", "53529", "合了没", github=None)
    assert asked.returncode == 0 and "已合入" not in asked.stdout
    assert not (tmp_path / "bot.db").exists()  # `ask` did not even open the store
    assert fake.calls == []


def test_enrich_fills_missing_metadata_and_keeps_notes_and_comments(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_pr(
        REPO,
        101,
        merged_at="2026-08-02T10:00:00Z",
        title='Fix "quotes": a: b',
        author="ann",
        labels=["bugfix", "v1"],
    )
    fake.add_pr(REPO, 102, merged_at="2026-08-03T10:00:00Z", title="Other", author="bob")
    meta = tmp_path / "d.meta.yaml"
    original = (
        "# curator's comment\n"
        "repo: vllm-project/vllm\n"
        "digest: d\n"
        "entries:\n"
        "  - title: 第一条  # keep me\n"
        "    pr: 101\n"
        "    note: |\n"
        "      值得精读。\n"
        "  - title: second\n"
        "    pr: 102\n"
        "    author: curator-wrote-this\n"
        "  - title: third\n"
    )
    meta.write_text(original, encoding="utf-8")
    run = cli(tmp_path, "github", "enrich", str(meta), github=fake.api_url)
    assert run.returncode == 0, run.stderr
    text = meta.read_text(encoding="utf-8")
    assert text.splitlines()[:6] == original.splitlines()[:6]
    assert '    github_title: "Fix \\"quotes\\": a: b"\n    author: "ann"\n    date: 2026-08-02\n' in text
    assert '    tags: ["bugfix", "v1"]\n    note: |\n      值得精读。\n' in text
    assert "author: curator-wrote-this" in text and 'author: "bob"' not in text
    import yaml

    data = yaml.safe_load(text)
    assert data["entries"][0]["github_title"] == 'Fix "quotes": a: b'
    assert data["entries"][1]["github_title"] == "Other"


def test_the_posted_pr_of_the_day_shows_its_state_and_is_not_the_reverted_one(
    fake: FakeGitHub, fake_slack: FakeSlack, tmp_path: Path, seed_library: Library
) -> None:
    seed_github(fake, seed_library)
    would_be = pick_entry(seed_library.entries, [], "C1", DAY)
    assert would_be is not None and would_be.entry.pr is not None
    fake.add_cross_reference(REPO, would_be.entry.pr, 59999, body=f"Reverts {REPO}#{would_be.entry.pr}")
    assert cli(tmp_path, "github", "refresh", github=fake.api_url).returncode == 0
    slack = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": fake_slack.api_url, "LANGUAGE": "en"}
    posted = cli(
        tmp_path, "post-today", "--channel", "C1", "--date", DAY.isoformat(), github=fake.api_url, **slack
    )
    assert posted.returncode == 0, posted.stderr
    [message] = fake_slack.messages("C1")
    card = str(message["blocks"])
    assert f"/pull/{would_be.entry.pr}" not in card
    assert "merged 2026-08-" in card


def test_serve_fetches_the_facts_in_the_background_at_start(
    fake: FakeGitHub, fake_slack: FakeSlack, tmp_path: Path, seed_library: Library
) -> None:
    from tests.daily.test_serve_daily import Serve

    seed_github(fake, seed_library)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "CACHE_DIR": str(tmp_path / "cache"),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": "test-secret",
        "SLACK_API_URL": fake_slack.api_url,
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_TOKEN": "ghp_test",
    }
    serve = Serve(env, tmp_path)
    try:
        serve.wait_for_line(f"GitHub facts: {len(seed_library)} PRs checked, ")
    finally:
        serve.stop()
    assert len(fake.calls) == 3 * len(seed_library)
    assert "reverted: #53529 [Test] DeepStack (in #53600)" in "".join(serve.seen)
    store = SqlStore.open(env["DATABASE_URL"])
    stored = PrFactsStore(store.engine).all()
    store.close()
    assert stored[(REPO, 53529)].sections["timeline"]["reverted_by"] == 53600


@settings(max_examples=60, deadline=None)
@given(title=st.text(min_size=1, max_size=80), labels=st.lists(st.text(min_size=1, max_size=20), max_size=3))
def test_enriched_values_read_back_as_github_wrote_them(title: str, labels: list[str]) -> None:
    """Any title or label (quotes, colons, `#`, newlines, Chinese) is written as YAML that reads
    back to itself, and the curator's lines stay as they were."""
    import yaml

    from chatbot.github.enrich import enrich_file

    class OnePull:
        api_url = "fake"

        def get(self, path: str, etag: str | None = None) -> Fetched:
            return Fetched(
                {"title": title, "user": {"login": "ann"}, "labels": [{"name": n} for n in labels]}, None
            )

    with tempfile.TemporaryDirectory() as folder:
        meta = Path(folder) / "d.meta.yaml"
        original = "repo: o/r\nentries:\n  - title: t  # mine\n    pr: 1\n    note: 好\n"
        meta.write_text(original, encoding="utf-8")
        result = enrich_file(meta, OnePull())  # type: ignore[arg-type]
        text = meta.read_text(encoding="utf-8")
    assert result.error is None and len(result.filled) == 1
    item = yaml.safe_load(text)["entries"][0]
    assert item["github_title"] == title and item["note"] == "好"
    assert item.get("tags", []) == labels
    assert text.startswith("repo: o/r\nentries:\n  - title: t  # mine\n    pr: 1\n")
