"""Concepts found by what they do: a query describing an effect reaches the concept it describes.

A glossary concept may carry `describes:` lines ("free GPU memory while idle", "空闲时释放显存").
A query that names no term of it but says most of what one of its lines says ("make the engine give
its GPU memory back while it is idle") names the concept. No model: the words of the line and of the
query are compared as search keys (stems, Chinese bigrams), each weighted by how rare it is among all
lines, so `idle` counts more than `GPU`. A line is met when the query holds at least half of its
weight, two keys at least, and those keys are at least a third of the query's own weight (a long
question about something else that happens to say `GPU memory` does not name sleep mode).

Plain words that mean the same (`picture` and `image`, `显卡` and `GPU`, `参数` and `weights`) are
read as one key in both languages (`data/plain_words.yaml`), so a Chinese question meets an English
line; negations (`without`, `don't`, `不再`) are one key, `not`, since "run without a GPU" says
something "run on a GPU" does not. Chinese lines are written with spaces between words: their keys
are then their words, not bigrams across words no question writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from chatbot.search.tokens import Token, atomic, tokenize
from chatbot.yamlfast import load_yaml

# Plain words that say the same in a description and a question, in English and Chinese ("picture"
# for "image", "显卡" for "GPU"), and the words of negation ("without", "不再"): data, like the glossary.
PLAIN_WORDS = Path(__file__).resolve().parent / "data" / "plain_words.yaml"
NOT = "not"  # the one key every negation is read as
LINE_SHARE = 0.5  # of a line's weight the query must hold
QUERY_SHARE = 0.34  # of the query's weight the line must explain
MIN_KEYS = 2
UNION_SHARE = 0.6  # of the query's weight a concept's lines together must explain, when none alone does
UNION_KEYS = 3


@dataclass(frozen=True)
class Described:
    """A concept a query describes: how well (the share of its best line met) and with which keys."""

    concept: str
    score: float
    keys: frozenset[str]


class DescriptionIndex:
    """Every concept's description lines as weighted key sets, for matching queries."""

    def __init__(self, lines: Iterable[tuple[str, str]], ignore: frozenset[str]) -> None:
        """`lines` are (concept id, description); `ignore` are keys that say nothing (stopwords)."""
        self._same = plain_words()
        self._ignore = ignore - self._same.keys()  # a negation is a stopword of search, a key here
        self._lines: list[tuple[str, frozenset[str]]] = []
        frequency: dict[str, int] = {}
        for concept, text in lines:
            keys = self.keys(tokenize(text))
            if keys:
                self._lines.append((concept, keys))
                for key in keys:
                    frequency[key] = frequency.get(key, 0) + 1
        total = max(len(self._lines), 1)
        self._weight = {key: math.log(1.0 + total / count) for key, count in frequency.items()}
        self._unions: dict[str, frozenset[str]] = {}
        for concept, keys in self._lines:
            self._unions[concept] = self._unions.get(concept, frozenset()) | keys
        self._by_key: dict[str, list[int]] = {}
        for number, (_, keys) in enumerate(self._lines):
            for key in keys:
                self._by_key.setdefault(key, []).append(number)

    def keys(self, tokens: list[Token]) -> frozenset[str]:
        """The keys of some text that can carry meaning: words, identifier parts, bigrams."""
        same = self._same
        return frozenset(
            same.get(t.key, t.key)
            for t in atomic(tokens)
            if t.kind != "ref" and t.key not in self._ignore and len(t.key) > 1  # `s` of `Google's`
        )

    def explained(self, keys: frozenset[str], explained: frozenset[str], *, loosely: bool = False) -> bool:
        """Whether a query unit's keys are words a described concept explains, read as a description
        reads them (`调度` is `schedul`). `loosely`: keys no line uses (`够时`, a bigram across `不够`
        and `时`) say nothing either way."""
        read = {self._same.get(k, k) for k in keys}
        if loosely:
            read = {key for key in read if key in self._by_key}
        return bool(read) and read <= explained

    def knows(self, token: Token) -> bool:
        """Whether a description uses the word (`overhead`): a word of vLLM's plain language."""
        return self._same.get(token.key, token.key) in self._by_key

    def match(self, tokens: list[Token]) -> list[Described]:
        """Concepts whose description the query meets, the best first (one per concept: its best
        line's score, and the keys of every line met, all of which the concept explains)."""
        asked = self.keys(tokens)
        candidates = {n for key in asked for n in self._by_key.get(key, ())}
        asked_weight = sum(self._weight.get(key, 1.0) for key in asked)
        best: dict[str, Described] = {}
        for number in candidates:
            found = self._met(number, asked, asked_weight)
            if found is not None:
                best[found.concept] = _better(best.get(found.concept), found)
        for concept in {self._lines[n][0] for n in candidates} - best.keys():
            found = self._met_together(concept, asked, asked_weight)
            if found is not None:
                best[concept] = found
        return sorted(best.values(), key=lambda d: (-d.score, d.concept))

    def _met(self, number: int, asked: frozenset[str], asked_weight: float) -> Described | None:
        """Line `number` as met by the query's keys, or None when the query says too little of it
        (or the line too little of the query)."""
        concept, keys = self._lines[number]
        shared = asked & keys
        if len(shared) < MIN_KEYS:
            return None
        held = sum(self._weight[key] for key in shared)
        score = held / sum(self._weight[key] for key in keys)
        if score < LINE_SHARE or held < QUERY_SHARE * asked_weight:
            return None
        return Described(concept, score, frozenset(shared))

    def _met_together(self, concept: str, asked: frozenset[str], asked_weight: float) -> Described | None:
        """The concept as met by its lines together, when no one line is: a question that mixes
        the words of two of its lines (one on weights kept in RAM, one on a model too big for the
        card) and holds little else. It must hold three of their keys and most of its own weight
        (`UNION_SHARE`, stricter than a line's third: all lines together say much); it scores below
        any line met."""
        shared = asked & self._unions[concept]
        held = sum(self._weight[key] for key in shared)
        if len(shared) < UNION_KEYS or held < UNION_SHARE * asked_weight:
            return None
        return Described(concept, LINE_SHARE * held / asked_weight, frozenset(shared))


def _better(known: Described | None, found: Described) -> Described:
    if known is None:
        return found
    return Described(found.concept, max(known.score, found.score), known.keys | found.keys)


@cache
def plain_words() -> dict[str, str]:
    """Each plain word's key → its group's first word's key (every bigram of a longer Chinese word,
    `适配器`: `适配`, `配器`); each negation's key → `not`."""
    data = load_yaml(PLAIN_WORDS.read_text(encoding="utf-8"))
    same: dict[str, str] = {}
    for group in [*data["groups"], [NOT, *data["negations"]]]:
        first, *rest = (_keys(str(word)) for word in group)
        for key in (k for keys in rest for k in keys if k != first[0]):
            same.setdefault(key, first[0])
    return same


def _keys(word: str) -> list[str]:
    """The search keys of a plain word (`t` of `don't` is no key)."""
    return [t.key for t in atomic(tokenize(word)) if len(t.key) > 1] or [word.casefold()]
