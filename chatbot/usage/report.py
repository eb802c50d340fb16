"""The curator report: what readers searched for and asked, and what the digest lacked.

Over a window (`--since 30d`): searches per day, top queries, queries with no match (the
digest's gaps), entries by views / shares / questions / votes, follow-up questions the note could
not answer, and what people said was missing. Text is quoted only from public channels; the rest
(direct messages, private channels, App Home, unknown) is counted in `unquoted`. Grouping happens
here, not in SQL, so SQLite and PostgreSQL give the same report.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from chatbot.settings import parse_span
from chatbot.usage.places import QUOTABLE
from chatbot.usage.tables import usage_answers, usage_entry_events, usage_feedback, usage_searches

TOP = 20


def parse_since(value: str, now: dt.datetime) -> dt.datetime:
    """`30d`, `12h`, `2w`, or a date `2026-11-01` → the window's start (UTC)."""
    span = parse_span(value)
    if span is not None:
        return now - span
    try:
        day = dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"expected a span like 30d, 12h, 2w or a date YYYY-MM-DD, got {value!r}") from None
    since = dt.datetime.combine(day, dt.time(), dt.UTC)
    if since > now:
        raise ValueError(f"{day} is after today; nothing can have happened since")
    return since


@dataclass
class EntryUsage:
    entry: str
    title: str
    pr: int | None
    views: int = 0
    shares: int = 0
    questions: int = 0
    up: int = 0
    down: int = 0


@dataclass
class CuratorReport:
    since: str
    until: str
    searches: int = 0
    searches_per_day: list[dict[str, Any]] = field(default_factory=list)
    top_queries: list[dict[str, Any]] = field(default_factory=list)
    no_match: list[dict[str, Any]] = field(default_factory=list)
    entries: list[EntryUsage] = field(default_factory=list)
    not_in_note: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    # Searches, unanswered questions and 👎 comments from private places: counted, not quoted.
    unquoted: dict[str, int] = field(default_factory=lambda: {"searches": 0, "questions": 0, "comments": 0})

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


Rows = Sequence[Any]  # SQLAlchemy rows, unpacked by position


def build_report(
    engine: Engine,
    since: dt.datetime,
    until: dt.datetime,
    describe: Callable[[str], tuple[str, int | None]] = lambda entry_id: ("", None),
) -> CuratorReport:
    """The report over [since, until]; `describe(entry_id)` gives an entry's title and PR."""
    report = CuratorReport(since.isoformat(timespec="seconds"), until.isoformat(timespec="seconds"))
    searches, events, answers, votes = _rows(engine, since, until)
    _add_searches(report, searches)
    _add_entries(report, events, answers, votes, describe)
    return report


def _rows(engine: Engine, since: dt.datetime, until: dt.datetime) -> tuple[Rows, Rows, Rows, Rows]:
    """Searches, entry events, answers and votes of the period, one read."""
    wanted = (
        (usage_searches, ("at", "query", "results", "place")),
        (usage_entry_events, ("entry_id", "kind")),
        (usage_answers, ("entry_id", "intent", "found", "question", "place")),
        (usage_feedback, ("kind", "entry_id", "vote", "target", "missing", "place")),
    )
    with engine.connect() as conn:
        searches, events, answers, votes = (
            conn.execute(select(*(t.c[n] for n in names)).where(t.c.at >= since, t.c.at <= until)).all()
            for t, names in wanted
        )
    return searches, events, answers, votes


def _add_searches(report: CuratorReport, searches: Rows) -> None:
    """Searches per day, the top queries and the ones that matched nothing."""
    report.searches = len(searches)
    per_day: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    matched: Counter[str] = Counter()
    gaps: Counter[str] = Counter()
    last_gap: dict[str, dt.datetime] = {}
    for at, query, results, place in searches:
        day = per_day[at.date().isoformat()]
        day[0] += 1
        if not results:
            day[1] += 1
        if place != QUOTABLE:
            report.unquoted["searches"] += 1
        elif results:
            matched[query] += 1
        else:
            gaps[query] += 1
            last_gap[query] = max(last_gap.get(query, at), at)
    report.searches_per_day = [
        {"day": day, "searches": n, "no_match": misses} for day, (n, misses) in sorted(per_day.items())
    ]
    report.top_queries = [{"query": q, "searches": n} for q, n in _ranked(matched)]
    report.no_match = [
        {"query": q, "searches": n, "last": last_gap[q].isoformat(timespec="seconds")}
        for q, n in _ranked(gaps)
    ]


def _add_entries(
    report: CuratorReport,
    events: Rows,
    answers: Rows,
    votes: Rows,
    describe: Callable[[str], tuple[str, int | None]],
) -> None:
    """Per entry: views, shares, questions, votes; what the notes did not answer; 👎 notes."""
    usage: dict[str, EntryUsage] = {}

    def entry(entry_id: str) -> EntryUsage:
        if entry_id not in usage:
            title, pr = describe(entry_id)
            usage[entry_id] = EntryUsage(entry_id, title, pr)
        return usage[entry_id]

    for entry_id, kind in events:
        if kind == "shared":
            entry(entry_id).shares += 1
        else:  # shown in results, posted as the PR of the day
            entry(entry_id).views += 1
    unanswered: Counter[tuple[str, str, str]] = Counter()
    for entry_id, intent, found, question, place in answers:
        entry(entry_id).questions += 1
        if not found and place != QUOTABLE:
            report.unquoted["questions"] += 1
        elif not found:
            unanswered[(entry_id, intent, question or "")] += 1
    _add_votes(report, votes, entry)
    report.entries = sorted(
        usage.values(), key=lambda u: (-(u.views + u.shares + u.questions + u.up + u.down), u.entry)
    )
    report.not_in_note = [
        {"entry": e, "title": entry(e).title, "intent": intent, "question": q, "count": n}
        for (e, intent, q), n in sorted(unanswered.items(), key=lambda item: (-item[1], item[0]))
    ]


def _add_votes(report: CuratorReport, votes: Rows, entry: Callable[[str], EntryUsage]) -> None:
    """👍 and 👎 per entry; the comment of a 👎 is what the note missed."""
    for kind, entry_id, vote, target, missing, place in votes:
        row = entry(entry_id)
        if vote > 0:
            row.up += 1
            continue
        row.down += 1
        if missing and place != QUOTABLE:
            report.unquoted["comments"] += 1
        elif missing:
            report.missing.append(
                {
                    "entry": entry_id,
                    "kind": kind,
                    "query": target if kind == "search" else None,
                    "text": missing,
                }
            )


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP]


def render_text(report: CuratorReport) -> str:
    """The report as plain text (the CLI; the weekly post renders the same sections)."""
    lines = [f"vllm-digest usage {report.since} → {report.until}: {report.searches} searches"]
    lines += _section(
        "Queries with no match (the digest's gaps):",
        [f"  {g['searches']:4d}  {g['query']}" for g in report.no_match],
    )
    lines += _section("Top queries:", [f"  {t['searches']:4d}  {t['query']}" for t in report.top_queries])
    lines += _section(
        "Searches per day (searches / no match):",
        [f"  {d['day']}  {d['searches']:4d} / {d['no_match']}" for d in report.searches_per_day],
    )
    lines += _section(
        "Entries (views, shares, thread questions, 👍, 👎):", [_entry_line(e) for e in report.entries]
    )
    lines += _section(
        'Follow-up questions answered "not in the note":',
        [
            f"  {q['count']:4d}  [{q['title'] or q['entry']}] {q['question']} ({q['intent']})"
            for q in report.not_in_note
        ],
    )
    lines += ["", unquoted_line(report)]
    if report.missing:
        lines += [
            "",
            "What was missing (👎 comments):",
            *(f"  [{m['entry']}] {m['text']}" for m in report.missing),
        ]
    return "\n".join(lines)


def unquoted_line(report: CuratorReport) -> str:
    """How much came from direct messages, private channels and App Home (never quoted)."""
    n = report.unquoted
    return (
        f"Not quoted (direct messages, private channels, App Home): {n['searches']} searches, "
        f"{n['questions']} unanswered questions, {n['comments']} 👎 comments"
    )


def _section(title: str, rows: list[str]) -> list[str]:
    """A blank line, the title, the rows or `(none)`."""
    return ["", title, *(rows or ["  (none)"])]


def _entry_line(e: EntryUsage) -> str:
    return (
        f"  {e.views:4d} {e.shares:4d} {e.questions:4d} {e.up:4d} {e.down:4d}  "
        + (f"#{e.pr} " if e.pr else "")
        + (e.title or e.entry)
    )
