"""Block Kit for subscriptions: the confirmation in the channel, the list, the new-digest
announcement. Pure functions (subscription in, dict out); every text goes through mrkdwn.py."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chatbot.daily.picker import Pick
from chatbot.daily.subscription import Subscription
from chatbot.digest import Entry
from chatbot.slack import action_ids as ids
from chatbot.slack.blocks import (
    Block,
    Message,
    context,
    entry_blocks,
    fit_groups,
    header_block,
    message,
    render_today,
    section,
)
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.mrkdwn import escape

_ID = re.compile(r"^[A-Z0-9]{2,30}$")


def mention(user: str) -> str:
    """`<@U…>` for a Slack user id; anything else shown as escaped text (never markup)."""
    return f"<@{user}>" if _ID.match(user) else escape(user)


def channel_link(channel: str) -> str:
    return f"<#{channel}>" if _ID.match(channel) else escape(channel)


def describe(subscription: Subscription, lang: Language) -> str:
    """`on KV cache, offloading, weekdays 10:00 Europe/Berlin; …; new digest entries announced here`."""
    texts = Texts(lang)
    schedule = subscription.describe_schedule(lang)
    separator = "、" if lang == "zh" else ", "
    if subscription.topics:
        what = texts("sub.on_topics", topics=separator.join(subscription.topic_labels()), schedule=schedule)
        what += "; " + texts("sub.strict" if subscription.strict else "sub.loose")
    else:
        what = texts("sub.all_topics", schedule=schedule)
    return what + "; " + texts("sub.announce_on" if subscription.announce else "sub.announce_off")


def render_subscribed(subscription: Subscription, user: str, lang: Language, *, changed: bool) -> Message:
    """What the channel sees after `subscribe`: who did it and what was understood."""
    texts = Texts(lang)
    key = "sub.changed" if changed else "sub.subscribed"
    what = describe(subscription, lang)
    line = texts.mrkdwn(key, markup={"user": mention(user)}, what=what)
    return message(texts(key, user=user, what=what), [section(line)])


def render_unsubscribed(user: str, lang: Language, still: Subscription | None) -> Message:
    texts = Texts(lang)
    lines = [texts.mrkdwn("sub.unsubscribed", markup={"user": mention(user)})]
    if still is not None:
        lines.append(texts.mrkdwn("sub.still_settings", what=describe(still, lang)))
    return message(texts("sub.unsubscribed", user=user), [section("\n".join(lines))])


def render_subscriptions(
    subscriptions: Sequence[Subscription], lang: Language, *, every_channel: bool
) -> Message:
    """One line per channel: channel, topics and schedule, who set it (or the setting)."""
    texts = Texts(lang)
    if not subscriptions:
        key = "sub.list.empty" if every_channel else "sub.none"
        return message(texts(key), [section(texts.mrkdwn(key))])
    lines = []
    for s in subscriptions:
        source = (
            texts.mrkdwn("sub.source.settings")
            if s.source == "settings"
            else texts.mrkdwn("sub.source.slack", markup={"user": mention(s.updated_by)})
        )
        lines.append(f"• {channel_link(s.channel)} — {escape(describe(s, lang))} _({source})_")
    header = texts("sub.list.header" if every_channel else "sub.list.this")
    return message(f"{header}: {len(subscriptions)}", [header_block(header), section("\n".join(lines))])


def render_announcement(entries: Sequence[Entry], subscription: Subscription, lang: Language) -> Message:
    """New entries for one channel: a header, what they are about, each entry with its buttons —
    as many as fit in one message (Slack refuses more), then "and N more" with the commands that
    show them."""
    texts = Texts(lang)
    separator = "、" if lang == "zh" else ", "
    if subscription.topics:
        intro = texts(
            "announce.on_topics", count=len(entries), topics=separator.join(subscription.topic_labels())
        )
    else:
        intro = texts("announce.all", count=len(entries))
    head = [header_block(texts("announce.header")), context(escape(intro))]
    blocks = fit_groups(
        head, [entry_blocks(entry, texts) for entry in entries], lambda left: _more(left, texts)
    )
    titles = "; ".join(e.title for e in entries)
    return message(f"{texts('announce.header')}: {intro} {titles}", blocks)


def _more(count: int, texts: Texts) -> Block:
    search = "<topic>" if texts.language == "en" else "<主题>"
    commands = {"latest": f"`{ids.COMMAND} latest`", "search": f"`{ids.COMMAND} {escape(search)}`"}
    return context(texts.mrkdwn("announce.more", markup=commands, count=count))


def render_channel_today(entry: Entry, pick: Pick, lang: Language) -> Message:
    """The PR of the day card; when the channel has had every entry on its topics, a line saying so."""
    card = render_today(entry, lang)
    if not pick.topics_done:
        return card
    note = Texts(lang)("today.topics_done", reason=pick.reason.split(":", 1)[0])
    return message(card["text"], [card["blocks"][0], context(escape(note)), *card["blocks"][1:]])
