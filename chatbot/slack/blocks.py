"""Block Kit builders: pure functions, entries and results in, message dicts out.

Every message is `{"text": fallback, "blocks": [...]}`: the fallback is what notifications and
screen readers show. All user and curator text goes through `mrkdwn.clip` (escape + cut), so a
message stays inside Slack's limits and never carries markup nobody wrote on purpose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from chatbot.digest import Entry, PrFacts
from chatbot.search import Hit, SearchResult
from chatbot.slack import action_ids as ids
from chatbot.slack.feedback import feedback_buttons
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.mrkdwn import (
    MAX_BLOCKS,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_CONTEXT_TEXT,
    MAX_FALLBACK_TEXT,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    clip,
    clip_line,
    encoded_url,
    escape,
    link,
    one_line,
    truncate,
)
from chatbot.usage import FeedbackTarget, normalise

Block = dict[str, Any]
Message = dict[str, Any]

# Per-piece budgets keep a composed section under MAX_SECTION_TEXT without cutting markup.
TITLE_LIMIT = 300
LINE_LIMIT = 700
ITEM_LIMIT = 500
QUERY_LIMIT = 200


# -- elements -------------------------------------------------------------------------------


def plain_text(text: str, limit: int) -> dict[str, Any]:
    """Plain text cut to `limit`; escaped too, as Slack decodes entities in every text."""
    return {"type": "plain_text", "text": clip_line(text, limit) or "—", "emoji": True}


def section(text: str) -> Block:
    """A mrkdwn section; Slack refuses empty text, so an empty one shows a dash."""
    text = text if text.strip() else "—"
    return {"type": "section", "text": {"type": "mrkdwn", "text": truncate(text, MAX_SECTION_TEXT)}}


def context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": truncate(text, MAX_CONTEXT_TEXT)}]}


def header_block(text: str) -> Block:
    return {"type": "header", "text": plain_text(text, MAX_HEADER_TEXT)}


def button(
    text: str, action: str, *, value: str | None = None, url: str | None = None, primary: bool = False
) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "text": plain_text(text, MAX_BUTTON_TEXT),
        "action_id": action,
    }
    if value is not None:
        element["value"] = value[:MAX_BUTTON_VALUE]
    shown_url = encoded_url(url) if url is not None else None
    if shown_url is not None:
        element["url"] = shown_url
    if primary:
        element["style"] = "primary"
    return element


def actions(*elements: dict[str, Any]) -> Block:
    return {"type": "actions", "elements": list(elements)}


def message(fallback: str, blocks: Sequence[Block]) -> Message:
    """A message inside the limits: at most MAX_BLOCKS blocks, the fallback escaped and cut."""
    kept = list(blocks)
    if len(kept) > MAX_BLOCKS:
        kept = [*kept[: MAX_BLOCKS - 1], context("…")]
    text = clip(one_line(fallback), MAX_FALLBACK_TEXT) or "vllm-digest"
    return {"text": text, "blocks": kept}


# Slack refuses a message whose blocks hold more text than this (`msg_blocks_too_long`, reported
# around 12,000 characters); a message that lists entries stops below it, with room to spare.
MAX_MESSAGE_BLOCK_TEXT = 11_000


def block_text_length(blocks: Sequence[Block]) -> int:
    """Characters of text in `blocks` as Slack counts them for `msg_blocks_too_long`: every
    `text` string, in sections, contexts, headers and buttons."""

    def count(node: object) -> int:
        if isinstance(node, dict):
            return sum(len(v) if k == "text" and isinstance(v, str) else count(v) for k, v in node.items())
        if isinstance(node, list):
            return sum(count(item) for item in node)
        return 0

    return count(list(blocks))


def fit_groups(
    head: Sequence[Block], groups: Sequence[Sequence[Block]], more: Callable[[int], Block]
) -> list[Block]:
    """`head`, then as many whole `groups` (an entry's blocks) as fit in one message — MAX_BLOCKS
    blocks and MAX_MESSAGE_BLOCK_TEXT characters — and, when some do not, `more(left out)`."""
    kept = list(head)
    reserve = more(len(groups))  # the longest "and N more" this message can need
    room_blocks = MAX_BLOCKS - len(kept) - 1
    room_text = MAX_MESSAGE_BLOCK_TEXT - block_text_length(kept) - block_text_length([reserve])
    shown = 0
    for group in groups:
        size = block_text_length(group)
        if len(group) > room_blocks or size > room_text:
            break
        kept.extend(group)
        room_blocks -= len(group)
        room_text -= size
        shown += 1
    if shown < len(groups):
        kept.append(more(len(groups) - shown))
    return kept


# -- pieces of entries ----------------------------------------------------------------------


def title_line(entry: Entry) -> str:
    """Bold title linked to its PR, with the PR number."""
    title = link(entry.url, entry.title, TITLE_LIMIT) if entry.url else clip(entry.title, TITLE_LIMIT)
    number = f"  `#{entry.pr}`" if entry.pr else ""
    return f"*{title}*{number}"


def verdict_line(entry: Entry) -> str:
    parts = [
        f"_{clip(entry.verdict, 60)}_" if entry.verdict else "",
        clip(one_line(entry.why or ""), LINE_LIMIT),
    ]
    return " — ".join(p for p in parts if p)


def pr_button(entry: Entry, texts: Texts) -> dict[str, Any] | None:
    if not entry.url:
        return None
    return button(texts("button.pr"), ids.action_id(ids.OPEN_PR, entry.id), url=entry.url)


def share_button(entry: Entry, texts: Texts) -> dict[str, Any]:
    return button(
        texts("button.share"), ids.action_id(ids.SHARE_ENTRY, entry.id), value=entry.id, primary=True
    )


def more_value(query: str, offset: int) -> str:
    """The More results button's value: the query and where the next page starts."""
    return json.dumps({"q": query[:QUERY_LIMIT], "o": offset}, ensure_ascii=False)


def parse_more_value(value: str) -> tuple[str, int] | None:
    """(query, offset) of a More results button; None when the value is not one we wrote."""
    try:
        data = json.loads(value)
    except ValueError:
        return None
    query, offset = (data.get("q"), data.get("o")) if isinstance(data, dict) else (None, None)
    if not isinstance(query, str) or type(offset) is not int:
        return None
    return query, offset


# Entry id → (the entry, its title and verdict lines); see `entry_lines`.
_LINES: dict[str, tuple[Entry, str]] = {}
_LINES_KEPT = 2048


def entry_lines(entry: Entry) -> str:
    """Title and verdict lines of an entry. The same in every answer that lists the entry, so
    kept per entry (entries are frozen; a reloaded one is a new object and is made again)."""
    kept = _LINES.get(entry.id)
    if kept is not None and kept[0] is entry:
        return kept[1]
    verdict = verdict_line(entry)
    text = f"{title_line(entry)}\n{verdict}" if verdict else title_line(entry)
    if len(_LINES) >= _LINES_KEPT:
        _LINES.clear()
    _LINES[entry.id] = (entry, text)
    return text


def entry_blocks(entry: Entry, texts: Texts, matched: Sequence[str] = ()) -> list[Block]:
    """One entry in a list: title and verdict, matched terms, Share and PR buttons."""
    blocks = [section(entry_lines(entry))]
    if matched:
        terms = ", ".join(f"`{clip(term, 60)}`" for term in matched[:10])
        blocks.append(context(texts.mrkdwn("results.matched", markup={"terms": terms})))
    elements = [share_button(entry, texts)]
    pr = pr_button(entry, texts)
    if pr:
        elements.append(pr)
    blocks.append(actions(*elements))
    return blocks


# -- messages -------------------------------------------------------------------------------


def render_help(lang: Language, command: str = ids.COMMAND) -> Message:
    texts = Texts(lang)
    body = texts.mrkdwn("help.body", command=command)
    return message(
        f"{texts('help.title')}: {command} <topic> | today | latest | topics | help",
        [
            header_block(texts("help.title")),
            section(body),
        ],
    )


def render_results(result: SearchResult, lang: Language, offset: int = 0) -> Message:
    """A page of search results, or the no-match answer with suggested topics."""
    texts = Texts(lang)
    if not result.hits:
        return render_no_match(result.query, result.suggestions, lang)
    first, last = offset + 1, offset + len(result.hits)
    heading = texts.mrkdwn(
        "results.header",
        query=truncate(result.query, QUERY_LIMIT),
        first=first,
        last=last,
        total=result.total,
    )
    blocks: list[Block] = [context(heading)]
    rated = normalise(result.query)
    for hit in result.hits:
        blocks.extend(_hit_blocks(hit, texts, rated))
    if last < result.total:
        blocks.append(
            actions(
                button(
                    texts("button.more"),
                    ids.action_id(ids.MORE_RESULTS, last),
                    value=more_value(result.query, last),
                )
            )
        )
    titles = "; ".join(h.entry.title for h in result.hits)
    return message(
        f"{texts('results.header', query=result.query, first=first, last=last, total=result.total)}: {titles}",
        blocks,
    )


def _hit_blocks(hit: Hit, texts: Texts, rated: str) -> list[Block]:
    """A hit with 👍/👎 next to its buttons: was this entry a good answer to the query (`rated`:
    the query as usage rows keep it)?"""
    shown = entry_blocks(hit.entry, texts, hit.matched)
    rating = FeedbackTarget("search", rated, hit.entry.id)
    shown[-1]["elements"].extend(feedback_buttons(rating, texts))
    return [{"type": "divider"}, *shown]


def render_no_match(query: str, suggestions: Sequence[str], lang: Language) -> Message:
    texts = Texts(lang)
    lines = [texts.mrkdwn("no_match", query=truncate(query, QUERY_LIMIT))]
    if suggestions:
        topics = ", ".join(f"`{clip(s, 60)}`" for s in suggestions[:10])
        lines.append(texts.mrkdwn("no_match.suggest", markup={"topics": topics}))
    fallback = texts("no_match", query=query)
    return message(fallback, [section("\n".join(lines))])


def render_topics(topics: Sequence[tuple[str, int]], lang: Language) -> Message:
    texts = Texts(lang)
    if not topics:
        return message(texts("topics.empty"), [section(escape(texts("topics.empty")))])
    shown = "  ".join(f"`{clip(topic, 60)}` ({count})" for topic, count in topics[:100])
    return message(
        f"{texts('topics.header')}: {', '.join(t for t, _ in topics[:20])}",
        [header_block(texts("topics.header")), section(shown)],
    )


def render_latest(entries: Sequence[Entry], lang: Language) -> Message:
    texts = Texts(lang)
    if not entries:
        return message(texts("latest.empty"), [section(escape(texts("latest.empty")))])
    blocks: list[Block] = [header_block(texts("latest.header"))]
    for entry in entries:
        blocks.append({"type": "divider"})
        blocks.extend(entry_blocks(entry, texts))
    return message(f"{texts('latest.header')}: {'; '.join(e.title for e in entries)}", blocks)


def render_today(entry: Entry | None, lang: Language) -> Message:
    """The PR of the day for the asker: the full card plus a Share button."""
    texts = Texts(lang)
    if entry is None:
        return message(texts("today.empty"), [section(escape(texts("today.empty")))])
    card = render_entry_card(entry, lang, header=texts("today.header"))
    card_blocks: list[Block] = card["blocks"]
    # An ephemeral message has no thread: the hint offers sharing instead of "ask in this thread".
    card_blocks[-1] = context(escape(texts("today.hint")))
    return message(card["text"], with_share(card_blocks, entry, texts))


def with_share(card_blocks: list[Block], entry: Entry, texts: Texts) -> list[Block]:
    """A card's blocks with Share to channel first in its button row (for answers to one person)."""
    share = share_button(entry, texts)
    row = next((b for b in card_blocks if b["type"] == "actions"), None)
    if row is not None:
        row["elements"].insert(0, share)
    else:
        card_blocks.insert(len(card_blocks) - 1, actions(share))
    return card_blocks


def render_entry_card(
    entry: Entry,
    lang: Language,
    header: str | None = None,
    *,
    shared_by: str | None = None,
    facts: PrFacts | None = None,
) -> Message:
    """The full card of one entry (PR of the day, shared entries).

    Title linked to the PR, why it is worth reading, focus points, audience, caveats, related
    PRs, and a hint to ask follow-ups in the thread. `header` (e.g. "PR of the day") on top;
    `shared_by` is the display name of whoever shared it (plain text: a `<@U…>` mention would
    notify them every time). `facts`: GitHub's, whose state ("merged 2026-08-24", "⚠ reverted in
    #N") joins the facts line.
    """
    texts = Texts(lang)
    blocks: list[Block] = [header_block(header)] if header else []
    blocks.append(section(title_line(entry)))
    blocks.extend(_card_body(entry, texts, facts))
    pr = pr_button(entry, texts)
    if pr:
        blocks.append(actions(pr))
    hint = escape(texts("card.hint"))
    if shared_by:
        hint = f"{texts.mrkdwn('card.shared_by', user=truncate(one_line(shared_by), 80))} · {hint}"
    blocks.append(context(hint))
    fallback = f"{header}: {entry.title}" if header else entry.title
    if entry.url:
        fallback += f" {entry.url}"
    return message(fallback, blocks)


def _card_body(entry: Entry, texts: Texts, facts: PrFacts | None = None) -> list[Block]:
    """The card between title and buttons: facts line, why, focus, audience, caveats, related
    (each only when the entry has it)."""
    parts = (_why, _focus, _audience, _caveats, _related)
    body = [block for block in (part(entry, texts) for part in parts) if block is not None]
    line = _facts(entry, facts)
    return [line, *body] if line is not None else body


def _facts(entry: Entry, facts: PrFacts | None = None) -> Block | None:
    """GitHub title · @author · date, then GitHub's state of the PR when known."""
    shown_facts = [
        clip(entry.github_title, TITLE_LIMIT) if entry.github_title else "",
        f"@{clip(entry.author, 60)}" if entry.author else "",
        entry.date.isoformat() if entry.date else "",
        facts.state_line() if facts is not None and facts.found else "",
    ]
    shown = " · ".join(f for f in shown_facts if f)
    return context(shown) if shown else None


def _why(entry: Entry, texts: Texts) -> Block | None:
    verdict = verdict_line(entry)
    return section(f"*{escape(texts('card.why'))}*\n{verdict}") if verdict else None


def _focus(entry: Entry, texts: Texts) -> Block | None:
    """The highlights, less one that only repeats the why."""
    focus = [h for h in entry.highlights if one_line(h) != one_line(entry.why or "")]
    return _bullets(texts("card.focus"), focus) if focus else None


def _audience(entry: Entry, texts: Texts) -> Block | None:
    if not entry.audience:
        return None
    return section(f"*{escape(texts('card.audience'))}*\n{clip(one_line(entry.audience), LINE_LIMIT)}")


def _caveats(entry: Entry, texts: Texts) -> Block | None:
    return _bullets(texts("card.caveats"), entry.caveats) if entry.caveats else None


def _related(entry: Entry, texts: Texts) -> Block | None:
    """Links to the related PRs (at most 15)."""
    refs = entry.all_refs
    if not refs:
        return None
    shown = " ".join(link(r.url, f"#{r.number}") for r in refs[:15])
    return context(f"{escape(texts('card.related'))}: {shown}")


def _bullets(heading: str, lines: list[str]) -> Block:
    """A headed list of at most five one-line items."""
    items = "\n".join(f"• {clip(one_line(line), ITEM_LIMIT)}" for line in lines[:5])
    return section(f"*{escape(heading)}*\n{items}")


def render_text(text: str) -> Message:
    """A one-line notice (errors, confirmations)."""
    return message(text, [section(escape(text))])
