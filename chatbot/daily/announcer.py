"""Announcing new digest entries to subscribed channels, once per channel and batch (adapter).

Run on every reconcile tick of every replica: entry ids never seen before form a batch; each
batch is claimed per channel in the store and posted once, as the daily post is
(docs/daily.md: new digest announcements).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from slack_sdk import WebClient

from chatbot.daily.poster import CLAIM_LEASE, UNKNOWN_OWNER, claim_is_stale, owning
from chatbot.daily.subscription import Subscription
from chatbot.digest import Entry
from chatbot.slack.webapi import Sent, SlackMessage, find_marked_message, post_once
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
        with owning(self._live_owners) as owner:
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

    def _post(self, subscription: Subscription, batch: str, entries: list[Entry], owner: str) -> str | None:
        """Post the claimed announcement and settle the claim: recorded with the ts when Slack has
        it; kept, marked unknown, when it may have it (the next tick looks again before posting,
        a release would post it twice); released when a later tick may succeed; given up for this
        batch when Slack refused it for good (not tried on every tick of the window)."""
        channel = subscription.channel
        metadata = {"event_type": ANNOUNCE_EVENT_TYPE, "event_payload": {"channel": channel, "batch": batch}}
        sent = post_once(
            self.client,
            channel,
            self.render(entries, subscription),
            metadata,
            lambda: self._find_marked(channel, batch, self.clock() - self.lease),
        )
        what = f"announce {channel} batch {batch}"
        if sent.ts is not None:
            self.store.finish_announcement(channel, batch, owner, sent.ts)
            self._reported.add((channel, batch))
            how = (
                f"{sent.detail}, found the post"
                if sent.sent is Sent.FOUND
                else f"posted {len(entries)} entries"
            )
            log.info("%s: %s ts %s", what, how, sent.ts)
            return sent.ts
        if sent.sent is Sent.UNKNOWN:
            self.store.mark_announcement_unknown(channel, batch, owner, UNKNOWN_OWNER)
            log.error(
                "%s: %s and not in the channel yet; the next tick looks for it before posting",
                what,
                sent.detail,
            )
        elif sent.sent is Sent.REFUSED:
            self.store.refuse_announcement(channel, batch, owner)
            log.error("%s: %s; fix the setup, not retrying this batch", what, sent.detail)
        else:
            self.store.finish_announcement(channel, batch, owner, None)
            log.error("%s: %s; the next tick tries again", what, sent.detail)
        return None

    def _already(self, channel: str, batch: str) -> None:
        """Log once per process that another run announced (or is announcing) the batch here."""
        if (channel, batch) not in self._reported:
            self._reported.add((channel, batch))
            log.info("announce %s batch %s: already announced (or refused by Slack for good)", channel, batch)

    def _stale(self, claim: Announcement) -> bool:
        return claim_is_stale(claim.owner, claim.claimed_at, self.clock(), self.lease, self._live_owners)

    def _find_marked(self, channel: str, batch: str, since: dt.datetime) -> tuple[str, dict[str, Any]] | None:
        mark = {"channel": channel, "batch": batch}
        return find_marked_message(
            self.client, channel, ANNOUNCE_EVENT_TYPE, mark, since - dt.timedelta(minutes=5)
        )

    def _find_posted(self, channel: str, batch: str, since: dt.datetime) -> str | None:
        """The announcement a dead run (whose claim was taken over) posted, if it got that far."""
        found = self._find_marked(channel, batch, since)
        return found[0] if found else None


def _in_library(batch: Batch, by_id: dict[str, Entry], selected: frozenset[str] | None) -> list[Entry]:
    """The batch's entries still in the library (and among `selected`, the channel's topics)."""
    return [by_id[i] for i in batch.entry_ids if i in by_id and (selected is None or i in selected)]
