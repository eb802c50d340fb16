"""Posting the PR of the day exactly once per channel and day (adapter: store + Slack Web API).

The protocol (docs/daily.md has the failure cases):

1. Pick the entry (chatbot.daily.picker) from the channel's history.
2. Claim (channel, day) in the store; the primary key lets exactly one process win.
3. Post with Slack message metadata `vllm_digest_daily` {day, entry_id, channel}.
4. Record the message ts. When Slack refused, release the claim so a later run retries.
   When Slack refused the entry's card itself (`MESSAGE_ERRORS`: invalid_blocks, msg_too_long, …),
   the refusal is noted in the store, the picker leaves that card out in the channel, and the run
   picks the next entry: one bad entry must not stop a channel's PR of the day for good.

A process that died between 3 and 4 leaves a claim without a ts. Whoever takes that stale claim
over first looks in the channel's history for the marked message and records it instead of
posting again.

A post that got no answer (timed out, connection dropped after sending) is *unknown*, not
failed: Slack may have stored it. The run looks for it in the history at once and records it
when it is there; otherwise the claim is kept and marked unknown, so the next run (the
scheduler's retry, a rerun of `post-today`) looks again before posting. Only a request that
certainly never left (connection refused, host not found) is retried or released as failed.
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
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.daily.picker import Pick, TopicFilter, pick_entry
from chatbot.digest import Entry, FactsLookup, no_facts, passed_over
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
# Slack errors worth another run later; every other error code is permanent (a setup problem).
TRANSIENT_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
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


@dataclass(frozen=True)
class SlackMessage:
    """What chat.postMessage gets: fallback text and Block Kit blocks."""

    text: str
    blocks: list[dict[str, Any]]


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


def never_sent(error: BaseException) -> bool:
    """True only when a request certainly did not reach Slack: the connection was refused or the
    host was not found. A timeout or a dropped connection may come after Slack acted on it."""
    reason = error.reason if isinstance(error, URLError) else error
    return isinstance(reason, ConnectionRefusedError | socket.gaierror)


def maybe_stored(error: SlackApiError) -> bool:
    """A post answered with a 5xx: Slack may have stored it before failing (the post-once rule)."""
    return error.response is not None and error.response.status_code >= 500


def unknown_outcome(error: BaseException) -> str:
    """Why a post's outcome is unknown, in one line: Slack's 5xx, or no answer at all."""
    if isinstance(error, SlackApiError):
        code, status_code, _ = slack_refusal(error)
        return f"Slack answered {code} (HTTP {status_code}), the post may be stored"
    return f"no answer from Slack ({str(error) or type(error).__name__})"


def post_message(
    client: WebClient, channel: str, message: SlackMessage, metadata: dict[str, Any]
) -> tuple[str, str]:
    """chat.postMessage with metadata; (channel id, message ts). The only place the bot posts daily."""
    response = client.chat_postMessage(
        channel=channel,
        text=message.text,
        blocks=message.blocks,
        metadata=metadata,
        unfurl_links=False,
        unfurl_media=False,
    )
    return str(response.get("channel") or channel), str(response["ts"])


def daily_metadata(channel: str, day: dt.date, entry_id: str) -> dict[str, Any]:
    return {
        "event_type": DAILY_EVENT_TYPE,
        "event_payload": {"day": day.isoformat(), "entry_id": entry_id, "channel": channel},
    }


def find_daily_message(
    client: WebClient, channel: str, day: dt.date, since: dt.datetime, pages: int = 5
) -> tuple[str, str] | None:
    """(ts, entry id) of the bot's marked daily message for `day` in the channel since `since`."""
    found = find_marked_message(
        client, channel, DAILY_EVENT_TYPE, {"day": day.isoformat(), "channel": channel}, since, pages
    )
    return (found[0], str(found[1].get("entry_id") or "")) if found else None


def find_marked_message(
    client: WebClient,
    channel: str,
    event_type: str,
    payload: dict[str, str],
    since: dt.datetime,
    pages: int = 5,
) -> tuple[str, dict[str, Any]] | None:
    """(ts, event payload) of a message since `since` whose metadata has the type and the payload
    values: how a run that took over a dead run's claim finds what that run posted."""
    cursor: str | None = None
    for _ in range(pages):
        response = client.conversations_history(
            channel=channel,
            oldest=f"{since.timestamp():.6f}",
            include_all_metadata=True,
            limit=200,
            cursor=cursor,
        )
        found = _marked(response.get("messages") or [], event_type, payload)
        cursor = (response.get("response_metadata") or {}).get("next_cursor")
        if found is not None or not cursor:
            return found
    return None


def _marked(
    messages: list[dict[str, Any]], event_type: str, payload: dict[str, str]
) -> tuple[str, dict[str, Any]] | None:
    """The first message whose metadata has the event type and the payload values."""
    for message in messages:
        metadata = message.get("metadata") or {}
        found = metadata.get("event_payload") or {}
        if metadata.get("event_type") == event_type and all(found.get(k) == v for k, v in payload.items()):
            return str(message["ts"]), found
    return None


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


def slack_refusal(error: SlackApiError) -> tuple[str, int, bool]:
    """(error code, HTTP status, transient) of a Slack answer that refused a call: transient when a
    later try may succeed (429, 5xx, `ratelimited`, `internal_error`, …), else a setup problem."""
    status_code = error.response.status_code
    code = str(error.response.get("error") or f"HTTP {status_code}")
    return code, status_code, status_code == 429 or status_code >= 500 or code in TRANSIENT_ERRORS


def _refused(channel: str, day: dt.date, entry: Entry, error: SlackApiError) -> DailyResult:
    """Slack answered with an error: FAILED when a later run may succeed, else REFUSED."""
    code, status_code, transient = slack_refusal(error)
    return DailyResult(
        Status.FAILED if transient else Status.REFUSED,
        channel,
        day,
        entry.id,
        detail=f"Slack answered {code} (HTTP {status_code})"
        + ("; will retry" if transient else "; fix the setup, not retrying"),
    )


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
        return (
            post.owner.startswith(UNKNOWN_OWNER)
            or post.claimed_at < self.clock() - self.lease
            or owner_is_dead(post.owner, self._live_owners | self._recording)
        )

    def run(self, channel: str, day: dt.date) -> DailyResult:
        """Post the day's entry unless the day is done or being done; never raises for Slack errors."""
        owner = process_owner()
        self._live_owners.add(owner)
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
        finally:
            self._live_owners.discard(owner)

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
        ts, entry_id = found
        self.store.record_posted(channel, day, owner, ts, now=self.clock(), entry_id=entry_id or None)
        self._register(channel, ts, entry_id or row.entry_id)
        return DailyResult(Status.RECOVERED, channel, day, entry_id or row.entry_id, ts, detail)

    def _find_posted(self, channel: str, day: dt.date, since: dt.datetime) -> tuple[str, str] | None:
        try:
            return find_daily_message(self.client, channel, day, since - dt.timedelta(minutes=5))
        except (SlackClientError, OSError) as exc:
            # Cannot tell whether the run posted: post (a rare duplicate beats a missing day).
            log.warning("daily %s %s: could not read the channel history (%s)", channel, day, exc)
            return None

    def _post(self, channel: str, day: dt.date, entry: Entry, owner: str, reason: str) -> DailyResult:
        try:
            channel_id, ts = post_message(
                self.client, channel, self.render(entry), daily_metadata(channel, day, entry.id)
            )
        except SlackApiError as exc:
            if maybe_stored(exc):
                return self._unanswered(channel, day, entry, owner, exc)
            self.store.release(channel, day, owner)
            if slack_refusal(exc)[0] in MESSAGE_ERRORS:
                return self._skip(channel, day, entry, exc)
            return _refused(channel, day, entry, exc)
        except (SlackClientError, OSError) as exc:
            if not never_sent(exc):
                return self._unanswered(channel, day, entry, owner, exc)
            self.store.release(channel, day, owner)
            return DailyResult(Status.FAILED, channel, day, entry.id, detail=f"cannot reach Slack: {exc}")
        if self.after_post is not None:
            self.after_post()
        self._register(channel_id, ts, entry.id)
        return self._posted(DailyResult(Status.POSTED, channel, day, entry.id, ts, reason), owner)

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

    def _skip(self, channel: str, day: dt.date, entry: Entry, error: SlackApiError) -> DailyResult:
        """Slack refused the entry's card itself: note it, so no run picks that card here again
        (logged once, by the run that noted it); the caller picks the next entry."""
        code, status_code, _ = slack_refusal(error)
        if self.store.refuse_entry(channel, entry.id, self._card(entry), code, now=self.clock()):
            log.error(
                "daily %s %s: Slack refused the card of entry %s (%s, HTTP %s); skipping that entry in "
                "this channel until its card changes",
                channel,
                day,
                entry.id,
                code,
                status_code,
            )
        detail = f"Slack answered {code} (HTTP {status_code}) for the entry's card; skipped here, next entry"
        return DailyResult(Status.SKIPPED, channel, day, entry.id, detail=detail)

    def _unanswered(
        self, channel: str, day: dt.date, entry: Entry, owner: str, error: BaseException
    ) -> DailyResult:
        """The post got no answer (or a 5xx): Slack may have stored it. Look for it; keep the claim
        if absent."""
        why = unknown_outcome(error)
        found = self._find_posted(channel, day, since=self.clock() - self.lease)
        if found is not None:
            ts, entry_id = found
            self.store.record_posted(channel, day, owner, ts, now=self.clock(), entry_id=entry_id or entry.id)
            self._register(channel, ts, entry_id or entry.id)
            detail = f"{why}, found the post in the channel"
            return DailyResult(Status.POSTED, channel, day, entry_id or entry.id, ts, detail)
        self.store.mark_unknown(channel, day, owner, UNKNOWN_OWNER)
        return DailyResult(
            Status.UNKNOWN,
            channel,
            day,
            entry.id,
            detail=f"{why} and not in the channel yet; the next run looks for it before posting",
        )

    def _register(self, channel_id: str, ts: str, entry_id: str) -> None:
        try:
            self.threads.register(channel_id, ts, entry_id)
        except Exception:  # the post is done; a lost registration only costs follow-ups
            log.exception("daily post: could not register thread %s %s", channel_id, ts)
