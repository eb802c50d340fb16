"""Splitting Chinese/English prose at its own punctuation, outside quotes and brackets.

The note analysis and the answerer both cut notes into sentences and clauses; doing it
bracket-aware keeps `"小改动、高分析质量"` or `（作者已声明意图）` in one piece.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_OPEN_CLOSE = {
    "（": "）",
    "(": ")",
    "「": "」",
    "『": "』",
    "“": "”",
    "‘": "’",
    "《": "》",
    "[": "]",
    "【": "】",
}
_SYMMETRIC = {'"', "`"}

# A Latin full stop ends a sentence when a space follows it (`v0.27.1`, `e.g.` are handled below).
SENTENCE_ENDS = frozenset([*"。！？!?\n", ". "])
CLAUSE_ENDS = frozenset([*"。！？!?\n；;，,", ". "])
# A piece ending like this was cut at an abbreviation's or a list number's dot, not a sentence end.
_NOT_AN_END_RE = re.compile(
    r"(?:\b(?:e\.g|i\.e|vs|etc|cf|approx|incl|no|fig)|(?:^|\s)\d{1,2})\.\s$", re.IGNORECASE
)


def split_top_level(text: str, separators: Iterable[str]) -> list[str]:
    """Split at any of `separators` (strings) that stand outside quotes, brackets and code spans.

    Separators are kept at the end of the piece they close, so joining the pieces gives the text back.
    """
    seps = sorted(set(separators), key=len, reverse=True)
    pieces: list[str] = []
    stack: list[str] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if stack and ch == stack[-1]:
            stack.pop()
            i += 1
            continue
        if ch in _SYMMETRIC:
            stack.append(ch)
            i += 1
            continue
        if ch in _OPEN_CLOSE and (not stack or stack[-1] != "`"):
            stack.append(_OPEN_CLOSE[ch])
            i += 1
            continue
        if not stack:
            for sep in seps:
                if text.startswith(sep, i):
                    i += len(sep)
                    pieces.append(text[start:i])
                    start = i
                    break
            else:
                i += 1
            continue
        i += 1
    if start < n:
        pieces.append(text[start:])
    # Unbalanced quotes must not swallow the rest of the text: fall back to a plain split.
    if stack and len(pieces) <= 1 and any(sep in text for sep in seps):
        return _plain_split(text, seps)
    return pieces


def _plain_split(text: str, seps: list[str]) -> list[str]:
    pieces: list[str] = []
    start = 0
    i = 0
    while i < len(text):
        for sep in seps:
            if text.startswith(sep, i):
                pieces.append(text[start : i + len(sep)])
                i += len(sep)
                start = i
                break
        else:
            i += 1
    if start < len(text):
        pieces.append(text[start:])
    return pieces


TRIM = " \t\r\n。；;，,、：:—"


def clean(piece: str) -> str:
    """A piece without the punctuation and spaces around it."""
    return piece.strip(TRIM)


def _rejoin(pieces: list[str]) -> list[str]:
    """Pieces cut after `e.g. ` or a list number `1. ` joined back to what follows them."""
    out: list[str] = []
    for piece in pieces:
        if out and _NOT_AN_END_RE.search(out[-1]):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def sentences(text: str) -> list[str]:
    """Sentences of a note, without their closing punctuation."""
    return [s for s in (clean(p) for p in _rejoin(split_top_level(text, SENTENCE_ENDS))) if s]


def clauses(text: str) -> list[str]:
    """Clauses: sentences further cut at `；` and `，`."""
    return [s for s in (clean(p) for p in _rejoin(split_top_level(text, CLAUSE_ENDS))) if s]
