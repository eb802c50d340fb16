"""GitHub's JSON answers cut to what the bot keeps (sections), and sections read back as `PrFacts`.

Three sections per PR, one per request, each stored with its own ETag so a 304 keeps it:
`pull` (state, merge, author, title, labels, size), `reviews` (each reviewer's latest verdict),
`timeline` (later PRs that revert it or follow it up).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from chatbot.digest import PrFacts, Review

# Reviews that are no verdict: a review still being written.
NOT_A_VERDICT = {"PENDING"}
REVERT_TITLE_RE = re.compile(r'^\s*Revert\s+"', re.IGNORECASE)


def pull_section(body: dict[str, Any]) -> dict[str, Any]:
    """What `GET /repos/{o}/{r}/pulls/{n}` says that the bot keeps."""
    return {
        "state": body.get("state") or "open",
        "merged": bool(body.get("merged") or body.get("merged_at")),
        "merged_at": body.get("merged_at"),
        "closed_at": body.get("closed_at"),
        "created_at": body.get("created_at"),
        "author": (body.get("user") or {}).get("login"),
        "title": body.get("title"),
        "labels": [label.get("name") for label in body.get("labels") or [] if label.get("name")],
        "additions": body.get("additions"),
        "deletions": body.get("deletions"),
        "changed_files": body.get("changed_files"),
    }


def reviews_section(body: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each reviewer once, with their latest verdict, in the order they first reviewed."""
    latest: dict[str, str] = {}
    for review in body:
        user = (review.get("user") or {}).get("login")
        state = review.get("state") or ""
        # A comment after an approval keeps the approval.
        if user and state not in NOT_A_VERDICT and (state != "COMMENTED" or user not in latest):
            latest[user] = state
    return [{"user": user, "verdict": verdict} for user, verdict in latest.items()]


def timeline_section(body: list[dict[str, Any]], repo: str, pr: int) -> dict[str, Any]:
    """The PR that reverts this one (body `Reverts owner/repo#n`, or a title `Revert "…"`), and
    the other later PRs of the repository that reference it (follow-ups)."""
    reverts_re = re.compile(rf"\bReverts\s+{re.escape(repo)}#{pr}\b", re.IGNORECASE)
    reverted_by: int | None = None
    follow_ups: list[int] = []
    sources = [source for event in body if (source := _cross_referenced_pr(event, repo, pr)) is not None]
    for source in sources:
        number = int(source["number"])
        if reverted_by is None and _reverts(source, reverts_re):
            reverted_by = number
        elif number not in follow_ups and number != reverted_by:
            follow_ups.append(number)
    return {"reverted_by": reverted_by, "follow_ups": follow_ups}


def _reverts(source: dict[str, Any], reverts_re: re.Pattern[str]) -> bool:
    """A PR whose body says `Reverts owner/repo#n` or whose title is `Revert "…"`, unless it was
    closed without merging (then it reverted nothing)."""
    says = reverts_re.search(source.get("body") or "") or REVERT_TITLE_RE.match(source.get("title") or "")
    return bool(says) and not _closed_unmerged(source)


def _cross_referenced_pr(event: dict[str, Any], repo: str, pr: int) -> dict[str, Any] | None:
    """The referencing PR (not `pr` itself) of a `cross-referenced` timeline event in the same
    repository."""
    if event.get("event") != "cross-referenced":
        return None
    issue = (event.get("source") or {}).get("issue") or {}
    if "pull_request" not in issue or issue.get("number") in (None, pr):
        return None
    source_repo = (issue.get("repository") or {}).get("full_name")
    if source_repo and source_repo.casefold() != repo.casefold():
        return None
    return dict(issue)


def _closed_unmerged(issue: dict[str, Any]) -> bool:
    """A revert PR closed without merging reverts nothing."""
    pull = issue.get("pull_request") or {}
    return issue.get("state") == "closed" and "merged_at" in pull and pull["merged_at"] is None


def facts_of(repo: str, pr: int, sections: dict[str, Any], checked_at: dt.datetime) -> PrFacts:
    """The stored sections as the core's `PrFacts`."""
    if sections.get("found") is False:
        return PrFacts(repo, pr, checked_at, found=False)
    pull = sections.get("pull") or {}
    timeline = sections.get("timeline") or {}
    return PrFacts(
        repo,
        pr,
        checked_at,
        state=pull.get("state") or "open",
        merged=bool(pull.get("merged")),
        merged_at=_time(pull.get("merged_at")),
        closed_at=_time(pull.get("closed_at")),
        author=pull.get("author"),
        title=pull.get("title"),
        labels=tuple(pull.get("labels") or ()),
        additions=pull.get("additions"),
        deletions=pull.get("deletions"),
        changed_files=pull.get("changed_files"),
        reviews=tuple(Review(r["user"], r["verdict"]) for r in sections.get("reviews") or ()),
        reverted_by=timeline.get("reverted_by"),
        follow_ups=tuple(timeline.get("follow_ups") or ()),
    )


def _time(value: str | None) -> dt.datetime | None:
    """GitHub's `2026-08-24T10:00:00Z`."""
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
