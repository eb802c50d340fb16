"""Live facts about an entry's pull request (state, merge, reviews, reverts), as GitHub last said.

A digest is written once; its PRs move on (merged, reverted, closed). The GitHub adapter
(`chatbot.github`) fetches these facts into the store; cards, answers and the daily pick read
them through a lookup they are handed (`FactsLookup`), never from a global, and never wait on
GitHub. Pure: no HTTP, no database.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatbot.digest.model import Entry

# Facts checked longer ago than this are quoted with the time they were checked.
STALE_AFTER = dt.timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Review:
    """One reviewer's latest verdict: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED."""

    user: str
    verdict: str


@dataclass(frozen=True, slots=True)
class PrFacts:
    """What GitHub said about one PR when it was last checked (`checked_at`, UTC)."""

    repo: str
    pr: int
    checked_at: dt.datetime
    found: bool = True  # False: GitHub does not know the number (a digest problem)
    state: str = "open"  # "open" or "closed", as GitHub says
    merged: bool = False
    merged_at: dt.datetime | None = None
    closed_at: dt.datetime | None = None
    author: str | None = None
    title: str | None = None
    labels: tuple[str, ...] = ()
    additions: int | None = None
    deletions: int | None = None
    changed_files: int | None = None
    reviews: tuple[Review, ...] = ()
    reverted_by: int | None = None  # the PR that reverts this one
    follow_ups: tuple[int, ...] = field(default_factory=tuple)  # later PRs that reference it

    @property
    def closed_unmerged(self) -> bool:
        return self.state == "closed" and not self.merged

    def state_line(self) -> str:
        """The card's state: "⚠ reverted in #N", "merged YYYY-MM-DD", "closed without merging", "open"."""
        if not self.found:
            return f"#{self.pr} not found on GitHub"
        if self.reverted_by is not None:
            return f"⚠ reverted in #{self.reverted_by}"
        if self.merged:
            return f"merged {self.merged_at.date().isoformat()}" if self.merged_at else "merged"
        return "closed without merging" if self.closed_unmerged else "open"

    def pass_over_reason(self) -> str | None:
        """Why the PR of the day should not be this PR (reverted or not merged), else None."""
        if not self.found:
            return None  # nothing known: the digest alone decides
        if self.reverted_by is not None:
            return f"#{self.pr} reverted in #{self.reverted_by}"
        if self.closed_unmerged:
            return f"#{self.pr} closed without merging"
        if not self.merged:
            return f"#{self.pr} not merged yet"
        return None

    def size_line(self) -> str | None:
        """ "+120 −30 in 4 files", when GitHub gave the size."""
        if self.additions is None or self.deletions is None:
            return None
        files = f" in {self.changed_files} files" if self.changed_files is not None else ""
        return f"+{self.additions} −{self.deletions}{files}"

    def reviewer_line(self) -> str | None:
        """ "alice (approved), bob (changes requested)", when anyone reviewed."""
        if not self.reviews:
            return None
        return ", ".join(f"{r.user} ({r.verdict.lower().replace('_', ' ')})" for r in self.reviews)

    def checked_note(self, now: dt.datetime) -> str | None:
        """ "(checked on GitHub 2026-08-30 10:00 UTC)" when the facts are older than a day."""
        if now - self.checked_at <= STALE_AFTER:
            return None
        return f"(checked on GitHub {self.checked_at.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC)"

    def to_json(self) -> dict[str, Any]:
        """The facts as JSON values (`list --json`, App Home)."""
        return {
            "state": self.state_line(),
            "merged": self.merged,
            "merged_at": _iso(self.merged_at),
            "closed_at": _iso(self.closed_at),
            "author": self.author,
            "title": self.title,
            "labels": list(self.labels),
            "additions": self.additions,
            "deletions": self.deletions,
            "changed_files": self.changed_files,
            "reviewers": [{"user": r.user, "verdict": r.verdict} for r in self.reviews],
            "reverted_by": self.reverted_by,
            "follow_ups": list(self.follow_ups),
            "checked_at": _iso(self.checked_at),
        }


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value else None


# How cards, answers and the picker ask for an entry's facts: None when nothing is known.
FactsLookup = Callable[[Entry], PrFacts | None]


def no_facts(_entry: Entry) -> PrFacts | None:
    """The lookup of a bot without GitHub: nothing known, everything as the digest says."""
    return None


def facts_lookup(facts: Mapping[tuple[str, int], PrFacts]) -> FactsLookup:
    """A lookup over facts keyed by (repo, PR number), repo compared case-insensitively."""
    by_key = {(repo.casefold(), pr): f for (repo, pr), f in facts.items()}

    def lookup(entry: Entry) -> PrFacts | None:
        return by_key.get((entry.repo.casefold(), entry.pr)) if entry.pr is not None else None

    return lookup


def passed_over(entries: Sequence[Entry], lookup: FactsLookup) -> dict[str, str]:
    """Entry id → why the PR of the day passes over it (reverted, closed, not merged)."""
    reasons: dict[str, str] = {}
    for entry in entries:
        facts = lookup(entry)
        reason = facts.pass_over_reason() if facts else None
        if reason:
            reasons[entry.id] = reason
    return reasons
