"""Block Kit for the surfaces beyond a channel message: link previews, the Home tab, modals, the
answers in a direct message and to the message shortcut. Pure functions like blocks.py (entries
in, dicts out), built from its pieces so every surface shows an entry the same way and every
text goes through `mrkdwn`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from chatbot.digest import Entry, PrFacts
from chatbot.search import SearchResult
from chatbot.slack import action_ids as ids
from chatbot.slack.blocks import (
    ITEM_LIMIT,
    Block,
    Message,
    actions,
    button,
    context,
    entry_blocks,
    header_block,
    message,
    plain_text,
    render_entry_card,
    render_no_match,
    section,
    title_line,
    verdict_line,
    with_share,
)
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.mrkdwn import clip, escape, link, one_line

View = dict[str, Any]

# Block Kit limits of views (https://api.slack.com/reference/surfaces/views).
MAX_VIEW_BLOCKS = 100
MAX_MODAL_TITLE = 24
MAX_PRIVATE_METADATA = 3000
MAX_LABEL = 2000
MAX_PLACEHOLDER = 150
HOME_NEWEST = 5
HOME_TOPICS = 40
PREVIEW_FOCUS = 3
CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,}$")


def _open_button(entry: Entry, texts: Texts) -> dict[str, Any]:
    return button(texts("button.open"), ids.action_id(ids.OPEN_ENTRY, entry.id), value=entry.id)


def _entry_row(entry: Entry, texts: Texts) -> Block:
    """Title and verdict with an Open button beside them: one entry in a list of a view."""
    lines = [title_line(entry)]
    verdict = verdict_line(entry)
    if verdict:
        lines.append(verdict)
    row = section("\n".join(lines))
    row["accessory"] = _open_button(entry, texts)
    return row


def _view(kind: str, blocks: Sequence[Block], **fields: Any) -> View:
    kept = list(blocks)
    if len(kept) > MAX_VIEW_BLOCKS:
        kept = [*kept[: MAX_VIEW_BLOCKS - 1], context("…")]
    return {"type": kind, "blocks": kept, **fields}


def _modal(texts: Texts, blocks: Sequence[Block], **fields: Any) -> View:
    return _view(
        "modal",
        blocks,
        title=plain_text(texts("modal.title"), MAX_MODAL_TITLE),
        close=plain_text(texts("modal.close"), MAX_MODAL_TITLE),
        **fields,
    )


# -- link previews ------------------------------------------------------------------------------


def render_link_preview(entry: Entry, lang: Language) -> dict[str, Any]:
    """The `chat.unfurl` value for a PR link: the curator's card in short (title, verdict and why,
    focus points) and a button that opens a thread about it under the message."""
    texts = Texts(lang)
    blocks: list[Block] = [section(title_line(entry))]
    verdict = verdict_line(entry)
    if verdict:
        blocks.append(section(f"*{escape(texts('card.why'))}*\n{verdict}"))
    focus = [h for h in entry.highlights if one_line(h) != one_line(entry.why or "")]
    if focus:
        items = "\n".join(f"• {clip(one_line(h), ITEM_LIMIT)}" for h in focus[:PREVIEW_FOCUS])
        blocks.append(section(f"*{escape(texts('card.focus'))}*\n{items}"))
    blocks.append(
        actions(
            button(texts("button.ask_thread"), ids.action_id(ids.ASK_IN_THREAD, entry.id), value=entry.id)
        )
    )
    return {"blocks": blocks}


# -- App Home -----------------------------------------------------------------------------------


def render_home(
    *,
    today: Entry | None,
    newest: Sequence[Entry],
    topics: Sequence[tuple[str, int]],
    channels: Sequence[str],
    day: dt.date,
    lang: Language,
    stamp: str = "",
) -> View:
    """The Home tab: a search box, today's PR, the newest entries, the topics with their counts and
    the channels that get the PR of the day (`channels`: those the viewer is in). `stamp` (what it was built from) goes into
    `private_metadata` so an unchanged Home is not published again."""
    texts = Texts(lang)
    blocks: list[Block] = [
        header_block(texts("home.title")),
        context(texts.mrkdwn("home.usage", command=ids.COMMAND)),
        {
            "type": "input",
            "block_id": ids.HOME_SEARCH,
            "dispatch_action": True,
            "label": plain_text(texts("home.search"), MAX_LABEL),
            "element": {
                "type": "plain_text_input",
                "action_id": ids.HOME_SEARCH,
                "placeholder": plain_text(texts("home.search_hint"), MAX_PLACEHOLDER),
                "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
            },
        },
        header_block(texts("today.header")),
    ]
    blocks.append(_entry_row(today, texts) if today else section(escape(texts("today.empty"))))
    blocks.append(header_block(texts("latest.header")))
    if newest:
        blocks.extend(_entry_row(entry, texts) for entry in newest[:HOME_NEWEST])
    else:
        blocks.append(section(escape(texts("latest.empty"))))
    blocks.append(header_block(texts("topics.header")))
    if topics:
        blocks.append(section("  ".join(f"`{clip(t, 60)}` ({n})" for t, n in topics[:HOME_TOPICS])))
    else:
        blocks.append(section(escape(texts("topics.empty"))))
    blocks.append(header_block(texts("home.channels")))
    # Channel ids only, as mentions each viewer's client resolves; never a name in plain text.
    shown = [f"<#{c}>" for c in channels if CHANNEL_ID.match(c)]
    if shown:
        blocks.append(section(texts.mrkdwn("home.channels_list", markup={"channels": ", ".join(shown)})))
    else:
        blocks.append(section(escape(texts("home.channels_none"))))
    blocks.append(context(texts.mrkdwn("home.updated", day=day.isoformat())))
    return _view("home", blocks, private_metadata=stamp[:MAX_PRIVATE_METADATA])


# -- modals -------------------------------------------------------------------------------------


def render_entry_modal(entry: Entry, lang: Language, facts: PrFacts | None = None) -> View:
    """The entry's full card in a modal (from Home, search results, the shortcut's answer), with
    GitHub's state of the PR when known."""
    card = render_entry_card(entry, lang, facts=facts)
    blocks = card["blocks"]
    if blocks and blocks[-1]["type"] == "context":
        blocks = blocks[:-1]  # the "ask in this thread" hint: a modal has no thread
    return _modal(Texts(lang), blocks, private_metadata=entry.id)


def render_search_modal(result: SearchResult, lang: Language) -> View:
    """Search results from the Home tab's box, each with an Open button (pushes the card)."""
    texts = Texts(lang)
    if not result.hits:
        return _modal(texts, render_no_match(result.query, result.suggestions, lang)["blocks"])
    blocks: list[Block] = [
        context(
            texts.mrkdwn(
                "results.header",
                query=result.query[:200],
                first=1,
                last=len(result.hits),
                total=result.total,
            )
        )
    ]
    blocks.extend(_entry_row(hit.entry, texts) for hit in result.hits)
    return _modal(texts, blocks)


def render_share_picker(entry: Entry, lang: Language) -> View:
    """Share to channel from a DM: a modal to pick the channel (a DM has none to post to)."""
    texts = Texts(lang)
    return _modal(
        texts,
        [
            section(texts.mrkdwn("share.pick_entry", title=entry.title[:300])),
            {
                "type": "input",
                "block_id": ids.SHARE_CHANNEL,
                "label": plain_text(texts("share.pick_label"), MAX_LABEL),
                "element": {
                    "type": "conversations_select",
                    "action_id": ids.SHARE_CHANNEL,
                    "filter": {"include": ["public", "private"], "exclude_bot_users": True},
                },
            },
        ],
        callback_id=ids.SHARE_PICKER,
        submit=plain_text(texts("share.pick_submit"), MAX_MODAL_TITLE),
        private_metadata=entry.id,
    )


# -- direct messages and the message shortcut ---------------------------------------------------


def render_dm_answer(result: SearchResult, lang: Language) -> Message:
    """A topic sent in a DM: the best entry's full card (its thread takes follow-ups) with Share
    to channel, and the other matching entries as links; no match says so and suggests topics."""
    texts = Texts(lang)
    if not result.hits:
        return render_no_match(result.query, result.suggestions, lang)
    best = result.hits[0].entry
    card = render_entry_card(best, lang)
    blocks = with_share(card["blocks"], best, texts)
    others = [hit.entry for hit in result.hits[1:]]
    if others:
        links = ", ".join(link(e.url, e.title, 120) if e.url else clip(e.title, 120) for e in others)
        blocks.insert(len(blocks) - 1, context(texts.mrkdwn("dm.more", markup={"links": links})))
    return message(card["text"], blocks)


def render_shortcut_answer(entries: Sequence[Entry], lang: Language) -> Message:
    """The shortcut on a message naming PRs of the digest: those entries, with Share and PR."""
    texts = Texts(lang)
    if not entries:
        return message(texts("shortcut.nothing"), [section(escape(texts("shortcut.nothing")))])
    blocks: list[Block] = [context(escape(texts("shortcut.found")))]
    for entry in entries:
        blocks.append({"type": "divider"})
        blocks.extend(entry_blocks(entry, texts))
    return message(f"{texts('shortcut.found')} {'; '.join(e.title for e in entries)}", blocks)
