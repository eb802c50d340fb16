"""The visible layout of a note: labelled sections and lists on their own lines.

Before any sentence is read, a note is cut where its curator marked parts: `【看点】`, `[Risks]`,
`坑：`, `Who should read:` at the start of a line or sentence, and runs of list lines (`1.`, `-`,
`①`). What a label announces comes from the vocabulary (`chatbot.digest.note_labels`); an
unknown label starts a section of plain prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chatbot.digest.clauses import clean
from chatbot.digest.note_labels import NoteVocabulary, PartKind, vocabulary
from chatbot.text import has_han

# Where a label may start: the note's start, a new line, a sentence end, a closing bracket.
_BOUNDARY = frozenset("\n。！？!?；;】")
_BRACKET_LABEL_RE = re.compile(r"【([^】\n]{1,16})】|\[([A-Za-z][A-Za-z ;'/-]{0,28})\](?!\()")
# A colon that can close a label: not the one of `https://`, not one between digits (`12:30`).
# (`;` inside a word is no boundary: `**TL;DR:**` is one label.)
_BOUNDARY_RE = re.compile(r"[\n。！？!?；】]|;(?![A-Za-z])|[.!?] ")
_COLON_RE = re.compile(r"[：:](?!//)(?!\d)")
_MAX_LABEL = 24
# Slack's bold label: `*要点*` alone on its line or opening one (`• *坑* …`), its list marker taken.
_STAR_LABEL_RE = re.compile(
    r"^[ \t]*(?:[-•·][ \t]*)?\*(?![*\s])([^*\n]{1,16}?)(?<!\s)\*(?!\*)(?:[ \t]+|$)", re.M
)
# A list line: `1.`, `1)`, `1、`, `(1)`, `-`, `*`, `•`, `①`.
_LEAD_MARK_RE = re.compile(r"[：:【\[]")  # a line with one of these starts something new
# An emoji or symbol a curator marks a label with (`📌 推荐`, `⚠️ 注意`), and the bold after it.
LIST_LINE_RE = re.compile(r"^\s*(?:\d{1,2}[.)、）](?!\d)|[（(]\d{1,2}[)）]|[-*•·]|[①-⑳])\s*")


@dataclass
class Section:
    """A stretch of the note: what its label announces (None: plain prose) and its text."""

    kind: PartKind | None
    text: str
    label: str | None = None
    items: list[str] = field(default_factory=list)  # list lines, markers dropped
    lead: str | None = None  # the text before the list lines


@dataclass(frozen=True)
class _Label:
    start: int  # where the label starts
    end: int  # where its content starts
    label: str
    kind: PartKind | None
    colon: bool = True  # `坑：` ends with its line; `【坑】` runs to the next label


def _at_boundary(text: str, index: int) -> bool:
    before = text[:index].rstrip(" \t*")
    return not before or before[-1] in _BOUNDARY or before.endswith(". ") or text[:index].endswith(". ")


def _colon_labels(text: str, vocab: NoteVocabulary) -> list[_Label]:
    found = (_colon_label(text, match.start(), match.end(), vocab) for match in _COLON_RE.finditer(text))
    return [label for label in found if label is not None]


def _colon_label(text: str, colon: int, after: int, vocab: NoteVocabulary) -> _Label | None:
    """The label a colon closes: the words since the last boundary (at most `_MAX_LABEL`
    characters back), or a Chinese label after a space (`… 坑：…`); None for another colon."""
    window_start = max(colon - _MAX_LABEL - 1, 0)
    start = window_start
    for boundary in _BOUNDARY_RE.finditer(text, window_start, colon):
        start = boundary.end()
    origin = start = _line_marker_start(text, start)
    raw = text[start:colon]
    stripped = _unmarked(raw)
    end = after
    while end < len(text) and text[end] in " \t*":
        end += 1
    if stripped.rstrip(" *") and len(stripped) <= _MAX_LABEL and _at_boundary(text, origin):
        kind = vocab.label_kind(stripped)
        # The label takes its line's list marker (`- 看点：`): no stray `-`. A bold one the
        # vocabulary does not know (`- **Status:**`) still ends the part before: plain prose.
        if kind is not None or _bold(raw, text[colon:end]):
            return _Label(origin, end, clean(stripped.strip(" *")), kind)
    return _spaced_label(raw, origin, end, vocab)


def _bold(raw: str, closing: str) -> bool:
    """`**Status:**` or `**Status**:` at the start of its line or list item: a label's markup."""
    opened = _unmarked_start(raw)
    return opened.startswith("**") and ("**" in closing or opened.rstrip().endswith("**"))


def _unmarked_start(raw: str) -> str:
    marker = LIST_LINE_RE.match(raw)
    return (raw[marker.end() :] if marker else raw).lstrip(" \t")


def _line_marker_start(text: str, start: int) -> int:
    """The start of the line when only its list marker comes before `start` (the `. ` of
    `2. Risks:` reads as a sentence end): the marker is the label's, not the text's before."""
    line_start = text.rfind("\n", 0, start) + 1
    if line_start < start:
        head = text[line_start:start]
        marker = LIST_LINE_RE.match(head)
        if marker is not None and marker.end() == len(head):
            return line_start
    return start


def _unmarked(raw: str) -> str:
    """The words before a colon without the list marker or bold stars they open with (`- Focus`,
    `2. 要点`, `**Note`); an emoji before a label (`📌 推荐`) is dropped where labels are compared
    (`note_labels.label_key`)."""
    marker = LIST_LINE_RE.match(raw)
    return (raw[marker.end() :] if marker else raw).lstrip(" \t*-•")


def _spaced_label(raw: str, origin: int, end: int, vocab: NoteVocabulary) -> _Label | None:
    """`… 坑：…` after a space: a Chinese label may follow the previous text on the same line."""
    space = raw.rfind(" ")
    word = raw[space + 1 :].strip("*")
    if space >= 0 and word and not word.isascii() and vocab.label_kind(word) is not None:
        return _Label(origin + space + 1, end, word, vocab.label_kind(word))
    return None


def _bracket_labels(text: str, vocab: NoteVocabulary) -> list[_Label]:
    found = (_bracket_label(text, match, vocab) for match in _BRACKET_LABEL_RE.finditer(text))
    return [label for label in found if label is not None]


def _bracket_label(text: str, match: re.Match[str], vocab: NoteVocabulary) -> _Label | None:
    """`【看点】` is always a label (of plain prose when unknown); `[Risks]` only at a boundary
    and with a known word (`[bot]`, `[Test]` inside a sentence are not labels)."""
    latin = match.group(2) is not None
    label = (match.group(1) or match.group(2)).strip()
    if latin and not _at_boundary(text, match.start()):
        return None
    kind = vocab.label_kind(label)
    if kind is None and vocab.verdict_re.fullmatch(label):
        kind = "verdict"
    if latin and kind is None:
        return None
    end = match.end()
    if end < len(text) and text[end] in "：: \t":
        end += 1
    return _Label(match.start(), end, label, kind, colon=False)


def _star_labels(text: str, vocab: NoteVocabulary) -> list[_Label]:
    """Slack's bold, one star each side, opening a line or a list item: `*要点*`, `• *坑* …`
    (no colon after it). A known word is its part's label; an unknown one (`*review*`) starts
    plain prose. Only in a note whose curator labels so, a known word among two of them or one
    alone on its line: a Markdown `*Note* that …` opening a line is emphasis, no label."""
    if "*" not in text:
        return []
    found = [(m, vocab.label_kind(m.group(1))) for m in _STAR_LABEL_RE.finditer(text)]
    if not any(kind is not None for _, kind in found):
        return []
    if len(found) == 1 and text[found[0][0].end() :].split("\n", 1)[0].strip():
        return []
    return [_Label(m.start(), m.end(), clean(m.group(1).rstrip("：: ")), kind) for m, kind in found]


def _list_parts(text: str) -> tuple[str | None, list[str], str]:
    """(lead-in, list items, text after the list) when the text holds two or more list lines."""
    lines = text.split("\n")
    marked = [
        i for i, line in enumerate(lines) if LIST_LINE_RE.match(line) and clean(LIST_LINE_RE.sub("", line, 1))
    ]
    if len(marked) < 2:
        return None, [], text
    first = marked[0]
    items, last = _list_run(lines, first)
    lead = "\n".join(lines[:first]).strip() or None
    rest = "\n".join(lines[last + 1 :]).strip()
    return lead, [clean(item) for item in items if clean(item)], rest


def _list_run(lines: list[str], first: int) -> tuple[list[str], int]:
    """The items of the list lines from `first` on (wrapped lines joined), and its last line."""
    items: list[str] = []
    last = first
    for i in range(first, len(lines)):
        line = lines[i]
        if LIST_LINE_RE.match(line):
            items.append(LIST_LINE_RE.sub("", line, count=1).strip())
            last = i
        elif items and i == last + 1 and _continues(items[-1], line):
            items[-1] = _joined(items[-1], line.strip())  # a wrapped item goes on with the next line
            last = i
        elif line.strip():
            break
    return items, last


def _joined(item: str, line: str) -> str:
    """A wrapped item and its next line: Chinese runs on, other words keep a space between."""
    if has_han(item[-1:]) and has_han(line[:1]):
        return item + line
    return f"{item.rstrip()} {line}"


def _continues(item: str, line: str) -> bool:
    """A line that wraps the list item before it: the item has no closing mark, the line no
    lead-in and does not open an audience or caveat sentence (`适合做…的同学。` after the last
    item is the note going on, not more of that item)."""
    line = line.strip()
    if not line or item.rstrip()[-1:] in "。.!?！？；;：:" or _LEAD_MARK_RE.search(line):
        return False
    vocab = vocabulary()
    return not any(
        leads.opening is not None and leads.opening.match(line)
        for leads in (vocab.audience_re, vocab.caveat_re)
    )


def layout(note: str, vocab: NoteVocabulary | None = None) -> list[Section]:
    """The note as sections in order; a note without labels or list lines is one prose section."""
    kept = _kept_labels(note, vocab or vocabulary())
    sections: list[Section] = []
    bounds = [(0, None, None, False), *((lab.end, lab.label, lab.kind, lab.colon) for lab in kept)]
    for index, (end, label, kind, colon) in enumerate(bounds):
        stop = kept[index].start if index < len(kept) else len(note)
        body = note[end:stop].strip()
        if index > 0 or body:
            sections.extend(_labelled_sections(body, label, kind, colon))
    return sections


def _kept_labels(note: str, vocab: NoteVocabulary) -> list[_Label]:
    """Labels in order of place; one that starts inside the label before it is not one."""
    labels = sorted(
        _star_labels(note, vocab) + _bracket_labels(note, vocab) + _colon_labels(note, vocab),
        key=lambda lab: lab.start,
    )
    kept: list[_Label] = []
    for lab in labels:
        if not kept or lab.start >= kept[-1].end:
            kept.append(lab)
    return kept


def _labelled_sections(body: str, label: str | None, kind: PartKind | None, colon: bool) -> list[Section]:
    """A label's text as sections: `Risks: …` ends with its line (the next line is prose again)."""
    first, _, rest = body.partition("\n")
    if (
        colon
        and first.strip()
        and rest.strip()
        and not LIST_LINE_RE.match(rest)
        and not _opens_list(first, body)
    ):
        return [*_with_lists(Section(kind, first.strip(), label)), *_with_lists(Section(None, rest.strip()))]
    return _with_lists(Section(kind, body, label))


def _opens_list(first: str, body: str) -> bool:
    """Whether a label's first line is the first of its list lines (`看点：` then `- A` wrapped
    over two lines, `- B`): the label's text is then the list, not that one line."""
    return LIST_LINE_RE.match(first) is not None and bool(_list_parts(body)[1])


def _with_lists(section: Section) -> list[Section]:
    """A section whose text holds list lines gets them as items; prose after the list stays apart."""
    lead, items, rest = _list_parts(section.text)
    if not items:
        return [section]
    section.items, section.lead = items, lead
    section.text = section.text[: len(section.text) - len(rest)].strip() if rest else section.text
    return [section, *_with_lists(Section(None, rest))] if rest else [section]
