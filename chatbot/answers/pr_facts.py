"""Thread questions GitHub's facts answer better than the note: merged? when? who reviewed? how
big? reverted? follow-ups? — quoted from `PrFacts` (with when they were checked, when older than
a day). A question none of these fits is left to the answerer (None).

Core: the facts come in through the answerer's lookup; nothing here talks to GitHub.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from chatbot.answers.composer import Lang
from chatbot.answers.intents import Intent
from chatbot.digest import Entry, PrFacts
from chatbot.text import has_han

# Which fact a question asks for, first match wins (a revert question also names "merged").
FACT_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reverted", re.compile(r"revert|回滚|回退|撤回|撤销|被撤", re.I)),
    (
        "reviewers",
        re.compile(
            r"who\s+(?:has\s+)?review|reviewers?\b|reviewed\s+by|谁.{0,6}(?:review|审|批)|评审人|审阅人|审核人",
            re.I,
        ),
    ),
    ("follow_ups", re.compile(r"follow[- ]?ups?|后续|跟进", re.I)),
    ("merged", re.compile(r"\bmerged?\b|\blanded\b|合了|合入|合并|合进|merge\s*了", re.I)),
    (
        "size",
        re.compile(
            r"how\s+(?:big|large)\s+is\s+(?:it|this|the\s+pr)\b|how\s+many\s+lines|\bsize\b|多大|改了多少|多少行|代码量",
            re.I,
        ),
    ),
)

FACT_INTENTS: dict[str, Intent] = {
    "reverted": "state",
    "reviewers": "people",
    "follow_ups": "related",
    "merged": "state",
    "size": "size",
}


@dataclass(frozen=True)
class FactAnswer:
    """The text of an answer from the facts, which fact it quotes, its language."""

    text: str
    fact: str
    lang: Lang

    @property
    def intent(self) -> Intent:
        """The answerer's kind for the fact (usage rows, feedback)."""
        return FACT_INTENTS[self.fact]


def fact_asked(question: str) -> str | None:
    """Which fact the question asks for (`FACT_QUESTIONS`), else None."""
    return next((fact for fact, pattern in FACT_QUESTIONS if pattern.search(question)), None)


def answer_from_facts(
    entry: Entry, question: str, facts: PrFacts | None, now: dt.datetime
) -> FactAnswer | None:
    """The facts' answer to the question, or None when it asks something else or nothing is known."""
    fact = fact_asked(question)
    if fact is None or facts is None or not facts.found:
        return None
    lang: Lang = "zh" if has_han(question) else "en"
    lines = [_FACT_LINES[fact](facts, lang)]
    checked = facts.checked_note(now)
    if checked:
        lines.append(f"（{checked[1:-1]}）" if lang == "zh" else checked)
    if entry.url:
        lines.append(entry.url)
    return FactAnswer("\n".join(lines), fact, lang)


def _merged(facts: PrFacts, lang: Lang) -> str:
    zh = lang == "zh"
    if facts.merged:
        day = facts.merged_at.date().isoformat() if facts.merged_at else "?"
        line = f"已合入：{day}" if zh else f"Merged on {day}."
        if facts.reverted_by is not None:
            line += f"（⚠ 已在 #{facts.reverted_by} 回滚）" if zh else f" ⚠ Reverted in #{facts.reverted_by}."
        return line
    if facts.closed_unmerged:
        return "没合：PR 已关闭，未合入。" if zh else "Not merged: closed without merging."
    return "还没合：PR 仍是 open。" if zh else "Not merged yet: the PR is open."


def _reviewers(facts: PrFacts, lang: Lang) -> str:
    line = facts.reviewer_line()
    if line is None:
        return "GitHub 上没有 review 记录。" if lang == "zh" else "No reviews on GitHub."
    return f"Reviewer：{line}" if lang == "zh" else f"Reviewed by {line}."


def _reverted(facts: PrFacts, lang: Lang) -> str:
    if facts.reverted_by is None:
        return "GitHub 上没有回滚它的 PR。" if lang == "zh" else "No PR reverts it on GitHub."
    pr = facts.reverted_by
    return f"是，已在 #{pr} 回滚。" if lang == "zh" else f"Yes: reverted in #{pr}."


def _size(facts: PrFacts, lang: Lang) -> str:
    line = facts.size_line()
    if line is None:
        return "GitHub 没给出改动规模。" if lang == "zh" else "GitHub gave no size."
    return f"改动：{line}" if lang == "zh" else f"Size: {line}."


def _follow_ups(facts: PrFacts, lang: Lang) -> str:
    if not facts.follow_ups:
        return "GitHub 上没有引用它的后续 PR。" if lang == "zh" else "No later PR references it on GitHub."
    refs = ", ".join(f"#{n}" for n in facts.follow_ups[:8])
    return f"后续 PR：{refs}" if lang == "zh" else f"Follow-ups: {refs}"


_FACT_LINES: dict[str, Callable[[PrFacts, Lang], str]] = {
    "merged": _merged,
    "reviewers": _reviewers,
    "reverted": _reverted,
    "size": _size,
    "follow_ups": _follow_ups,
}
