"""Block Kit of the weekly curator report (CURATOR_CHANNEL): a pure function of the report.

Queries and questions are what readers typed: every one goes through `clip` (escaped, cut),
so a query can never become a mention or a link in the curator's channel. Only what was asked
in public channels is quoted (`CuratorReport.unquoted` counts the rest: see the report).
"""

from __future__ import annotations

from chatbot.slack.blocks import Block, Message, context, header_block, message, section
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.mrkdwn import clip, escape
from chatbot.usage.report import CuratorReport

SHOWN = 10


def _list(lines: list[str], texts: Texts) -> str:
    return "\n".join(lines[:SHOWN]) if lines else escape(texts("report.none"))


def render_curator_report(report: CuratorReport, lang: Language) -> Message:
    texts = Texts(lang)
    summary = texts(
        "report.summary",
        since=report.since[:10],
        until=report.until[:10],
        searches=report.searches,
        gaps=sum(g["searches"] for g in report.no_match),
    )
    gaps = [f"• `{clip(g['query'], 100)}` ×{g['searches']}" for g in report.no_match]
    top = [f"• `{clip(t['query'], 100)}` ×{t['searches']}" for t in report.top_queries]
    entries = [
        f"• {clip(e.title or e.entry, 120)}"
        + (f" `#{e.pr}`" if e.pr else "")
        + f" — {e.views} / {e.shares} / {e.questions} / {e.up} / {e.down}"
        for e in report.entries
    ]
    unanswered = [
        f"• {clip(q['question'] or '—', 200)} ({clip(q['title'] or q['entry'], 80)}) ×{q['count']}"
        for q in report.not_in_note
    ]
    blocks: list[Block] = [
        header_block(texts("report.header")),
        context(escape(summary)),
        section(f"*{escape(texts('report.gaps'))}*\n{_list(gaps, texts)}"),
        section(f"*{escape(texts('report.top'))}*\n{_list(top, texts)}"),
        section(f"*{escape(texts('report.entries'))}*\n{_list(entries, texts)}"),
        section(f"*{escape(texts('report.unanswered'))}*\n{_list(unanswered, texts)}"),
        context(escape(texts("report.unquoted", **report.unquoted))),
    ]
    return message(f"{texts('report.header')}: {summary}", blocks)
