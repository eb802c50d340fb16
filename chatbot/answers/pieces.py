"""The quotable pieces of an entry, and picking the ones a kind of question asks for.

A piece is a part of the note (a focus point, the audience sentence, a caveat, any other sentence)
with where it comes from. A kind of question picks pieces by selectors: patterns with weights
over the curator's words (`chatbot.answers.kinds`), plus the question's own terms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from chatbot.answers.clause_ranker import rank_pieces
from chatbot.digest import Entry, clauses, clean, sentences, split_top_level

MIN_LEAD = 8  # a lead shorter than this is a heading, not a point
LEAD_SEPARATORS = ("——", "：", ":", "，", ",", "；")
FIRST_CLAUSE_SEPARATORS = ("，", ",", "；", "：", ":", "——")
# A framing opener says who or what the sentence is for, not the point: "对 reviewer 而言，…".
FRAMING_RE = re.compile(r"^(?:对于?[^，,。：:]{1,24}(?:而言|来说)|另外|此外|其次|总之|总的来说)[，,：:]\s*")
TOPIC_WEIGHT = 3.0  # a piece sharing terms with the question moves up by this times its overlap
BAND = 0.6  # pieces within this share of the best score are kept
MOST_PIECES = 3


@dataclass(frozen=True)
class Piece:
    """A quotable part of the note: where it comes from and the curator's words."""

    source: str
    text: str

    short: str | None = None

    @property
    def lead(self) -> str:
        """The short form when space is tight: a given short text, else its first real clause.

        A short intro before `：` ("它展示了一个高价值的测试模式：…") is skipped for what follows it.
        """
        if self.short:
            return self.short
        head = _skip_intro(FRAMING_RE.sub("", self.text, count=1) or self.text)
        for sep in LEAD_SEPARATORS:
            head = _before(head, sep)
        return head


def _skip_intro(head: str) -> str:
    intro = split_top_level(head, ["：", ":"])
    if len(intro) > 1 and len(clean(intro[0])) <= 16 and clean("".join(intro[1:])):
        return clean("".join(intro[1:]))
    return head


def _before(head: str, sep: str) -> str:
    """The part before the first top-level `sep`; a bare heading ("测试设计——…") says nothing,
    so it keeps the first clause of what follows it too."""
    cut = split_top_level(head, [sep])
    if len(cut) < 2 or not clean(cut[0]):
        return head
    short = clean(cut[0])
    if len(short) < MIN_LEAD:
        short = clean(short + sep + first_clause(sep.join(cut[1:])))
    return short


def first_clause(text: str) -> str:
    for sep in FIRST_CLAUSE_SEPARATORS:
        cut = split_top_level(text, [sep])
        if len(cut) > 1 and clean(cut[0]):
            return clean(cut[0])
    return clean(text)


def entry_pieces(entry: Entry) -> list[Piece]:
    """Every quotable part of the entry, structured fields first, then the rest of the note."""
    pieces = [Piece(f"highlights[{i}]", h) for i, h in enumerate(entry.highlights)]
    if entry.why and entry.why in entry.note and not any(entry.why == p.text for p in pieces):
        pieces.append(Piece("why", entry.why))
    if entry.audience:
        pieces.append(Piece("audience", entry.audience))
    pieces.extend(_caveat_piece(entry, i, caveat) for i, caveat in enumerate(entry.caveats))
    pieces.extend(_rest_of_note(entry, [p.text for p in pieces]))
    return pieces


def _caveat_piece(entry: Entry, index: int, caveat: str) -> Piece:
    """A caveat cut from a focus point ("…，提醒跨版本验证的必要性") is quoted with its context."""
    host = next((h for h in entry.highlights if caveat in h and caveat != h), None)
    if host is None:
        return Piece(f"caveats[{index}]", caveat)
    lead = Piece("", host).lead
    return Piece(f"caveats[{index}]", host, f"{lead}…{caveat}" if lead != caveat else caveat)


def _rest_of_note(entry: Entry, covered: Sequence[str]) -> list[Piece]:
    """The note's sentences no structured piece holds (nor is held by), the verdict left out."""
    return [
        Piece("note", sentence)
        for sentence in sentences(entry.note)
        if not (entry.verdict and sentence == entry.verdict)
        and not any(sentence in c or c in sentence for c in covered)
    ]


class Matcher(Protocol):
    """What a selector needs of a pattern (a compiled regex, or a shape check like model names)."""

    def search(self, string: str, /) -> object: ...


Selector = tuple[Matcher, float]


def score(text: str, selectors: Sequence[Selector]) -> float:
    return sum(weight for pattern, weight in selectors if pattern.search(text))


def select(
    pieces: Sequence[Piece],
    selectors: Sequence[Selector],
    bonus: dict[str, float],
    question: str = "",
) -> list[Piece]:
    """Pieces that match the selectors, best first; ties keep note order; only the top score band.

    A piece that also shares terms with the question ("re-export 有什么坑") moves up: the asker
    named the part of the PR they mean.
    """
    scored = _scored(pieces, selectors, bonus, question)
    if not scored:
        return []
    top = scored[0][0]
    kept: dict[str, Piece] = {}
    for total, _, p in scored:
        if total >= top * BAND and p.text not in kept:
            kept[p.text] = p if p.short else _focused(p, selectors)
    return list(kept.values())[:MOST_PIECES]


def _scored(
    pieces: Sequence[Piece], selectors: Sequence[Selector], bonus: dict[str, float], question: str
) -> list[tuple[float, int, Piece]]:
    """(score, note order, piece) of the pieces the selectors (or bonuses) match, best first."""
    topic = dict.fromkeys(range(len(pieces)), 0.0)
    if question:
        topic.update({i: s for s, i in rank_pieces(question, [p.text for p in pieces])})
    scored = []
    for i, p in enumerate(pieces):
        kind = score(p.text, selectors) + bonus.get(p.source, 0.0)
        if kind > 0:
            scored.append((kind + TOPIC_WEIGHT * topic[i], i, p))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return scored


def _focused(piece: Piece, selectors: Sequence[Selector]) -> Piece:
    """The piece with a short form that keeps the clause the selectors matched, not just the first."""
    parts = clauses(piece.text)
    if len(parts) < 2:
        return piece
    best = max(range(len(parts)), key=lambda i: (score(parts[i], selectors), -i))
    if best == 0 or score(parts[best], selectors) <= score(parts[0], selectors):
        return piece
    lead = Piece(piece.source, piece.text).lead
    short = f"{lead}…{parts[best]}" if len(lead) <= 20 else parts[best]
    return Piece(piece.source, piece.text, short)
