"""Posting the PR of the day exactly once per channel and day (adapter: store + Slack Web API).

Pick, claim (channel, day) in the store, post with marked metadata, record the ts. A post whose
outcome is unknown, or a dead run's claim, is looked for in the channel before anything is posted
again (`chatbot.slack.webapi.post_once`). docs/daily.md has the protocol and its failure cases.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterator, Sequence, Set
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from slack_sdk import WebClient

from chatbot.daily.picker import Pick, TopicFilter, pick_entry
from chatbot.digest import Entry, FactsLookup, no_facts, passed_over
from chatbot.slack.webapi import Posted, Sent, SlackMessage, find_marked_message, post_once
from chatbot.store import (
    STORE_FAILURES,
    ClaimOutcome,
    DailyPost,
    OutageQueue,
    SqlStore,
    ThreadRegistry,
    utc_now,
)
from chatbot.store.outage import WRITE_MAX_AGE, short

log = logging.getLogger(__name__)

DAILY_EVENT_TYPE = "vllm_digest_daily"
# A claim older than this is presumed dead even when its owner runs on another host.
CLAIM_LEASE = dt.timedelta(minutes=10)
# A claim whose post got no answer: stale for the next run, which looks in the history first.
UNKNOWN_OWNER = "unknown:"
# Slack errors about the message itself (its blocks, length, attachments, metadata), not the channel
# or the token: the same card is refused in that channel every time, so its entry is skipped there
# (until its card changes) and the next one posted, instead of the channel getting nothing for good.
MESSAGE_ERRORS = {
    "invalid_blocks",
    "invalid_blocks_format",
    "msg_too_long",
    "msg_blocks_too_long",
    "too_many_blocks",
    "invalid_attachments",
    "too_many_attachments",
    "no_text",
    "markdown_text_conflict",
    "invalid_metadata_format",
    "invalid_metadata_schema",
    "metadata_too_large",
}
# Refused entries one run skips before it leaves the rest to the scheduler's next retry.
SKIPS_PER_RUN = 3


class Status(enum.Enum):
    POSTED = "posted"  # this run posted the message
    ALREADY_POSTED = "already posted"  # an earlier run (or replica) did
    RECOVERED = "recovered"  # a crashed run's message was found in Slack and recorded
    BUSY = "busy"  # another live process is posting right now
    FAILED = "failed"  # transient Slack trouble after retries; claim released, retry later
    UNKNOWN = "unknown"  # no answer to the post and not (yet) in the history; the next run looks again
    REFUSED = "refused"  # Slack said no for good (channel_not_found, invalid_auth, ...)
    SKIPPED = "skipped"  # Slack refused the entry's card itself (invalid_blocks, ...); next entry
    NO_ENTRIES = "no entries"


@dataclass(frozen=True)
class DailyResult:
    status: Status
    channel: str
    day: dt.date
    entry_id: str | None = None
    message_ts: str | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status not in (
            Status.FAILED,
            Status.UNKNOWN,
            Status.REFUSED,
            Status.SKIPPED,
            Status.NO_ENTRIES,
        )

    @property
    def retry_later(self) -> bool:
        return self.status in (Status.FAILED, Status.UNKNOWN, Status.SKIPPED)

    def line(self) -> str:
        """One line for logs and the CLI."""
        what = f"{self.channel} {self.day.isoformat()}: {self.status.value}"
        if self.entry_id:
            what += f" entry {self.entry_id}"
        if self.message_ts:
            what += f" ts {self.message_ts}"
        return f"{what} ({self.detail})" if self.detail else what


def daily_metadata(channel: str, day: dt.date, entry_id: str) -> dict[str, Any]:
    return {
        "event_type": DAILY_EVENT_TYPE,
        "event_payload": {"day": day.isoformat(), "entry_id": entry_id, "channel": channel},
    }


NO_RECORD = "found the day's post in the channel; the database had no record of it"


def earliest_post(day: dt.date) -> dt.datetime:
    """The earliest time a post for `day` can have been made, in any time zone (UTC+14)."""
    return dt.datetime.combine(day, dt.time(), dt.UTC) - dt.timedelta(hours=14)


def process_owner() -> str:
    """Who holds a claim: host, pid, and a token unique to this run."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str, live_owners: Set[str] = frozenset()) -> bool:
    """True only when the owner ran on this host and its process is gone.

    An owner with this very pid but not among this process's `live_owners` is a previous
    process (a container restarted as pid 1 again).
    """
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    if int(pid_text) == os.getpid():
        return owner not in live_owners
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def claim_is_stale(
    owner: str, claimed_at: dt.datetime, now: dt.datetime, lease: dt.timedelta, live: Set[str]
) -> bool:
    """Whether another run may take a claim over: its post's outcome unknown, older than the
    lease, or its process gone (`live`: this process's claims at work)."""
    return owner.startswith(UNKNOWN_OWNER) or claimed_at < now - lease or owner_is_dead(owner, live)


@contextmanager
def owning(live: set[str]) -> Iterator[str]:
    """A new owner for one run's claims, counted among `live` while the run lasts."""
    owner = process_owner()
    live.add(owner)
    try:
        yield owner
    finally:
        live.discard(owner)


class DailyPoster:
    """Picks, claims, posts, records: one `run(channel, day)` per scheduled post."""

    def __init__(
        self,
        store: SqlStore,
        entries: Callable[[], Sequence[Entry]],
        client: WebClient,
        render: Callable[[Entry], SlackMessage],
        *,
        threads: ThreadRegistry | None = None,
        clock: Callable[[], dt.datetime] = utc_now,
        lease: dt.timedelta = CLAIM_LEASE,
        after_post: Callable[[], None] | None = None,
        topics: Callable[[str], TopicFilter | None] = lambda _channel: None,
        facts: FactsLookup = no_facts,
        outage: OutageQueue | None = None,
    ) -> None:
        self.store = store
        self.entries = entries
        self.client = client
        self.render = render
        self.threads: ThreadRegistry = threads or store
        self.clock = clock
        self.lease = lease
        self.after_post = after_post  # runs once Slack accepted, before the record (crash tests)
        self.topics = topics  # the channel's subscription topics, as the entries they select
        self.facts = facts  # GitHub's facts: reverted and unmerged PRs are passed over
        self._live_owners: set[str] = set()  # claims this process is working on right now
        self.outage = outage  # holds a post's record the database could not take (None: UNKNOWN)
        self._recording: set[str] = set()  # owners whose post waits in `outage` to be recorded

    def pick(self, channel: str, day: dt.date) -> Pick | None:
        entries = self._pickable(channel)
        skip = passed_over(entries, self.facts)
        return pick_entry(entries, self.store.history(channel), channel, day, self.topics(channel), skip)

    def _pickable(self, channel: str) -> list[Entry]:
        """The library minus the entries whose current card Slack refused in the channel (an
        edited entry renders another card and is picked again). Read from the store, so every
        replica picks alike."""
        entries = list(self.entries())
        refused = self.store.refused_entries(channel)
        if not refused:
            return entries
        ids = {entry_id for entry_id, _ in refused}
        return [e for e in entries if e.id not in ids or (e.id, self._card(e)) not in refused]

    def _card(self, entry: Entry) -> str:
        """The SHA-256 of the entry's card as posted: what a refusal is about."""
        message = self.render(entry)
        body = json.dumps(
            {"text": message.text, "blocks": message.blocks}, sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(body.encode()).hexdigest()

    def plan(self, channel: str, day: dt.date) -> DailyPost | Pick | None:
        """The day's row when it was posted, else the pick it gets (None: no entries)."""
        done = self.store.daily_post(channel, day)
        if done is not None and done.posted:
            return done
        return self.pick(channel, day)

    def entry_for_day(self, channel: str, day: dt.date) -> Entry | None:
        """The entry posted on the day, else the one that would be."""
        plan = self.plan(channel, day)
        if isinstance(plan, DailyPost):
            posted = next((e for e in self.entries() if e.id == plan.entry_id), None)
            if posted is not None:
                return posted
            plan = self.pick(channel, day)  # the posted entry left the library
        return plan.entry if plan else None

    def _is_stale(self, post: DailyPost) -> bool:
        live = self._live_owners | self._recording
        return claim_is_stale(post.owner, post.claimed_at, self.clock(), self.lease, live)

    def run(self, channel: str, day: dt.date) -> DailyResult:
        """Post the day's entry unless the day is done or being done; never raises for Slack errors."""
        with owning(self._live_owners) as owner:
            try:
                result = self._run(channel, day, owner)
                for _ in range(SKIPS_PER_RUN - 1):
                    if result.status is not Status.SKIPPED:
                        break
                    result = self._run(channel, day, owner)  # the refused entry is out of the pick now
                return result
            except STORE_FAILURES as exc:
                # Before anything was posted (a post's record is handled in `_posted`): a blip at
                # fire time is retried like Slack's trouble, within the grace window.
                detail = f"the database is unavailable ({short(exc)}); will retry"
                return DailyResult(Status.FAILED, channel, day, detail=detail)

    def _run(self, channel: str, day: dt.date, owner: str) -> DailyResult:
        existing = self.store.daily_post(channel, day)
        if existing is not None and existing.posted:
            return DailyResult(Status.ALREADY_POSTED, channel, day, existing.entry_id, existing.message_ts)
        pick = self.pick(channel, day)
        if pick is None:
            return DailyResult(Status.NO_ENTRIES, channel, day, detail="the library has no entries")
        claim = self.store.claim(
            channel, day, pick.entry.id, owner, now=self.clock(), is_stale=self._is_stale
        )
        row = claim.post
        if claim.outcome is ClaimOutcome.POSTED:
            return DailyResult(Status.ALREADY_POSTED, channel, day, row.entry_id, row.message_ts)
        if claim.outcome is ClaimOutcome.BUSY:
            return DailyResult(Status.BUSY, channel, day, row.entry_id, detail=f"claimed by {row.owner}")
        if claim.outcome is ClaimOutcome.TAKEN_OVER:
            return self._take_over(channel, day, owner, row, existing, pick)
        # A new claim, yet the day's post may be in the channel: a database that lost its file
        # (restored from a backup, a new SQLite file) must not make a restart post it again.
        found = self._recover(channel, day, owner, row, since=earliest_post(day), detail=NO_RECORD)
        return found or self._post(channel, day, pick.entry, owner, pick.reason)

    def _take_over(
        self, channel: str, day: dt.date, owner: str, row: DailyPost, existing: DailyPost | None, pick: Pick
    ) -> DailyResult:
        """A dead run's claim is ours now: its post when Slack has it, else post its entry."""
        recovered = self._recover(channel, day, owner, row, since=existing.claimed_at if existing else None)
        if recovered is not None:
            return recovered
        entry = next((e for e in self.entries() if e.id == row.entry_id), pick.entry)
        return self._post(channel, day, entry, owner, pick.reason)

    def _recover(
        self,
        channel: str,
        day: dt.date,
        owner: str,
        row: DailyPost,
        since: dt.datetime | None,
        detail: str = "found the crashed run's post",
    ) -> DailyResult | None:
        """A dead run's claim was taken over (or a new claim made): record the day's post when it
        is in the channel (None: it is not, post)."""
        found = self._find_posted(channel, day, since=since or row.claimed_at)
        if found is None:
            return None
        ts, entry_id = found[0], str(found[1].get("entry_id") or "")
        self.store.record_posted(channel, day, owner, ts, now=self.clock(), entry_id=entry_id or None)
        self._register(channel, ts, entry_id or row.entry_id)
        return DailyResult(Status.RECOVERED, channel, day, entry_id or row.entry_id, ts, detail)

    def _find_posted(
        self, channel: str, day: dt.date, since: dt.datetime
    ) -> tuple[str, dict[str, Any]] | None:
        """The day's marked post in the channel (None also when the history cannot be read: then
        post, a rare duplicate beats a missing day)."""
        mark = {"day": day.isoformat(), "channel": channel}
        return find_marked_message(
            self.client, channel, DAILY_EVENT_TYPE, mark, since - dt.timedelta(minutes=5)
        )

    def _post(self, channel: str, day: dt.date, entry: Entry, owner: str, reason: str) -> DailyResult:
        sent = post_once(
            self.client,
            channel,
            self.render(entry),
            daily_metadata(channel, day, entry.id),
            lambda: self._find_posted(channel, day, self.clock() - self.lease),
        )
        if sent.sent is Sent.POSTED:
            assert sent.ts is not None
            if self.after_post is not None:
                self.after_post()
            self._register(sent.channel, sent.ts, entry.id)
            return self._posted(DailyResult(Status.POSTED, channel, day, entry.id, sent.ts, reason), owner)
        if sent.sent in (Sent.FOUND, Sent.UNKNOWN):
            return self._unanswered(channel, day, entry, owner, sent)
        self.store.release(channel, day, owner)
        if sent.code in MESSAGE_ERRORS:
            return self._skip(channel, day, entry, sent)
        retry = "; will retry" if sent.sent is Sent.FAILED else "; fix the setup, not retrying"
        status = Status.FAILED if sent.sent is Sent.FAILED else Status.REFUSED
        return DailyResult(status, channel, day, entry.id, detail=sent.detail + retry)

    def _record(self, done: DailyResult, owner: str) -> None:
        """Mark the claim posted with the message's ts (raises a store failure)."""
        assert done.message_ts is not None and done.entry_id is not None
        recorded = self.store.record_posted(
            done.channel, done.day, owner, done.message_ts, now=self.clock(), entry_id=done.entry_id
        )
        if not recorded:
            log.warning(
                "daily post %s %s: claim was taken over while posting (ts %s)",
                done.channel,
                done.day,
                done.message_ts,
            )

    def _posted(self, done: DailyResult, owner: str) -> DailyResult:
        """Slack has the post: record it. The database away, the record is held in the outage
        queue (this process keeps the claim meanwhile, so no run of it posts again) and recorded
        once it is back; without a queue (`post-today`) the claim stays for the next run, which
        finds the post in the channel."""
        try:
            self._record(done, owner)
            return done
        except STORE_FAILURES as exc:
            if self.outage is None:
                detail = (
                    f"posted, but the database is unavailable ({short(exc)}); "
                    "the next run finds the post in the channel and records it"
                )
                return replace(done, status=Status.UNKNOWN, detail=detail)
            self._recording.add(owner)

            def record() -> None:
                self._record(done, owner)
                self._recording.discard(owner)

            self.outage.hold(
                f"daily:{done.channel}:{done.day}",
                f"the record of the PR of the day {done.channel} {done.day} (ts {done.message_ts})",
                record,
                lambda _reason: self._recording.discard(owner),  # the next run looks in the channel
                error=exc,
                max_age=WRITE_MAX_AGE,
            )
            return replace(done, detail=f"{done.detail}; recorded once the database is back")

    def _skip(self, channel: str, day: dt.date, entry: Entry, sent: Posted) -> DailyResult:
        """Slack refused the entry's card itself: note it, so no run picks that card here again
        (logged once, by the run that noted it); the caller picks the next entry."""
        if self.store.refuse_entry(channel, entry.id, self._card(entry), sent.code, now=self.clock()):
            log.error(
                "daily %s %s: %s for the card of entry %s; skipping that entry in this channel "
                "until its card changes",
                channel,
                day,
                sent.detail,
                entry.id,
            )
        detail = f"{sent.detail} for the entry's card; skipped here, next entry"
        return DailyResult(Status.SKIPPED, channel, day, entry.id, detail=detail)

    def _unanswered(self, channel: str, day: dt.date, entry: Entry, owner: str, sent: Posted) -> DailyResult:
        """The post got no answer (or a 5xx): recorded when it was found in the channel, else the
        claim is kept, marked unknown, for the next run to look again."""
        if sent.ts is None:
            self.store.mark_unknown(channel, day, owner, UNKNOWN_OWNER)
            detail = f"{sent.detail} and not in the channel yet; the next run looks for it before posting"
            return DailyResult(Status.UNKNOWN, channel, day, entry.id, detail=detail)
        entry_id = str(sent.payload.get("entry_id") or entry.id)
        self.store.record_posted(channel, day, owner, sent.ts, now=self.clock(), entry_id=entry_id)
        self._register(channel, sent.ts, entry_id)
        detail = f"{sent.detail}, found the post in the channel"
        return DailyResult(Status.POSTED, channel, day, entry_id, sent.ts, detail)

    def _register(self, channel_id: str, ts: str, entry_id: str) -> None:
        try:
            self.threads.register(channel_id, ts, entry_id)
        except Exception:  # the post is done; a lost registration only costs follow-ups
            log.exception("daily post: could not register thread %s %s", channel_id, ts)
