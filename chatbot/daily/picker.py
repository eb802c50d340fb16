"""Picking the PR of the day: a pure function of the entries, the channel's history and the day.

No database, no clock, no Slack: the same inputs always give the same pick, so every replica (and
`vllm-digest today`) agrees. The rules (rounds, newest first, tie hash, topic change, passed-over
PRs, a channel's topics) are in docs/daily.md; only posts *before* the day count, so the pick for
a day stays the same after it was posted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from chatbot.digest import Entry


@dataclass(frozen=True)
class PastPost:
    """One daily post of the channel: which entry on which day."""

    day: dt.date
    entry_id: str


@dataclass(frozen=True)
class Pick:
    """The entry for the day and a one-line reason a human can check."""

    entry: Entry
    reason: str
    topics_done: bool = False  # the channel has had every entry on its topics


@dataclass(frozen=True)
class TopicFilter:
    """A channel's topics as the entries they select (`matching` ids), for the picker."""

    matching: frozenset[str]
    labels: tuple[str, ...]
    strict: bool = False


def pick_entry(
    entries: Sequence[Entry],
    history: Iterable[PastPost],
    channel: str,
    day: dt.date,
    topics: TopicFilter | None = None,
    passed_over: Mapping[str, str] | None = None,
) -> Pick | None:
    """The entry to post in `channel` on `day` (on its `topics` first), or None when there is none;
    entries in `passed_over` (id → why: reverted, not merged) only when nothing else is left."""
    history = list(history)
    if not passed_over:
        return _pick_on_topics(entries, history, channel, day, topics)
    kept = [e for e in entries if e.id not in passed_over]
    if not kept:
        pick = _pick_on_topics(entries, history, channel, day, topics)
        if pick is None:
            return None
        return replace(pick, reason=f"every entry is reverted or unmerged ({len(entries)}); {pick.reason}")
    pick = _pick_on_topics(kept, history, channel, day, topics)
    first = _pick_on_topics(entries, history, channel, day, topics)
    if pick is None or first is None or first.entry.id not in passed_over:
        return pick
    return replace(pick, reason=f"passed over {passed_over[first.entry.id]}; {pick.reason}")


def _pick_on_topics(
    entries: Sequence[Entry],
    history: Sequence[PastPost],
    channel: str,
    day: dt.date,
    topics: TopicFilter | None,
) -> Pick | None:
    """Rules 1–4, on the channel's topics first (rule 6)."""
    if topics is None:
        return _pick(entries, history, channel, day)
    on_topic = [e for e in entries if e.id in topics.matching]
    named = ", ".join(topics.labels)
    before = {p.entry_id for p in history if p.day < day}
    if any(e.id not in before for e in on_topic):
        pick = _pick(on_topic, history, channel, day)
        assert pick is not None
        return Pick(pick.entry, f"on the channel's topics ({named}): {pick.reason}")
    return _after_topics(entries, on_topic, history, channel, day, topics)


def _after_topics(
    entries: Sequence[Entry],
    on_topic: list[Entry],
    history: Iterable[PastPost],
    channel: str,
    day: dt.date,
    topics: TopicFilter,
) -> Pick | None:
    """Every entry on the topics was posted: strict starts a new round of them, else the rest."""
    done = f"every entry on the channel's topics ({', '.join(topics.labels)}) was posted ({len(on_topic)})"
    pool, how = (
        (on_topic, "strict: a new round of them") if topics.strict else (entries, "picking from the rest")
    )
    pick = _pick(pool, history, channel, day)
    if pick is None:
        return None
    return Pick(pick.entry, f"{done}; {how}: {pick.reason}", topics_done=True)


def tie_break(day: dt.date, channel: str, entry_id: str) -> str:
    """Stable pseudo-random order for entries that the rules cannot tell apart."""
    return hashlib.sha256(f"{day.isoformat()}\n{channel}\n{entry_id}".encode()).hexdigest()


def main_topic(entry: Entry) -> str | None:
    """The entry's main topic: its first tag, case-folded; None when untagged."""
    return entry.tags[0].casefold() if entry.tags else None


def _pick(entries: Sequence[Entry], history: Iterable[PastPost], channel: str, day: dt.date) -> Pick | None:
    """Rules 1–4 over `entries`; None when there are no entries."""
    if not entries:
        return None
    by_id = {e.id: e for e in entries}
    tally = _tally(history, by_id, day)
    fewest = min(tally.times.values())
    due = [by_id[i] for i in by_id if tally.times[i] == fewest]
    if fewest == 0:
        # Newest digest first: digest names carry their date (vllm-digest-2026-08).
        due.sort(key=lambda e: tie_break(day, channel, e.id))
        due.sort(key=lambda e: e.digest, reverse=True)
        rule = "never posted here"
        detail = f"newest digest {due[0].digest}, then by hash of (day, channel, id)"
    else:
        due.sort(key=lambda e: (tally.last[e.id], tie_break(day, channel, e.id)))
        rule = f"round {fewest + 1}: every entry was posted {fewest}x"
        detail = f"least recently posted (last {tally.last[due[0].id].isoformat()})"
    chosen, topic_note = _other_topic(due, tally.previous, by_id)
    if chosen is not due[0]:
        if fewest == 0:
            detail = f"digest {chosen.digest}"
        else:
            detail = f"next least recently posted (last {tally.last[chosen.id].isoformat()})"
    reason = f"{rule}; {len(due)} of {len(entries)} due; {detail}{topic_note}"
    return Pick(chosen, reason)


@dataclass
class _Tally:
    """What the history before the day says: posts per entry, each one's last day, the latest post."""

    times: dict[str, int]
    last: dict[str, dt.date] = field(default_factory=dict)
    previous: PastPost | None = None


def _tally(history: Iterable[PastPost], by_id: dict[str, Entry], day: dt.date) -> _Tally:
    tally = _Tally(dict.fromkeys(by_id, 0))
    for post in history:
        if post.day >= day:
            continue
        if tally.previous is None or post.day > tally.previous.day:
            tally.previous = post
        if post.entry_id in by_id:
            tally.times[post.entry_id] += 1
            if post.entry_id not in tally.last or post.day > tally.last[post.entry_id]:
                tally.last[post.entry_id] = post.day
    return tally


def _other_topic(due: list[Entry], previous: PastPost | None, by_id: dict[str, Entry]) -> tuple[Entry, str]:
    """The first due entry, or the first on another topic than the previous post's (and why)."""
    previous_entry = by_id.get(previous.entry_id) if previous else None
    avoid = main_topic(previous_entry) if previous_entry else None
    if previous is None or avoid is None or main_topic(due[0]) != avoid:
        return due[0], ""
    other = next((e for e in due if main_topic(e) != avoid), None)
    if other is None:
        return due[0], f"; same topic '{avoid}' as the previous post, no other due entry"
    return other, f"; skipped topic '{avoid}' (previous post {previous.day.isoformat()})"
