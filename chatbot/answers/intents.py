"""What a follow-up question asks for: one of a dozen kinds, from phrasings kept as data.

The phrasings live in `chatbot/answers/data/followup_intents.yaml` so adding "要看什么" is a data
change with a test question, not a code change. Longest matching phrase wins, which settles
"测试设计" (tests) against "设计" (design) without special cases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, cast, get_args

import yaml
from rapidfuzz import fuzz

from chatbot.text import normalize_question

Intent = Literal[
    "english",
    "date",
    "state",
    "labels",
    "cause",
    "models",
    "why",
    "focus",
    "audience",
    "risks",
    "tests",
    "design",
    "people",
    "related",
    "link",
    "summary",
    "size",
    "perf",
    "other",
]
INTENTS: tuple[Intent, ...] = get_args(Intent)


@dataclass(frozen=True)
class IntentRule:
    """One phrasing of one intent, compiled; `order` breaks ties (earlier in the file wins)."""

    intent: Intent
    phrase: str
    pattern: re.Pattern[str]
    order: int


def _compile(phrase: str) -> re.Pattern[str]:
    escaped = re.escape(phrase).replace(r"\ ", r"\s*")
    if phrase[:1].isascii() and phrase[:1].isalnum():
        escaped = r"(?<![a-z0-9])" + escaped
    return re.compile(escaped)


# libyaml's parser when PyYAML has it: the same data as `yaml.safe_load`, a tenth of its CPU at start.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=1)
def intent_rules() -> tuple[IntentRule, ...]:
    """The phrasings of the data file, in file order."""
    text = (
        resources.files("chatbot.answers").joinpath("data/followup_intents.yaml").read_text(encoding="utf-8")
    )
    data = yaml.load(text, Loader=_LOADER)
    rules: list[IntentRule] = []
    for order, (name, phrases) in enumerate(data["intents"].items()):
        if name not in INTENTS:
            raise ValueError(f"followup_intents.yaml: unknown intent {name!r}")
        for phrase in phrases:
            norm = normalize_question(str(phrase))
            rules.append(IntentRule(cast(Intent, name), norm, _compile(norm), order))
    return tuple(rules)


def classify(question: str) -> Intent:
    """The kind of a question; "other" when no phrasing matches, even with a typo."""
    text = normalize_question(question)
    best: tuple[int, int] | None = None
    best_intent: Intent = "other"
    for rule in intent_rules():
        if rule.pattern.search(text):
            key = (len(rule.phrase), -rule.order)
            if best is None or key > best:
                best = key
                best_intent = rule.intent
    if best is None:
        return _classify_typo(text)
    return best_intent


_ASCII_WORD_RE = re.compile(r"[a-z][a-z;\-']+")
TYPO_WORD_SCORE = 80.0
TYPO_PHRASE_SCORE = 90.0


def _classify_typo(text: str) -> Intent:
    """Second pass for English typos ("focsu", "reviwer"): fuzzy match of words and phrases; the
    closest wins, then the longer phrase, then the intent listed first."""
    words = [w for w in _ASCII_WORD_RE.findall(text) if 5 <= len(w) <= 30]
    if not words:
        return "other"
    scored = [
        ((score, len(rule.phrase), -rule.order), rule.intent)
        for rule in _typo_rules()
        if (score := _typo_score(rule.phrase, text, words)) is not None
    ]
    return max(scored, key=lambda s: s[0])[1] if scored else "other"


@lru_cache(maxsize=1)
def _typo_rules() -> tuple[IntentRule, ...]:
    """The English phrasings of five letters or more: the ones a typo can be read as."""
    return tuple(rule for rule in intent_rules() if rule.phrase.isascii() and len(rule.phrase) >= 5)


def _typo_score(phrase: str, text: str, words: list[str]) -> float | None:
    """How close the question comes to an English phrase; None when not close enough. A one-word
    phrase is compared with words of the same first letter: typos rarely hit it, and "patch"
    must not read as "catch"."""
    if " " in phrase:
        score = fuzz.partial_ratio(phrase, text[:500])
        return score if score >= TYPO_PHRASE_SCORE else None
    score = max((fuzz.ratio(phrase, w) for w in words if w[0] == phrase[0]), default=0.0)
    return score if score >= TYPO_WORD_SCORE else None
