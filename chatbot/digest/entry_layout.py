"""Which paragraphs of a raw digest are titles and which are notes.

Paragraphs alternate title / note, but curators leave blank lines inside a note, end a title with
a full stop, or append an entry to a file whose last line has no line break (the new title then
sits on the last line of the note above it). Each of these makes a paragraph ambiguous, and a
wrong guess shifts or swallows entries. So every reading the paragraphs allow is weighed at once
(a shortest path over the paragraphs), each odd shape costing what it costs in the file's own
style: in a file whose notes are one line each, a short line glued under a note is a new title.
When two readings cost the same, the file is refused at the paragraph in doubt: a curator's entry
is never merged away on a guess.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

from chatbot.digest.model import DigestParseError, Problem
from chatbot.digest.note_labels import vocabulary
from chatbot.digest.note_layout import LIST_LINE_RE

Block = tuple[int, list[str]]
Pair = tuple[Block, Block]
MAX_TITLE = 300
# How a sentence of a note ends; a title seldom does (`值得精读。…`, `注意：尚未合并。`).
SENTENCE_END = frozenset("。！？；.!?")
_HEADING_PREFIX = ("# ", "## ", "### ", "#### ", "##### ", "###### ")

# What each odd shape costs a reading. A blank line inside a note (JOIN) is the commonest slip and
# is cheaper than a title ending a sentence (TITLE_SENTENCE) plus a title-shaped note
# (TITLE_SHAPED_NOTE), the price of shifting entries instead. A title glued under a note
# (SPLIT) is dear where notes wrap; where notes are one line each, a two-line paragraph is itself
# the odd shape and splitting it mends the file (a gain: a glued `标题。` still beats a join).
JOIN = 1.0
TITLE_SENTENCE = 1.5
TITLE_SHAPED_NOTE = 1.0
SPLIT_ONE_LINE_NOTES = -0.75
SPLIT_WRAPPED_NOTES = 2.5
NOT_A_HEADING = 3.0  # a plain line as a title where titles are headings: dearer than any join
HEADED_FILE = 3  # headings it takes (and a quarter of the paragraphs) for titles to be headings
_SHORT = 80
# A sentence ending inside a line (`值得精读。它…`, `Worth it. It…`): a title is at most one sentence.
_INNER_SENTENCE_END = re.compile(r"[。！？；]|[.!?] ")  # searched before the line's last character


class Step(Enum):
    """What a reading does at a paragraph."""

    ENTRY = "entry"  # this paragraph is a title, the next its note
    ENTRY_GLUED = "entry+glued"  # ... and the note's last line is the next title
    JOIN = "join"  # more of the note before it
    NOTE = "note"  # the note of a title glued above it
    NOTE_GLUED = "note+glued"  # ... whose last line is the next title


@dataclass(frozen=True, slots=True)
class _Best:
    cost: float
    step: Step | None
    tied: bool


_NONE = _Best(math.inf, None, False)


def read_pairs(rest: list[Block], path: str, found: list[Problem], markdown: bool = False) -> list[Pair]:
    """(title, note) paragraphs in order, read the cheapest way; warnings for joined or split
    paragraphs go to `found`. Raises DigestParseError when no reading fits (at the first
    structural error) or two fit equally well (at the paragraph in doubt)."""
    rest = _without_preamble(rest, path, found) if markdown else rest
    by_gaps = _by_gaps(rest)
    if by_gaps is not None and not _titles_inside(*by_gaps):
        return _read(_Shapes(by_gaps[0], markdown, by_gaps[1]), path, found)
    try:
        return _read(_Shapes(rest, markdown), path, found)
    except DigestParseError:
        # Refused as title/note paragraphs: the blank lines may still tell the entries apart.
        if by_gaps is None:
            raise
        return _read(_Shapes(by_gaps[0], markdown, by_gaps[1]), path, found)


def _title_shaped(line: str) -> bool:
    """A line that may be a title: not too long, ending no sentence, not opening like a note."""
    return len(line) <= MAX_TITLE and line[-1:] not in SENTENCE_END and not _opens_like_a_note(line)


def _titles_inside(rest: list[Block], opens: list[bool]) -> bool:
    """Whether reading by the gaps would join a title-shaped line with a paragraph under it (a
    short line ending no sentence) into the note above: an entry after one blank line, where
    the gaps are the curator's habit, not their grammar."""
    for index in range(2, len(rest)):
        line = rest[index][1][0].strip()
        joined = not opens[index] and not opens[index - 1]
        if joined and len(rest[index][1]) == 1 and len(line) <= _SHORT and line[-1:] not in SENTENCE_END:
            return True
    return False


def _without_preamble(rest: list[Block], path: str, found: list[Problem]) -> list[Block]:
    """The paragraphs from the first entry on, in a file whose titles are headings naming PRs
    (`## … (#12345)`) opened by a heading of its own (`# vLLM digest · 2029-02`) and an intro:
    those are the digest's, not an entry (said as a warning, so nothing goes unseen)."""
    titled = [i for i, (_, block) in enumerate(rest) if _titled_heading(block[0])]
    first = titled[0] if titled else 0
    if len(titled) < HEADED_FILE or first == 0 or not rest[0][1][0].startswith(_HEADING_PREFIX):
        return rest
    if _level(rest[0][1][0]) >= _level(rest[first][1][0]):
        return rest
    line, block = rest[0]
    message = (
        f"{block[0].strip()[:60]!r} and the {first - 1} paragraph(s) under it read as the digest's heading"
    )
    found.append(Problem(path, line, "warning", message))
    return rest[first:]


def _headed(rest: list[Block]) -> bool:
    """Whether a Markdown file's titles are its headings: a plain line there is more of a note
    (`Read? yes — …` under two paragraphs), never a title of its own. Headings naming a PR
    (`## Faster MoE (#12345)`) are titles however many paragraphs each note has (`TL;DR:`,
    `注意：`, a list, each a paragraph of its own); others when they are a quarter of them."""
    heads = [block[0] for _, block in rest if block[0].strip().startswith(_HEADING_PREFIX)]
    titled = sum(1 for h in heads if _titled_heading(h))
    many = len(heads) >= len(rest) / 4 or _few_titles_besides(rest)
    return max(titled, len(heads) if many else 0) >= HEADED_FILE


def _few_titles_besides(rest: list[Block]) -> bool:
    """Whether hardly any paragraph but the headings would make a title: under each heading,
    labels, ratings, lists and sentences."""
    others = [block for _, block in rest if not block[0].strip().startswith(_HEADING_PREFIX)]
    title_like = sum(1 for block in others if len(block) == 1 and _plain_title(block[0].strip()))
    return title_like * 4 <= len(others)


def _plain_title(line: str) -> bool:
    """A line that reads as a title anywhere: short, one clause, no sentence, not a note's opening."""
    return len(line) <= _SHORT and _title_shaped(line) and not _INNER_SENTENCE_END.search(line)


def _titled_heading(line: str) -> bool:
    return line.strip().startswith(_HEADING_PREFIX) and _PR_IN_HEADING_RE.search(line) is not None


def _level(heading: str) -> int:
    return len(heading.strip()) - len(heading.strip().lstrip("#"))


def _read(shapes: _Shapes, path: str, found: list[Problem]) -> list[Pair]:
    rest = shapes.rest
    if shapes.plain():
        return [(rest[index], rest[index + 1]) for index in range(0, len(rest), 2)]
    table = shapes.table()
    if math.isinf(table[0][0].cost):
        _raise_structural(rest, path, shapes)
    warned: list[Problem] = []
    pairs = _follow(rest, table, path, warned, shapes.headed or bool(shapes.opens))
    found.extend(warned)
    return pairs


class _Shapes:
    """The shape of each paragraph and the cost table of every reading."""

    titles: list[float]  # cost of each paragraph as a title (inf: it cannot be one)
    notes: list[float]  # ... as a whole note
    splits: list[float]  # ... as a note whose last line is the next title (inf: it is not glued)

    def __init__(self, rest: list[Block], markdown: bool, opens: list[bool] | None = None) -> None:
        self.rest = rest
        self.markdown = markdown
        self.headed = markdown and _headed(rest)
        self.opens = opens or []  # read by its gaps: whether each paragraph opens an entry
        wrapped = sum(1 for _, block in rest if len(block) > 1)
        self.split_cost = SPLIT_ONE_LINE_NOTES if wrapped * 5 <= len(rest) else SPLIT_WRAPPED_NOTES

    def plain(self) -> bool:
        """Titles and notes alternate with no odd shape and nothing glued: any other reading
        would join a paragraph at a cost, so this one is the only cheapest (most files)."""
        rest = self.rest
        if len(rest) % 2 or (self.split_cost < 0 and any(self.glued(i) for i in range(1, len(rest), 2))):
            return False
        titles = range(0, len(rest), 2)
        return all(self.notes_plain(i + 1) for i in titles) and all(
            self.titleable(i) and self.title_cost(i) == 0.0 for i in titles
        )

    def notes_plain(self, index: int) -> bool:
        return self.note_cost(self.rest[index][1]) == 0.0

    def titleable(self, index: int) -> bool:
        block = self.rest[index][1]
        return len(block) == 1 and len(block[0].strip()) <= MAX_TITLE

    def glued_cost(self, note: list[str]) -> float:
        """Reading a note's last line as the next title: the split, that title, the note left."""
        return self.split_cost + self.line_title_cost(note[-1]) + self.note_cost(note[:-1])

    def title_cost(self, index: int) -> float:
        cost = self.line_title_cost(self.rest[index][1][0])
        return cost + (NOT_A_HEADING if self.opens and not self.opens[index] else 0.0)

    def line_title_cost(self, line: str) -> float:
        line = line.strip()
        if self.markdown and line.startswith(_HEADING_PREFIX):
            return 0.0
        cost = NOT_A_HEADING if self.headed else 0.0
        cost += TITLE_SENTENCE if line[-1:] in SENTENCE_END else 0.0
        if _INNER_SENTENCE_END.search(line, 0, len(line) - 1):
            cost += TITLE_SENTENCE
        return cost + (TITLE_SENTENCE if _opens_like_a_note(line) else 0.0)

    def note_cost(self, lines: list[str]) -> float:
        if len(lines) > 1:
            return 0.0
        line = lines[0].strip()
        title_shaped = len(line) <= _SHORT and line[-1:] not in SENTENCE_END
        return TITLE_SHAPED_NOTE if title_shaped else 0.0

    def goes_on_note(self, index: int) -> bool:
        """A paragraph that may be more of the note before it: it ends a sentence or is a list."""
        block = self.rest[index][1]
        first = block[0].strip()
        if self.markdown and first.startswith(_HEADING_PREFIX):
            return False
        if self.opens:
            return not self.opens[index]
        if self.headed or first[-1:] in SENTENCE_END:
            return True
        return len(block) > 1 and all(LIST_LINE_RE.match(line) for line in block[:2])

    def glued(self, index: int) -> bool:
        """A paragraph whose last line may be a title typed under it: a short line after one
        that ends a sentence."""
        block = self.rest[index][1]
        if len(block) < 2 or LIST_LINE_RE.match(block[-1]):
            return False
        return len(block[-1].strip()) <= _SHORT and block[-2].strip()[-1:] in SENTENCE_END

    def table(self) -> list[tuple[_Best, _Best]]:
        """best[i] = (reading from paragraph i on at a title, ... with a title glued above i)."""
        count = len(self.rest)
        self.titles = [self.title_cost(i) if self.titleable(i) else math.inf for i in range(count)]
        self.notes = [self.note_cost(block) for _, block in self.rest]
        self.splits = [
            self.glued_cost(block) if self.glued(i) else math.inf for i, (_, block) in enumerate(self.rest)
        ]
        best: list[tuple[_Best, _Best]] = [(_NONE, _NONE)] * (count + 2)
        best[count] = (_Best(0.0, None, False), _NONE)
        for index in range(count - 1, -1, -1):
            best[index] = (self._at_title(index, best), self._at_note(index, best))
        return best

    def _at_title(self, index: int, best: list[tuple[_Best, _Best]]) -> _Best:
        joined = JOIN + best[index + 1][0].cost if index > 0 and self.goes_on_note(index) else math.inf
        if index + 1 == len(self.rest):
            return _cheapest((joined, Step.JOIN))
        title = self.titles[index]
        entry = title + self.notes[index + 1] + best[index + 2][0].cost
        glued = title + self.splits[index + 1] + best[index + 2][1].cost
        return _cheapest((joined, Step.JOIN), (entry, Step.ENTRY), (glued, Step.ENTRY_GLUED))

    def _at_note(self, index: int, best: list[tuple[_Best, _Best]]) -> _Best:
        whole = self.notes[index] + best[index + 1][0].cost
        return _cheapest((whole, Step.NOTE), (self.splits[index] + best[index + 1][1].cost, Step.NOTE_GLUED))


_OPENING_LABEL_RE = re.compile(r"[【\[]([^】\]]{1,12})[】\]]|([^：:，,。]{1,16})[：:]")
_AFTER_VERDICT = frozenset("，。,.！!；;：: ")


_PR_IN_HEADING_RE = re.compile(r"#\d{2,}\b|/pull/\d+")
WIDE_GAP = 2  # blank lines that part entries where one blank line (or none) parts a note's paragraphs


def _by_gaps(rest: list[Block]) -> tuple[list[Block], list[bool]] | None:
    """A file whose entries are parted by two or more blank lines and whose notes' paragraphs by
    one or none (`标题` over `第一段`, blank, `第二段`, two blanks, `标题`…): its paragraphs with
    each entry's title line on its own, and whether each opens an entry. None where the gaps do
    not say so: at least `HEADED_FILE` entries, each opening on a title-shaped line with more
    under it, and not every gap wide."""
    gaps = [WIDE_GAP] + [line - (prev + len(block)) for (prev, block), (line, _) in pairwise(rest)]
    split: list[Block] = []
    opens: list[bool] = []
    for index, ((line, block), gap) in enumerate(zip(rest, gaps, strict=True)):
        if gap < WIDE_GAP:
            split.append((line, block))
            opens.append(False)
        elif _opens_entry(block, index + 1 < len(rest) and gaps[index + 1] < WIDE_GAP):
            # A title typed right over its note's first line stands on its own.
            split.extend([(line, block[:1]), (line + 1, block[1:])] if len(block) > 1 else [(line, block)])
            opens.extend([True, False] if len(block) > 1 else [True])
        else:
            return None
    return (split, opens) if sum(opens) >= HEADED_FILE and not all(opens) else None


def _opens_entry(block: list[str], note_below: bool) -> bool:
    """Whether a paragraph after a wide gap opens an entry: a title line with its note under it."""
    return (len(block) > 1 or note_below) and _title_shaped(block[0].strip())


def _may_open_with_label(line: str) -> bool:
    head = line[:17]
    return "：" in head or ":" in head or line[:1] in "【["


def _opens_like_a_note(line: str) -> bool:
    """A line opening the way notes do, with a part label (`注意：`, `【看点】`, `Risks:`) or a
    verdict (`值得精读，`, `Must read.`): no title opens so."""
    vocab = vocabulary()
    label = _OPENING_LABEL_RE.match(line) if _may_open_with_label(line) else None
    if label is not None and vocab.label_kind(label.group(1) or label.group(2)) is not None:
        return True
    verdict = vocab.verdict_re.match(line)
    return verdict is not None and line[verdict.end() : verdict.end() + 1] in _AFTER_VERDICT


def _cheapest(*options: tuple[float, Step]) -> _Best:
    """The cheapest option, tied when another finite one costs the same."""
    cost, step = min(options, key=lambda option: option[0])
    if math.isinf(cost):
        return _NONE
    tied = sum(1 for other, _ in options if math.isclose(other, cost)) > 1
    return _Best(cost, step, tied)


def _follow(
    rest: list[Block], table: list[tuple[_Best, _Best]], path: str, found: list[Problem], headed: bool
) -> list[Pair]:
    """The pairs of the cheapest reading, refusing the file where it was a coin toss. Where
    titles are headings, paragraphs under a heading are one note as Markdown has it: no warning."""
    pairs: list[Pair] = []
    index, carried = 0, False
    while index < len(rest):
        best = table[index][1 if carried else 0]
        if best.tied:
            _raise_doubt(rest, index, path)
        assert best.step is not None  # a finite reading has a step at every paragraph
        carried, index = _apply(best.step, rest, index, pairs, path, found, headed)
    return pairs


def _apply(
    step: Step,
    rest: list[Block],
    index: int,
    pairs: list[Pair],
    path: str,
    found: list[Problem],
    headed: bool = False,
) -> tuple[bool, int]:
    """Do one step of the reading; (whether a title is carried into the next paragraph, next index)."""
    line, block = rest[index]
    if step is Step.JOIN:
        title_block, (note_line, note_block) = pairs[-1]
        pairs[-1] = (title_block, (note_line, [*note_block, *block]))
        title = title_block[1][0].strip()[:60]
        message = f"blank line inside the note of {title!r}: this paragraph is read as part of it"
        if not headed:
            found.append(Problem(path, line, "warning", message))
        return False, index + 1
    if step in (Step.NOTE, Step.NOTE_GLUED):
        return _note(step is Step.NOTE_GLUED, rest[index], pairs, path, found), index + 1
    pairs.append((rest[index], (0, [])))
    return _note(step is Step.ENTRY_GLUED, rest[index + 1], pairs, path, found), index + 2


def _note(glued: bool, note: Block, pairs: list[Pair], path: str, found: list[Problem]) -> bool:
    """Give the last pair its note; a glued title's line starts the next pair."""
    line, block = note
    title_block = pairs[-1][0]
    if not glued:
        pairs[-1] = (title_block, note)
        return False
    pairs[-1] = (title_block, (line, block[:-1]))
    title_line = line + len(block) - 1
    pairs.append(((title_line, [block[-1]]), (0, [])))
    message = (
        f"title {block[-1].strip()[:60]!r} directly under the note above it (a line break or a blank "
        "line missing?): read as a new entry"
    )
    found.append(Problem(path, title_line, "warning", message))
    return True


def _raise_doubt(rest: list[Block], index: int, path: str) -> None:
    line, block = rest[index]
    raise DigestParseError(
        path,
        line,
        f"cannot tell whether {block[0].strip()[:60]!r} starts a new entry or goes on the note above it: "
        "write every entry as title, blank line, note (a note without blank lines inside)",
    )


def _raise_structural(rest: list[Block], path: str, shapes: _Shapes) -> None:
    """No reading fits: the first structural error of the plain alternating reading (joining
    what goes on a note), as curators have always been told it."""
    titles: list[Block] = []
    index = 0
    while index < len(rest):
        line, block = rest[index]
        if titles and shapes.goes_on_note(index):
            index += 1
            continue
        if index + 1 == len(rest):
            title = block[0].strip()[:60]
            raise DigestParseError(
                path, line, f"title {title!r} has no note paragraph after it (a blank line missing?)"
            )
        titles.append(rest[index])
        index += 2
    for line, block in titles:
        if len(block) > 1:
            raise DigestParseError(
                path, line + 1, "a title is one line; separate the title from its note with a blank line"
            )
        if len(block[0].strip()) > MAX_TITLE:
            raise DigestParseError(path, line, f"title longer than {MAX_TITLE} characters: is it a note?")
    raise DigestParseError(path, rest[-1][0], "the paragraphs do not alternate title / note")
