"""The PR-of-the-day picker: rounds, newest digest first, least recently posted, topics, determinism."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.daily.picker import PastPost, pick_entry
from chatbot.digest.model import Entry

DAY = dt.date(2026, 9, 1)


def entry(entry_id: str, digest: str = "vllm-digest-2026-08", tags: list[str] | None = None) -> Entry:
    return Entry(
        id=entry_id,
        repo="vllm-project/vllm",
        digest=digest,
        position=1,
        title=f"title {entry_id}",
        note="值得精读。",
        tags=tags or [],
        source=f"{digest}.txt:1",
    )


def run_days(
    entries: list[Entry], channel: str, start: dt.date, days: int, history: list[PastPost]
) -> list[str]:
    """Post daily for `days` days, feeding each pick back as history; the picked ids in order."""
    picked = []
    for n in range(days):
        day = start + dt.timedelta(days=n)
        pick = pick_entry(entries, history, channel, day)
        assert pick is not None
        history.append(PastPost(day, pick.entry.id))
        picked.append(pick.entry.id)
    return picked


def test_never_posted_newest_digest_first() -> None:
    entries = [
        entry("old1", "vllm-digest-2026-07"),
        entry("new1", "vllm-digest-2026-08"),
        entry("old2", "vllm-digest-2026-07"),
    ]
    picked = run_days(entries, "C1", DAY, 3, [])
    assert picked[0] == "new1"
    assert set(picked[1:]) == {"old1", "old2"}
    first = pick_entry(entries, [], "C1", DAY)
    assert first is not None and "never posted here" in first.reason and "vllm-digest-2026-08" in first.reason


def test_after_a_full_round_least_recently_posted_first() -> None:
    entries = [entry("a"), entry("b"), entry("c")]
    history = [
        PastPost(dt.date(2026, 8, 3), "b"),
        PastPost(dt.date(2026, 8, 1), "c"),
        PastPost(dt.date(2026, 8, 2), "a"),
    ]
    pick = pick_entry(entries, history, "C1", DAY)
    assert pick is not None and pick.entry.id == "c"
    assert "round 2" in pick.reason and "2026-08-01" in pick.reason


def test_an_entry_posted_twice_counts_from_its_latest_post() -> None:
    # a went out first and last; b in between, twice. Round 3: b's latest post is older than a's.
    entries = [entry("a"), entry("b")]
    history = [
        PastPost(dt.date(2026, 8, 4), "a"),
        PastPost(dt.date(2026, 8, 1), "a"),
        PastPost(dt.date(2026, 8, 3), "b"),
        PastPost(dt.date(2026, 8, 2), "b"),
    ]
    pick = pick_entry(entries, history, "C1", DAY)
    assert pick is not None and pick.entry.id == "b"
    assert pick.reason == (
        "round 3: every entry was posted 2x; 2 of 2 due; least recently posted (last 2026-08-03)"
    )


def test_an_entry_added_later_comes_before_reposts() -> None:
    entries = [entry("a"), entry("b"), entry("late", "vllm-digest-2026-07")]
    history = [PastPost(dt.date(2026, 8, 1), "a"), PastPost(dt.date(2026, 8, 2), "b")]
    pick = pick_entry(entries, history, "C1", DAY)
    assert pick is not None and pick.entry.id == "late"


def test_avoids_yesterdays_main_topic_when_there_is_another_choice() -> None:
    entries = [entry(f"k{n}", tags=["kernels"]) for n in range(5)] + [entry("s1", tags=["Scheduler", "kv"])]
    reasons = []
    for offset in range(10):
        day = DAY + dt.timedelta(days=offset)
        pick = pick_entry(entries, [PastPost(day - dt.timedelta(days=1), "k0")], "C1", day)
        assert pick is not None and pick.entry.id == "s1"
        reasons.append(pick.reason)
    assert any("skipped topic 'kernels'" in r for r in reasons)


def test_same_topic_when_it_is_the_only_due_entry() -> None:
    entries = [entry("k1", tags=["kernels"]), entry("k2", tags=["kernels"])]
    pick = pick_entry(entries, [PastPost(DAY - dt.timedelta(days=1), "k1")], "C1", DAY)
    assert pick is not None and pick.entry.id == "k2"
    assert "no other due entry" in pick.reason


def test_posts_on_or_after_the_day_do_not_change_its_pick() -> None:
    entries = [entry("a"), entry("b"), entry("c")]
    before = pick_entry(entries, [], "C1", DAY)
    assert before is not None
    after = pick_entry(
        entries, [PastPost(DAY, before.entry.id), PastPost(DAY + dt.timedelta(days=1), "a")], "C1", DAY
    )
    assert after == before


def test_channels_get_their_own_order() -> None:
    entries = [entry(f"e{n}") for n in range(12)]
    orders = {c: run_days(entries, c, DAY, 12, []) for c in ("C1", "C2", "C3")}
    assert len({tuple(o) for o in orders.values()}) > 1


def test_no_entries_no_pick() -> None:
    assert pick_entry([], [], "C1", DAY) is None


def test_seed_digest_first_week(seed_library) -> None:  # type: ignore[no-untyped-def]
    picked = run_days(seed_library.entries, "C1", DAY, len(seed_library.entries), [])
    assert sorted(picked) == sorted(e.id for e in seed_library.entries)


ids = st.text(alphabet="abcdef0123456789", min_size=4, max_size=10)
topics = st.sampled_from(["kernels", "scheduler", "compile", "spec-decode"])
entry_lists = st.lists(
    st.tuples(
        ids, st.sampled_from(["vllm-digest-2026-07", "vllm-digest-2026-08"]), st.lists(topics, max_size=2)
    ),
    min_size=1,
    max_size=15,
    unique_by=lambda t: t[0],
).map(lambda rows: [entry(i, d, t) for i, d, t in rows])


@settings(max_examples=150, deadline=None)
@given(entries=entry_lists, channel=st.sampled_from(["C1", "C0ENG", "console"]), offset=st.integers(0, 4000))
def test_every_round_posts_every_entry_exactly_once(entries: list[Entry], channel: str, offset: int) -> None:
    start = DAY + dt.timedelta(days=offset)
    history: list[PastPost] = []
    n = len(entries)
    first = run_days(entries, channel, start, n, history)
    second = run_days(entries, channel, start + dt.timedelta(days=n), n, history)
    assert sorted(first) == sorted(e.id for e in entries)
    assert sorted(second) == sorted(e.id for e in entries)


@settings(max_examples=100, deadline=None)
@given(entries=entry_lists, offset=st.integers(0, 4000), posted=st.integers(0, 20))
def test_same_inputs_same_pick(entries: list[Entry], offset: int, posted: int) -> None:
    day = DAY + dt.timedelta(days=offset)
    history = [PastPost(day - dt.timedelta(days=k + 1), entries[k % len(entries)].id) for k in range(posted)]
    first = pick_entry(entries, history, "C1", day)
    again = pick_entry(list(reversed(entries)), list(reversed(history)), "C1", day)
    assert first is not None and again is not None
    assert first.entry.id == again.entry.id and first.reason == again.reason


@settings(max_examples=100, deadline=None)
@given(entries=entry_lists, offset=st.integers(0, 4000))
def test_same_topic_two_days_running_only_without_another_due_entry(
    entries: list[Entry], offset: int
) -> None:
    start = DAY + dt.timedelta(days=offset)
    history: list[PastPost] = []
    by_id = {e.id: e for e in entries}
    for n in range(2 * len(entries)):
        day = start + dt.timedelta(days=n)
        pick = pick_entry(entries, history, "C1", day)
        assert pick is not None
        if history:
            before = by_id[history[-1].entry_id]
            topic = before.tags[0].casefold() if before.tags else None
            if topic is not None and pick.entry.tags and pick.entry.tags[0].casefold() == topic:
                assert "no other due entry" in pick.reason
        history.append(PastPost(day, pick.entry.id))
