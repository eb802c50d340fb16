"""Every Block Kit payload the bot can send validates with slack_sdk's own models.

One test renders every builder (each `render_*` of blocks.py, views.py and curator.py, the
follow-up answers with their 👍/👎, the feedback modal, the daily post) for the seed entries, an adversarial entry and both languages, and
checks every block with `slack_sdk.models.blocks` and every view with `slack_sdk.models.views`:
parsed, validated (lengths, counts, required fields) and round-tripped without losing a key.
A builder added without a case here fails the coverage check.
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from chatbot.answers import Answerer
from chatbot.daily.jobs import daily_message
from chatbot.digest import Entry
from chatbot.digest.library import Library
from chatbot.live import LiveIndex
from chatbot.search import Hit, SearchResult
from chatbot.slack import blocks, curator, views
from chatbot.slack.curator import render_curator_report
from chatbot.slack.feedback import missing_modal
from chatbot.slack.handlers.followups import render_answer, render_top_results
from chatbot.slack.i18n import Language
from chatbot.usage.report import CuratorReport, EntryUsage
from chatbot.usage.store import FeedbackTarget
from tests.conftest import DIGESTS
from tests.test_slack_blocks import entry_with, tricky

LIBRARY = Library.load(DIGESTS)
INDEX = LiveIndex(LIBRARY)
LANGS: tuple[Language, ...] = ("zh", "en")
DAY = dt.date(2026, 11, 30)


def messages(entry: Entry, others: list[Entry], text: str, lang: Language) -> Iterator[tuple[str, Any]]:
    """(builder name, payload) for every builder; messages are dicts with blocks, views have a type."""
    hits = [Hit(e, 1.0, [text[:20] or "x", "compile"]) for e in [entry, *others]]
    result = SearchResult(text or "compile", hits[:5], total=12)
    empty = SearchResult(text or "xyzzy", [], 0, ["multimodal", text[:30] or "torch.compile"])
    yield "render_help", blocks.render_help(lang)
    yield "render_results", blocks.render_results(result, lang, offset=5)
    yield "render_results", blocks.render_results(empty, lang)
    yield "render_no_match", blocks.render_no_match(text, [text, "compile"], lang)
    yield "render_topics", blocks.render_topics([(text or "t", 3)] * 120, lang)
    yield "render_topics", blocks.render_topics([], lang)
    yield "render_latest", blocks.render_latest([entry, *others] * 5, lang)
    yield "render_latest", blocks.render_latest([], lang)
    yield "render_today", blocks.render_today(entry, lang)
    yield "render_today", blocks.render_today(None, lang)
    yield (
        "render_entry_card",
        blocks.render_entry_card(entry, lang, header=text or None, shared_by=text or None),
    )
    yield "render_text", blocks.render_text(text or "ok")
    yield "render_link_preview", {"text": "preview", **views.render_link_preview(entry, lang)}
    yield (
        "render_home",
        views.render_home(
            today=entry,
            newest=[entry, *others],
            topics=[(text or "t", 2)] * 60,
            channels=["C0DAILY", text or "x"],
            day=DAY,
            lang=lang,
            stamp=text * 10,
        ),
    )
    yield (
        "render_home",
        views.render_home(today=None, newest=[], topics=[], channels=[], day=DAY, lang=lang),
    )
    yield "render_entry_modal", views.render_entry_modal(entry, lang)
    yield "render_search_modal", views.render_search_modal(result, lang)
    yield "render_search_modal", views.render_search_modal(empty, lang)
    yield "render_share_picker", views.render_share_picker(entry, lang)
    yield "render_dm_answer", views.render_dm_answer(result, lang)
    yield "render_dm_answer", views.render_dm_answer(empty, lang)
    yield "render_shortcut_answer", views.render_shortcut_answer([entry, *others] * 3, lang)
    yield "render_shortcut_answer", views.render_shortcut_answer([], lang)
    answer = Answerer(LIBRARY).answer(entry, "有什么风险？ " + text)
    rated = FeedbackTarget("answer", f"C1:{text[:40]}", entry.id, answer.intent)
    yield "render_answer", render_answer(answer)
    yield "render_answer", render_answer(answer, rated)
    yield "missing_modal", missing_modal(FeedbackTarget("search", text[:200] or "q", entry.id), lang)
    report = CuratorReport(
        since="2026-11-23",
        until="2026-11-30",
        searches=40,
        top_queries=[{"query": text or "compile", "searches": 3}] * 12,
        no_match=[{"query": text or "xyzzy", "searches": 2, "last": "2026-11-29T10:00:00"}] * 12,
        entries=[EntryUsage(e.id, e.title, e.pr, 5, 1, 2, 1, 1) for e in [entry, *others]],
        not_in_note=[
            {"entry": entry.id, "title": entry.title, "intent": "risk", "question": text, "count": 2}
        ]
        * 5,
        missing=[{"entry": entry.id, "kind": "answer", "query": None, "text": text}] * 5,
    )
    yield "render_curator_report", render_curator_report(report, lang)
    yield "render_top_results", render_top_results(INDEX, text or "compile", lang)
    daily = daily_message(entry, lang)
    yield "daily_message", {"text": daily.text, "blocks": daily.blocks}


def builders() -> set[str]:
    """Every public render_* function of the rendering modules."""
    names = set()
    for module in (blocks, views, curator):
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("render_") and fn.__module__ == module.__name__:
                names.add(name)
    return names


def assert_valid(name: str, payload: dict[str, Any]) -> None:
    for block in payload["blocks"]:
        parsed = Block.parse(block)
        assert parsed is not None, (name, block)
        parsed.validate_json()
        assert parsed.to_dict() == block, name
    if "type" in payload:
        view = View(**payload)
        view.validate_json()
        assert view.to_dict()["blocks"] == payload["blocks"], name
    else:
        assert payload["text"], name


def test_every_builder_is_covered() -> None:
    entry = LIBRARY.entries[0]
    covered = {name for name, _ in messages(entry, [], "x", "zh")}
    assert builders() <= covered, builders() - covered


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("key", [e.id for e in LIBRARY.entries])
def test_every_payload_for_every_seed_entry_validates(key: str, lang: Language) -> None:
    entry = LIBRARY.get(key)
    assert entry is not None
    others = [e for e in LIBRARY.entries if e.id != key][:3]
    for name, payload in messages(entry, others, "compile", lang):
        assert_valid(name, payload)


user_text = st.lists(st.text(max_size=40) | tricky, max_size=40).map("".join) | st.text(
    min_size=1500, max_size=4000
)


@settings(max_examples=40, deadline=None)
@given(user_text, st.sampled_from(LANGS))
def test_every_payload_validates_whatever_the_curator_or_user_wrote(text: str, lang: Language) -> None:
    entry = entry_with(text or "x", LIBRARY.entries[1])
    for name, payload in messages(entry, [entry_with(text[::-1] or "y", LIBRARY.entries[2])], text, lang):
        assert_valid(name, payload)
