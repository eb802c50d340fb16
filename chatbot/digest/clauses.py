"""Splitting Chinese/English prose at its own punctuation, outside quotes and brackets.

The note analysis and the answerer both cut notes into sentences and clauses; doing it
bracket-aware keeps `"小改动、高分析质量"` or `（作者已声明意图）` in one piece.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from chatbot.text import once

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
    The scan jumps between the characters that matter (brackets, quotes, separators) with compiled
    patterns: a per-character walk made parsing a 10k-entry library take seconds.
    """
    key = frozenset(separators)
    scan = _separators_re(key)
    if not scan.search(text):  # most sentences have no clause separator at all
        return [text] if text else []
    if not _ANY_OPENER.search(text):  # nothing to nest in: every separator cuts
        return _plain_split(text, scan)
    walk = _walk_re(key)
    pieces, unbalanced = _walked_split(text, walk) if walk else _nested_split(text, scan)
    # Unbalanced quotes must not swallow the rest of the text: fall back to a plain split.
    if unbalanced and len(pieces) <= 1:
        return _plain_split(text, scan)
    return pieces


def _nested_split(text: str, scan: re.Pattern[str]) -> tuple[list[str], bool]:
    """The pieces cut at separators outside brackets, and whether the text is one piece with a
    bracket left open (then the caller cuts it plainly).

    A separator holds no bracket, so none crosses one: separators are found in the whole text and
    those inside a bracket skipped; brackets are looked for only as far as the separators go."""
    brackets = _Brackets(text)
    pieces: list[str] = []
    start = 0
    for found in scan.finditer(text):
        if not brackets.inside(found.start()):
            pieces.append(text[start : found.end()])
            start = found.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces, len(pieces) <= 1 and brackets.left_open()


def _walked_split(text: str, walk: re.Pattern[str]) -> tuple[list[str], bool]:
    """As `_nested_split`, for separators holding a bracket or quote: walking from bracket to
    separator to bracket, an opener winning over a separator starting at the same place."""
    pieces: list[str] = []
    stack: list[str] = []  # the closers awaited, innermost last
    start = 0
    pos = 0
    while (found := (_inside(stack[-1]) if stack else walk).search(text, pos)) is not None:
        pos = found.end()
        if not stack and found.lastindex == 2:  # a separator
            pieces.append(text[start:pos])
            start = pos
        elif stack and found.group() == stack[-1]:
            stack.pop()
        else:
            stack.append(_OPEN_CLOSE.get(found.group(), found.group()))
    if start < len(text):
        pieces.append(text[start:])
    return pieces, bool(stack)


class _Brackets:
    """The outermost brackets of a text, passed left to right only as far as asked. A bracket
    without brackets inside is one match of a pattern; only nested ones are walked bracket by
    bracket."""

    __slots__ = ("closed", "next", "open", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.next = _SPAN_OR_OPENER.search(text)  # the first bracket not passed yet
        self.closed = 0  # where the last bracket passed closes (after the end: never)
        self.open = False

    def inside(self, at: int) -> bool:
        """Whether position `at` lies inside a bracket."""
        while self.next is not None and self.next.start() < at:
            self._pass(self.next)
        return at < self.closed

    def left_open(self) -> bool:
        """Whether a bracket of the text is never closed."""
        while self.next is not None:
            self._pass(self.next)
        return self.open

    def _pass(self, bracket: re.Match[str]) -> None:
        end = bracket.end() if bracket.lastindex is None else _nested_end(self.text, bracket.start())
        if end is None:  # left open: it runs to the end
            self.closed, self.next, self.open = len(self.text) + 1, None, True
        else:
            self.closed, self.next = end, _SPAN_OR_OPENER.search(self.text, end)


def _nested_end(text: str, opened: int) -> int | None:
    """Where the bracket opened at `opened` closes, brackets nested in it included; None if never."""
    stack = [_OPEN_CLOSE.get(text[opened], text[opened])]  # the closers awaited, innermost last
    pos = opened + 1
    while stack:
        found = _inside(stack[-1]).search(text, pos)
        if found is None:
            return None
        pos = found.end()
        if found.group() == stack[-1]:
            stack.pop()
        else:
            stack.append(_OPEN_CLOSE.get(found.group(), found.group()))
    return pos


_OPENERS = "".join(re.escape(ch) for ch in (*sorted(_SYMMETRIC), *_OPEN_CLOSE))
_ANY_OPENER = re.compile(f"[{_OPENERS}]")


def _inside_chars(closer: str) -> str:
    """What counts inside a bracket: its closer, or a nested opener (only quotes nest inside a code span)."""
    nested = re.escape('"') + re.escape("`") if closer == "`" else _OPENERS
    return f"{re.escape(closer)}{nested}"


# A bracket with none inside it (group 1 unset), else a lone opener (group 1).
_SPAN_OR_OPENER = re.compile(
    "|".join(
        f"{re.escape(opener)}[^{_inside_chars(closer)}]*{re.escape(closer)}"
        for opener, closer in (*((q, q) for q in sorted(_SYMMETRIC)), *_OPEN_CLOSE.items())
    )
    + f"|([{_OPENERS}])"
)


@functools.lru_cache(maxsize=256)
def _separators_re(separators: frozenset[str]) -> re.Pattern[str]:
    """Any of the separators, brackets ignored; the longest first, as the longest one is the one meant."""
    return re.compile("|".join(re.escape(sep) for sep in sorted(separators, key=len, reverse=True)) or "(?!)")


@functools.lru_cache(maxsize=256)
def _walk_re(separators: frozenset[str]) -> re.Pattern[str] | None:
    """For separators holding a bracket or quote: the next opener (group 1) or separator (group 2);
    None for the others, which never cross a bracket."""
    if not any(ch in _BRACKET_CHARS for sep in separators for ch in sep):
        return None
    seps = "|".join(re.escape(sep) for sep in sorted(separators, key=len, reverse=True))
    return re.compile(f"([{_OPENERS}])|({seps})")


_BRACKET_CHARS = frozenset([*_SYMMETRIC, *_OPEN_CLOSE, *_OPEN_CLOSE.values()])


@functools.lru_cache(maxsize=32)
def _inside(closer: str) -> re.Pattern[str]:
    """Inside a bracket: its closer, or a nested opener."""
    return re.compile(f"[{_inside_chars(closer)}]")


def _plain_split(text: str, separators: re.Pattern[str]) -> list[str]:
    pieces: list[str] = []
    start = 0
    for found in separators.finditer(text):
        pieces.append(text[start : found.end()])
        start = found.end()
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
        # `\.\s$` puts the dot among the last three characters: a cheap test before the pattern.
        if out and "." in out[-1][-3:] and _NOT_AN_END_RE.search(out[-1]):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def sentences(text: str) -> list[str]:
    """Sentences of a note, without their closing punctuation (once per text within an answer:
    its analysis and its candidates cut the same note)."""
    return list(once("sentences", text, lambda: _sentences(text)))


def _sentences(text: str) -> list[str]:
    return [s for s in (clean(p) for p in _rejoin(split_top_level(text, SENTENCE_ENDS))) if s]


def clauses(text: str) -> list[str]:
    """Clauses: sentences further cut at `；` and `，`."""
    return [s for s in (clean(p) for p in _rejoin(split_top_level(text, CLAUSE_ENDS))) if s]
