"""One refresh of the digest's PR facts: a bounded number of conditional requests, stored, compared.

PRs never fetched go first, then the longest unchecked. A 304 keeps the stored section and only
moves `checked_at`; a 404 is a digest problem at the entry's file:line; GitHub down, hanging or
asking to wait ends the refresh there (the facts kept, with their age) and the next one goes on.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatbot.digest import Entry, PrFacts, Problem
from chatbot.github.client import GitHubClient, GitHubUnavailable, NotFound
from chatbot.github.sections import facts_of, pull_section, reviews_section, timeline_section
from chatbot.store.prfacts import PrFactsStore, StoredFacts

log = logging.getLogger("chatbot.github")

# Requests one refresh may send (three per PR); the rest wait for the next refresh.
MAX_REQUESTS = 300
REQUESTS_PER_PR = 3


@dataclass
class RefreshReport:
    """What one refresh did: what changed (newly merged, reverted, closed), problems, what is left."""

    changes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    checked: int = 0
    deferred: int = 0
    error: str | None = None

    def lines(self) -> list[str]:
        """What changed, the problems, then one summary line."""
        summary = f"{self.checked} PRs checked, {len(self.changes)} changed, {self.deferred} left for later"
        if self.error:
            summary += f"; stopped: {self.error}; the last facts are kept, the next refresh tries again"
        return [*self.changes, *(str(p) for p in self.problems), summary]


def load_facts(store: PrFactsStore) -> dict[tuple[str, int], PrFacts]:
    """Every stored PR's facts, for the lookup cards, answers and the picker read."""
    return {key: facts_of(row.repo, row.pr, row.sections, row.checked_at) for key, row in store.all().items()}


def targets(entries: Iterable[Entry]) -> dict[tuple[str, int], Entry]:
    """(repo, PR) → the first entry naming it."""
    found: dict[tuple[str, int], Entry] = {}
    for entry in entries:
        if entry.pr is not None:
            found.setdefault((entry.repo, entry.pr), entry)
    return found


class FactsRefresher:
    """Fetches facts for the digest's PRs into the store (one refresh per call)."""

    def __init__(
        self,
        client: GitHubClient,
        store: PrFactsStore,
        *,
        max_requests: int = MAX_REQUESTS,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.client = client
        self.store = store
        self.max_requests = max_requests
        self.clock = clock

    def missing(self, entries: Sequence[Entry]) -> list[tuple[str, int]]:
        """The digest's PRs with no stored facts yet (new entries)."""
        stored = self.store.all()
        return sorted(key for key in targets(entries) if key not in stored)

    def refresh(self, entries: Sequence[Entry]) -> RefreshReport:
        """Check the digest's PRs, most due first, within the request budget. A wait GitHub asked
        for (kept in the store for every replica) holds whoever refreshes."""
        api_url = self.client.api_url
        waited = self.store.wait_until(api_url)
        if waited is not None and (self.client.blocked_until is None or waited > self.client.blocked_until):
            self.client.blocked_until = waited
        try:
            return self._refresh(entries)
        finally:
            if self.client.blocked_until is not None and self.client.blocked_until != waited:
                self.store.save_wait(api_url, self.client.blocked_until)

    def _refresh(self, entries: Sequence[Entry]) -> RefreshReport:
        report = RefreshReport()
        stored = self.store.all()
        todo = sorted(targets(entries).items(), key=lambda item: _due(stored.get(item[0])))
        budget = self.max_requests
        for index, ((repo, pr), entry) in enumerate(todo):
            if budget < REQUESTS_PER_PR:
                report.deferred = len(todo) - index
                break
            budget -= REQUESTS_PER_PR
            try:
                self._refresh_one(repo, pr, entry, stored.get((repo, pr)), report)
            except GitHubUnavailable as exc:
                report.error = str(exc)
                report.deferred = len(todo) - index
                log.warning("%s; the last facts are kept", exc)
                break
        return report

    def _refresh_one(
        self, repo: str, pr: int, entry: Entry, old: StoredFacts | None, report: RefreshReport
    ) -> None:
        """Fetch one PR's three sections (conditionally), store them, note what changed."""
        now = self.clock()
        try:
            sections, etags, changed = self._fetch(repo, pr, old)
        except NotFound:
            sections, etags, changed = (
                {"found": False},
                {},
                old is None or old.sections.get("found") is not False,
            )
            report.problems.append(_not_found(entry))
        fetched_at = now if changed or old is None else old.fetched_at
        self.store.save(StoredFacts(repo, pr, sections, etags, fetched_at, now))
        report.checked += 1
        before = facts_of(repo, pr, old.sections, old.checked_at) if old else None
        report.changes.extend(what_changed(before, facts_of(repo, pr, sections, now)))

    def _fetch(
        self, repo: str, pr: int, old: StoredFacts | None
    ) -> tuple[dict[str, Any], dict[str, str], bool]:
        """The three sections, each from GitHub or (304) as stored; whether any changed."""
        old_sections, old_etags = _known(old)
        paths = {
            "pull": f"/repos/{repo}/pulls/{pr}",
            "reviews": f"/repos/{repo}/pulls/{pr}/reviews?per_page=100",
            "timeline": f"/repos/{repo}/issues/{pr}/timeline?per_page=100",
        }
        read: dict[str, Callable[[Any], Any]] = {
            "pull": pull_section,
            "reviews": reviews_section,
            "timeline": lambda body: timeline_section(body, repo, pr),
        }
        sections: dict[str, Any] = {}
        etags: dict[str, str] = {}
        changed = False
        for name, path in paths.items():
            fetched = self.client.get(path, old_etags.get(name) if name in old_sections else None)
            sections[name] = old_sections[name] if fetched.body is None else read[name](fetched.body)
            changed |= fetched.body is not None
            etags.update({name: fetched.etag} if fetched.etag else {})
        return sections, etags, changed


def _known(old: StoredFacts | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The stored sections and ETags to ask with; none for a PR never fetched or not found."""
    if old is None or old.sections.get("found") is False:
        return {}, {}
    return old.sections, old.etags


def _due(row: StoredFacts | None) -> dt.datetime:
    """Never fetched first, then the longest unchecked."""
    return row.checked_at if row else dt.datetime.min.replace(tzinfo=dt.UTC)


def _not_found(entry: Entry) -> Problem:
    path, _, line = entry.source.rpartition(":")
    return Problem(
        path or entry.source,
        int(line) if line.isdigit() else 1,
        "warning",
        f"PR #{entry.pr} is not on GitHub ({entry.repo}); check the number",
    )


def what_changed(before: PrFacts | None, after: PrFacts) -> list[str]:
    """Newly merged, reverted or closed, as lines for the curator."""
    if not after.found:
        return []
    was = before if before is not None and before.found else None
    title = f"#{after.pr} {after.title or ''}".rstrip()
    return [line(after, title) for test, line in _CHANGES if test(after) and (was is None or not test(was))]


def _merged_line(facts: PrFacts, title: str) -> str:
    merged = f" {facts.merged_at.date().isoformat()}" if facts.merged_at else ""
    return f"newly merged{merged}: {title}"


# What the curator is told about, in order: (it holds now, its line).
_CHANGES: tuple[tuple[Callable[[PrFacts], bool], Callable[[PrFacts, str], str]], ...] = (
    (lambda f: f.reverted_by is not None, lambda f, title: f"reverted: {title} (in #{f.reverted_by})"),
    (lambda f: f.merged, _merged_line),
    (lambda f: f.closed_unmerged, lambda _f, title: f"closed without merging: {title}"),
)
