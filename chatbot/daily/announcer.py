"""Announcing new digest entries to subscribed channels, once per channel and batch (adapter).

Run on every reconcile tick of every replica:

1. Note the entry ids of the digest folder in the store; ids never seen before form a *batch*
   (the first time ever, everything is the baseline: not news).
2. For each subscription with announcements on, each batch of the last `window` not yet posted to
   it: the batch's entries on the channel's topics (all of them without topics). None: nothing.
3. Claim (channel, batch) in the store (a primary key: one replica wins), post one message with
   metadata `vllm_digest_announce` {channel, batch}, record its ts; a refused post releases the
   claim. A claim left by a dead process is taken over after looking for its marked message in
   the channel's history, as the daily post does.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.daily.poster import (
    CLAIM_LEASE,
    UNKNOWN_OWNER,
    SlackMessage,
    find_marked_message,
    maybe_stored,
    never_sent,
    owner_is_dead,
    post_message,
    process_owner,
    slack_refusal,
)
from chatbot.daily.subscription import Subscription
from chatbot.digest import Entry
from chatbot.store import SubscriptionStore, utc_now
from chatbot.store.subscriptions import BASELINE, Announcement, Batch

log = logging.getLogger(__name__)

ANNOUNCE_EVENT_TYPE = "vllm_digest_announce"
ANNOUNCE_WINDOW = dt.timedelta(days=1)


@dataclass(frozen=True)
class Announced:
    channel: str
    batch: str
    entry_ids: tuple[str, ...]
    message_ts: str


@dataclass(eq=False)
class Announcer:
    """`run()` announces what is new to whom it concerns; safe to run on every replica at once."""

    store: SubscriptionStore
    entries: Callable[[], Sequence[Entry]]
    subscriptions: Callable[[], Sequence[Subscription]]
    on_topics: Callable[[Subscription], frozenset[str]]
    client: WebClient
    render: Callable[[Sequence[Entry], Subscription], SlackMessage]
    _: KW_ONLY
    clock: Callable[[], dt.datetime] = utc_now
    window: dt.timedelta = ANNOUNCE_WINDOW
    lease: dt.timedelta = CLAIM_LEASE
    _live_owners: set[str] = field(default_factory=set, init=False, repr=False)
    # Announcements another run made, logged once.
    _reported: set[tuple[str, str]] = field(default_factory=set, init=False, repr=False)

    def run(self) -> list[Announced]:
        now = self.clock()
        by_id = {e.id: e for e in self.entries()}
        self._note_entries(by_id, now)
        batches = self.store.batches_since(now - self.window)
        if not batches:
            return []
        done: list[Announced] = []
        for subscription in self.subscriptions():
            if subscription.announce:
                done.extend(self._announce_batches(subscription, batches, by_id))
        return done

    def _note_entries(self, by_id: dict[str, Entry], now: dt.datetime) -> None:
        """Note the folder's entry ids in the store; log the batch they made, if any."""
        batch = self.store.note_entries(by_id, now=now)
        if batch is not None and batch.batch == BASELINE:
            log.info("digest entries: baseline of %d entries (not announced)", len(batch.entry_ids))
        elif batch is not None:
            log.info("new digest entries (batch %s): %s", batch.batch, ", ".join(batch.entry_ids))

    def _announce_batches(
        self, subscription: Subscription, batches: Sequence[Batch], by_id: dict[str, Entry]
    ) -> list[Announced]:
        """Each batch not yet announced in the channel, with its entries on the channel's topics."""
        posted = self.store.announced(subscription.channel, refused=True)
        selected: frozenset[str] | None = None  # the entries on the topics, asked for once
        done: list[Announced] = []
        for new in batches:
            if new.batch in posted:
                self._already(subscription.channel, new.batch)
                continue
            if subscription.topics and selected is None:
                selected = self.on_topics(subscription)
            entries = _in_library(new, by_id, selected)
            result = self._announce(subscription, new.batch, entries, new.seen_at) if entries else None
            if result is not None:
                done.append(result)
        return done

    def _announce(
        self, subscription: Subscription, batch: str, entries: list[Entry], seen_at: dt.datetime
    ) -> Announced | None:
        channel = subscription.channel
        owner = process_owner()
        self._live_owners.add(owner)
        try:
            claim = self.store.claim_announcement(
                channel, batch, owner, now=self.clock(), is_stale=self._stale
            )
            if claim is None:
                return None
            ids = tuple(e.id for e in entries)
            found = self._find_posted(channel, batch, seen_at) if claim == "taken over" else None
            if found is not None:
                self.store.finish_announcement(channel, batch, owner, found)
                log.info("announce %s batch %s: recovered ts %s", channel, batch, found)
                return Announced(channel, batch, ids, found)
            ts = self._post(subscription, batch, entries, owner)
            return Announced(channel, batch, ids, ts) if ts is not None else None
        finally:
            self._live_owners.discard(owner)

    def _post(self, subscription: Subscription, batch: str, entries: list[Entry], owner: str) -> str | None:
        """Post the claimed announcement and record it; None when it is not (known to be) posted."""
        channel = subscription.channel
        metadata = {"event_type": ANNOUNCE_EVENT_TYPE, "event_payload": {"channel": channel, "batch": batch}}
        try:
            _, ts = post_message(self.client, channel, self.render(entries, subscription), metadata)
        except SlackApiError as exc:
            if maybe_stored(exc):
                return self._unanswered(channel, batch, owner, exc)
            self._refused(channel, batch, owner, exc)
            return None
        except (SlackClientError, OSError) as exc:
            if never_sent(exc):
                self.store.finish_announcement(channel, batch, owner, None)
                log.error("announce %s batch %s failed: %s; the next tick tries again", channel, batch, exc)
                return None
            return self._unanswered(channel, batch, owner, exc)
        self.store.finish_announcement(channel, batch, owner, ts)
        self._reported.add((channel, batch))
        log.info("announce %s batch %s: posted %d entries ts %s", channel, batch, len(entries), ts)
        return ts

    def _refused(self, channel: str, batch: str, owner: str, error: SlackApiError) -> None:
        """Slack refused the post: released for the next tick when that may help, else given up
        for this batch (not tried again every tick of the window), with one line naming the error."""
        code, status_code, transient = slack_refusal(error)
        if transient:
            self.store.finish_announcement(channel, batch, owner, None)
            log.error(
                "announce %s batch %s: Slack answered %s (HTTP %s); the next tick tries again",
                channel,
                batch,
                code,
                status_code,
            )
            return
        self.store.refuse_announcement(channel, batch, owner)
        log.error(
            "announce %s batch %s: Slack answered %s (HTTP %s); fix the setup, not retrying this batch",
            channel,
            batch,
            code,
            status_code,
        )

    def _unanswered(self, channel: str, batch: str, owner: str, error: BaseException) -> str | None:
        """No answer to the post: Slack may have stored it (it answered after the client's timeout).
        Look for it; when it is not there yet, keep the claim marked unknown, so the next tick
        takes it over and looks again before posting (a release would post it twice)."""
        found = self._find_posted(channel, batch, self.clock() - self.lease)
        if found is not None:
            self.store.finish_announcement(channel, batch, owner, found)
            self._reported.add((channel, batch))
            log.info(
                "announce %s batch %s: no answer from Slack (%s), found the post ts %s",
                channel,
                batch,
                error,
                found,
            )
            return found
        self.store.mark_announcement_unknown(channel, batch, owner, UNKNOWN_OWNER)
        log.error(
            "announce %s batch %s: no answer from Slack (%s) and not in the channel yet; "
            "the next tick looks for it before posting",
            channel,
            batch,
            error or type(error).__name__,
        )
        return None

    def _already(self, channel: str, batch: str) -> None:
        """Log once per process that another run announced (or is announcing) the batch here."""
        if (channel, batch) not in self._reported:
            self._reported.add((channel, batch))
            log.info("announce %s batch %s: already announced (or refused by Slack for good)", channel, batch)

    def _stale(self, claim: Announcement) -> bool:
        return (
            claim.owner.startswith(UNKNOWN_OWNER)
            or claim.claimed_at < self.clock() - self.lease
            or owner_is_dead(claim.owner, self._live_owners)
        )

    def _find_posted(self, channel: str, batch: str, since: dt.datetime) -> str | None:
        """The announcement a dead run (whose claim was taken over) posted, if it got that far."""
        try:
            found = find_marked_message(
                self.client,
                channel,
                ANNOUNCE_EVENT_TYPE,
                {"channel": channel, "batch": batch},
                since - dt.timedelta(minutes=5),
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("announce %s: could not read the channel history (%s); posting", channel, exc)
            return None
        return found[0] if found else None


def _in_library(batch: Batch, by_id: dict[str, Entry], selected: frozenset[str] | None) -> list[Entry]:
    """The batch's entries still in the library (and among `selected`, the channel's topics)."""
    return [by_id[i] for i in batch.entry_ids if i in by_id and (selected is None or i in selected)]
