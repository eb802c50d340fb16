"""Anatomy of a review note: verdict, why-read line, focus points, audience, caveats, refs.

Notes follow the curator's habits (一是…二是…, (1)(2)(3), 重点关注三点：…, 对…有借鉴意义,
注意：…). Everything extracted is the curator's own words, cut at the note's own punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chatbot.digest.clauses import clauses, clean, sentences, split_top_level
from chatbot.digest.cues import marked_verdict, reading_cue, verdict_for_readers
from chatbot.digest.names import (
    GITHUB_URL_RE,
    REF_RE,
    REPO_REF_RE,
    RFC_REF_RE,
    TWO_DIGITS_RE,
    WORD_REF_RE,
    dedupe,
    find_identifiers,
    find_people,
    find_refs,
    name_listing,
    names_only,
)
from chatbot.digest.note_labels import vocabulary
from chatbot.digest.note_layout import Section, layout
from chatbot.digest.rated import rated_verdict
from chatbot.digest.refs import Ref
from chatbot.digest.rows import as_rows_read
from chatbot.text import has_han, without_shortcodes

INLINE_NUMBER_RE = re.compile(r"(?:^|(?<=[\s：:。；;，,】]))(\d{1,2})[.、)）](?![\d.])\s*")
VERDICT_FOR_RE = re.compile(r"\s*(?:for|to|if you|unless)\s+\S", re.IGNORECASE)
# A Markdown quote marker (`> `, `>> `) at a line's start: the quoted text is the note's own.
QUOTE_MARKER_RE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
# After a verdict word: punctuation, not more words (`推荐给…` is an audience, not a verdict).
VERDICT_END_RE = re.compile(r"\s*(?:[，,。.!！;；:：—)）\n]|-\s|$)")
# Ratings by shape: `★★★★☆`, `4/5`, `8/10`, `9 分`.
RATING_RE = re.compile(r"[★☆⭐]{1,5}|\d{1,2}\s*/\s*(?:5|10)|\d{1,2}\s*分")
CODE_OR_NUMBER_RE = re.compile(r"`|#\d|\d|[A-Za-z_]+[._][A-Za-z_]")
REFS_WORDS_RE = re.compile(
    r"(?i)\b(?:see also|see|related|refs?|references|and|also|cf)\b|相关|详见|参见|另见|见|以及|和|与|及"
)
COUNT_LEAD_RE = re.compile(
    r"^(?:[两二三四五六七八九十几\d]\s*(?:点|处|件事|个点|个方面|条)|(?:two|three|four|five|several|a few)\s+\w+)",
    re.IGNORECASE,
)
COUNT_PREFIX_RE = re.compile(
    r"^(?:有|还有|另有)?\s*(?:[两二三四五六七八九十几\d]+|one|two|three|four|five|several|a few|a couple of)"
    r"\s*(?:个|点|处|条|件)?\s*",
    re.IGNORECASE,
)
# A lead-in by shape: a count (`三点`, `两处`, `three things`) with nothing after it.
LEAD_SHAPE_RE = re.compile(
    r"(?:[两二三四五六七八九十几\d]\s*(?:点|处|件事|个点|个方面|条)|(?:two|three|four|five|several|a few)\s+\w+)$",
    re.IGNORECASE,
)

# Lead-ins that announce an enumeration of focus points.
ENUM_INTRO_RE = re.compile(
    r"(重点关注|建议重点学习|重点学习|尤其是|值得借鉴的设计决策包括|值得借鉴的|值得学习的|亮点包括|看点)[^：:]*[：:]"
)
# Item markers: 一是/二是…, (1)/(2)…, ①②…
_CN_NUM = "一二三四五六七八九十"
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
# (As `(?:[一…十]是|[（(]\d+[)）]|[①…⑩])\s*`, its first character taken before the alternatives.)
MARKER_RE = re.compile(
    rf"[{_CN_NUM}（({_CIRCLED}](?:(?<=[{_CN_NUM}])是|(?<=[（(])\d+[)）]|(?<=[{_CIRCLED}]))\s*"
)
AUDIENCE_RE = re.compile(
    r"^(?:对|可作为|适合|推荐给)[^。]+?(?:借鉴意义|参考价值|参考实现|参考|帮助|必读|阅读|价值)$"
)
CAVEAT_LEAD_RE = re.compile(
    r"^(?:注意[：:，,]?|需要注意[：:，,]?|风险[：:]|提醒[：:]|对\s*reviewer\s*而言[，,]?|另可留意|另需留意|"
    r"阅读时可重点关注|阅读时可留意|待确认[：:]?|遗留问题[：:]?)"
)
CAVEAT_ANYWHERE_RE = re.compile(r"(可能被重新审视|尚未调查|尚不清楚|仍需确认|有待|是否有必要|是否可接受)")

_WARNING_WORDS = ("提醒", "警示", "注意")
WARNING_CLAUSE_RE = re.compile(r"^(?:提醒|警示|注意)")
HEAD_SEPARATORS = ("——", "：", ":", "，", ",", "；")
# Patterns the helpers below apply to every note, compiled once here rather than looked up in
# `re`'s cache on each call (tens of thousands of calls for a 10k-entry library).
_LIST_TAIL_RE = re.compile(r"(?:，?以及|, and )$")
_CLAUSE_COMMA_RE = re.compile(r"[，,]")  # a 、 run whose pieces hold clauses is one sentence
_SHARED_PREDICATE_RE = re.compile(
    r"\s*[^，,。；;\s]{1,12}\s*(?:都|均|全都|全部|一律|统统)"
)  # right after the last name
_LIST_HEAD_RE = re.compile(r"^(?:以及|及|和)\s*")
_CAVEAT_LABEL_RE = re.compile(r"^(?:注意|需要注意|风险|提醒|待确认|遗留问题)\s*[：:，,]\s*")
_WORD_CHAR_RE = re.compile(r"[^\W_]")
_RATING_MARKS = ("/", "分", "★", "☆", "⭐")  # what any `RATING_RE` match holds
_AS_FOLLOWS_RE = re.compile(r"(?:如下|as follows|below)$", re.IGNORECASE)
_NUMBER_MARK_RE = re.compile(r"\d[.、)）]")


@dataclass
class NoteParts:
    """What the note analysis found; every string is a piece of the note."""

    verdict: str | None = None
    why: str | None = None
    highlights: list[str] = field(default_factory=list)
    audience: str | None = None
    caveats: list[str] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)

    def entry_fields(self) -> dict[str, object]:
        """What `Entry` keeps as fields (the other parts it reads from the note when asked)."""
        return {"refs": self.refs, "people": self.people, "identifiers": self.identifiers}


def _numbered(text: str) -> tuple[str | None, list[str]]:
    """`1. A 2. B 3. C` inside a line: the lead-in and the items, when the numbers count up from 1."""
    run: list[re.Match[str]] = []
    if not _NUMBER_MARK_RE.search(text):
        return None, []  # no `1.` or `2、` at all: most sentences
    for m in INLINE_NUMBER_RE.finditer(text):
        if int(m.group(1)) == len(run) + 1:
            run.append(m)
    if len(run) < 2:
        return None, []
    ends = [m.start() for m in run[1:]] + [len(text)]
    items = [_tidy(text[m.end() : end]) for m, end in zip(run, ends, strict=True)]
    return clean(text[: run[0].start()]) or None, [i for i in items if i]


def _split_markers(body: str) -> list[str]:
    """Items of a marked enumeration (一是…二是…, (1)…(2)…)."""
    parts = MARKER_RE.split(body)
    return [clean(p) for p in parts[1:] if clean(p)]


def _split_list(body: str) -> list[str]:
    """Items of an unmarked list: `A、B，以及 C`; a run `A、B、C 都还在 TODO 里` says one thing of
    all three, and `A 紧张、又是 B 的时候，C` joins clauses (a piece holds a comma): each stays one
    item."""
    pieces = []
    for part in split_top_level(body, ["；", ";", "，以及", "以及", ", and "]):
        named = split_top_level(part, ["、"])
        joined = len(named) > 1 and (
            _SHARED_PREDICATE_RE.match(named[-1])
            or _CLAUSE_COMMA_RE.search(_LIST_TAIL_RE.sub("", clean(part)))
        )
        pieces.extend([part] if joined else named)
    items = [clean(_LIST_TAIL_RE.sub("", clean(p))) for p in pieces]
    return [_LIST_HEAD_RE.sub("", item) for item in items if item]


def _head(item: str) -> str:
    """The first words of a focus point, up to its own dash or comma."""
    head = item
    for sep in HEAD_SEPARATORS:
        cut = split_top_level(head, [sep])
        if len(cut) > 1:
            head = clean(cut[0])
    return head


def _is_audience(text: str) -> bool:
    return bool(AUDIENCE_RE.match(text)) or vocabulary().is_audience(text)


def _is_caveat(text: str) -> bool:
    return bool(CAVEAT_LEAD_RE.match(text) or CAVEAT_ANYWHERE_RE.search(text)) or vocabulary().is_caveat(text)


def _tidy(text: str) -> str:
    """A piece without surrounding punctuation, a Latin full stop included."""
    return clean(clean(text).strip(".!?！？…"))


def _caveat_text(text: str) -> str:
    """A caveat without its `注意：` label; other lead-ins carry meaning and stay."""
    return _tidy(_CAVEAT_LABEL_RE.sub("", text))


@dataclass
class _Reading:
    """What the prose reader has seen so far: sentences for the why-line, the first lead-in."""

    body: list[str] = field(default_factory=list)
    enum_intro: str | None = None
    why_label: str | None = None
    verdict_labelled: bool = False
    verdict_marked: bool = (
        False  # an emoji marked the verdict's words: a label's own words don't replace them
    )
    people: Callable[[], Sequence[str]] = tuple  # the handles the note names, looked for when asked


def note_names(note: str, repo: str, title: str = "") -> NoteParts:
    """What the search index and the merge need of a note, found when it is loaded: the refs,
    people and code names, without cutting the note into its parts (`analyse_note` does that)."""
    parts = NoteParts()
    parts.refs, parts.people, parts.identifiers = found_names(note, repo, title)
    return parts


def found_names(note: str, repo: str, title: str = "") -> tuple[list[Ref], list[str], list[str]]:
    """The refs, people and code names of `note_names`, as they are: what loading keeps of a
    note, without the parts it leaves empty."""
    text = as_rows_read(note).strip()
    if not text:
        # Metadata-only entries (a `.meta.yaml` beside the raw text) have no note: only the
        # title's code names, without running every reader over nothing.
        return [], [], find_identifiers(f"{title}\n")
    return find_refs(text, repo), find_people(text), find_identifiers(f"{title}\n{text}")


def analyse_note(note: str, repo: str, title: str = "") -> NoteParts:
    """Cut a note into its parts, with its refs, people and code names; pieces that fit no part
    stay only in the note."""
    note = as_rows_read(note)  # a table's rows, a Q/A line's answer: the curator's words
    parts = note_names(note, repo, title)
    _cut_parts(note, parts, lambda: parts.people)
    return parts


def note_parts(note: str) -> NoteParts:
    """The five parts of `analyse_note` alone (verdict, why, focus points, audience, caveats),
    its refs, people and code names left empty: an entry keeps those as fields, found at load, and
    the note's people are looked for only if a sentence's lead-in may be one (`bob: A、B`). On
    the first answer about an entry: finding the names again was a tenth of it (bench/scale.py's
    follow-up answer row)."""
    note = as_rows_read(note)
    found: list[list[str]] = []

    def people() -> list[str]:
        if not found:
            found.append(find_people(as_rows_read(note).strip()))  # as `found_names` finds them
        return found[0]

    parts = NoteParts()
    _cut_parts(note, parts, people)
    return parts


def _cut_parts(note: str, parts: NoteParts, people: Callable[[], Sequence[str]]) -> None:
    """The note (its rows read) cut into `parts`; `people`: the handles the note names."""
    text = note.strip()
    if not text:
        return
    reading = _Reading(people=people)
    parts.verdict, text = rated_verdict(unquoted(text))
    text = _take_marked_verdict(text, parts, reading)
    text = without_shortcodes(text)  # Slack's `:warning:` marks a line; it is not the note's words
    for index, section in enumerate(layout(text, vocabulary())):
        if section.kind is None:
            _read_prose(section, parts, reading, opening=index == 0)
        else:
            _read_labelled(section, parts, reading)
    _take_closing_verdict(parts, reading)
    if parts.verdict is None and (said := sentences(text)):
        _take_closing_clause(said[-1], parts)  # the note's last sentence, inside a labelled section
    if not parts.highlights:
        parts.highlights = list(reading.body)
    _take_warnings(parts)
    parts.why = _why_line(parts, reading, text)
    parts.highlights = dedupe(parts.highlights)
    parts.caveats = dedupe(parts.caveats)


def _take_warnings(parts: NoteParts) -> None:
    """A focus point that ends with a warning (`…，提醒跨版本验证的必要性`) also names a caveat."""
    for item in parts.highlights:
        if any(word in item for word in _WARNING_WORDS):  # a clause is a piece of its item
            parts.caveats.extend(c for c in clauses(item) if WARNING_CLAUSE_RE.match(c))


def _take_marked_verdict(text: str, parts: NoteParts, reading: _Reading) -> str:
    """A verdict an emoji marks (`✅ 建议看（做 LoRA 路由的同学）`, `:zzz: 可跳过`) is the verdict
    wherever it stands, its bracketed readers the audience; the note is read on without them."""
    if parts.verdict is not None:
        return text
    marked = marked_verdict(text)
    if marked is None:
        return text
    parts.verdict = marked.verdict
    parts.audience = marked.readers
    reading.verdict_marked = True
    return marked.rest


def unquoted(text: str) -> str:
    """The note without Markdown quote markers (`> `): they must hide no verdict or label."""
    return QUOTE_MARKER_RE.sub("", text) if ">" in text else text


def _take_closing_verdict(parts: NoteParts, reading: _Reading) -> None:
    """A verdict at the end of the note (`结论：值得一读`, `Overall, worth a look.`)."""
    if parts.verdict is None and reading.body:
        verdict = _verdict_sentence(reading.body[-1], closing=True)
        if verdict:
            parts.verdict = verdict
            reading.body.pop()
        else:
            _take_closing_clause(reading.body[-1], parts)


def _take_closing_clause(sentence: str, parts: NoteParts) -> None:
    """A verdict said in a clause of the closing sentence, after an opinion or before an
    alternative (`这个写法很妙 tbh, def read this if u touch compile passes`); the sentence
    stays the note's content."""
    for clause in split_top_level(sentence, ["，", ",", "；", ";"]):
        clause = clean(clause.rstrip("，,；;"))
        cue = reading_cue(clause)
        said = _verdict_sentence(clause, closing=True) or (cue.verdict if cue else None)
        if said:
            parts.verdict = said
            if cue is not None and cue.for_readers:
                parts.audience = parts.audience or clause
            return


def _why_line(parts: NoteParts, reading: _Reading, text: str) -> str | None:
    """The labelled why, else the first body sentence, else the heads of the focus points."""
    if reading.why_label:
        return reading.why_label
    if reading.body:
        return reading.body[0]
    if not parts.highlights:
        return None
    if has_han(text):
        return f"{reading.enum_intro or '重点'}：" + "；".join(_head(h) for h in parts.highlights)
    return f"{reading.enum_intro or 'Focus'}: " + "; ".join(_head(h) for h in parts.highlights)


def _read_labelled(section: Section, parts: NoteParts, reading: _Reading) -> None:
    """A section whose label says what it holds, up to a sentence that is plainly another part."""
    if not section.items and section.kind in ("focus", "audience", "caveats", "why"):
        own, rest = _own_text(section.text, section.kind)
        if rest:
            _read_labelled(Section(section.kind, own, section.label), parts, reading)
            _read_prose(Section(None, rest), parts, reading, opening=False)
            return
    items = section.items or _section_items(section.text, lists=section.kind == "focus")
    read = _LABELLED.get(section.kind or "")
    if read is not None:
        read(section, items, parts, reading)


def _labelled_why(section: Section, items: list[str], parts: NoteParts, reading: _Reading) -> None:
    if section.text and reading.why_label is None:
        reading.why_label = _tidy(section.text)


def _labelled_focus(section: Section, items: list[str], parts: NoteParts, reading: _Reading) -> None:
    parts.highlights.extend(t for t in (_tidy(i) for i in items) if t)
    if section.lead and reading.enum_intro is None and not section.items:
        reading.enum_intro = section.lead


def _labelled_audience(section: Section, items: list[str], parts: NoteParts, reading: _Reading) -> None:
    if parts.audience is None and items:
        parts.audience = "；".join(items) if section.items else _tidy(section.text)


def _labelled_caveats(section: Section, items: list[str], parts: NoteParts, reading: _Reading) -> None:
    parts.caveats.extend(t for t in (_tidy(i) for i in items) if t)


def _only_refs(sentence: str) -> bool:
    """A sentence that only points elsewhere: `See PR #1 and issue 2.`, `相关：PR 3`."""
    if "#" not in sentence and "github.com" not in sentence and not TWO_DIGITS_RE.search(sentence):
        return False  # a URL holds `github.com`, `#1` a `#`, `PR 12` two digits
    rest = REF_RE.sub(" ", WORD_REF_RE.sub(" ", REPO_REF_RE.sub(" ", GITHUB_URL_RE.sub(" ", sentence))))
    rest = RFC_REF_RE.sub(" ", rest)
    if rest == sentence:
        return False
    rest = REFS_WORDS_RE.sub(" ", rest)
    return not _WORD_CHAR_RE.search(rest)  # punctuation or a mark (`🔗 https://…`) is no content


def _labelled_verdict(section: Section, _items: list[str], parts: NoteParts, reading: _Reading) -> None:
    """`结论：值得一读`, `推荐指数：高`, `【推荐】强烈推荐。…`: a labelled verdict wins over one in prose."""
    readers = verdict_for_readers(section.text)  # `推荐：必读（跑 Mixtral 的同学）`
    if readers is not None:
        verdict, audience, rest = readers
        parts.audience = parts.audience or audience
    else:
        verdict, rest = _labelled_verdict_text(section)
    # `*结论* 💤 可跳过，除非…`: the marked words are the verdict, not the label or what follows them.
    if not reading.verdict_labelled and not reading.verdict_marked:
        parts.verdict = verdict
        reading.verdict_labelled = True
    if clean(rest):
        _read_prose(Section(None, clean(rest)), parts, reading, opening=False)


# What each kind of labelled section adds to the parts.
_LABELLED: dict[str, Callable[[Section, list[str], NoteParts, _Reading], None]] = {
    "verdict": _labelled_verdict,
    "why": _labelled_why,
    "focus": _labelled_focus,
    "audience": _labelled_audience,
    "caveats": _labelled_caveats,
}


def _labelled_verdict_text(section: Section) -> tuple[str, str]:
    """The verdict a labelled section states and the text after it (read as prose)."""
    vocab = vocabulary()
    value, said, after_first = _first_sentence(section.text)
    if section.label and vocab.verdict_re.fullmatch(section.label):
        return said or section.label, after_first if said else section.text
    if said and vocab.verdict_re.fullmatch(said):
        return said, after_first
    if value and _is_short(value, 12, 4):
        return f"{section.label}：{value}", after_first
    return _first_clause(section, value)


def _first_clause(section: Section, value: str | None) -> tuple[str, str]:
    """A long sentence's short opening clause is the verdict (`结论：可以扫一眼，PR 已关闭未合并`)."""
    clause = re.match(r"([^，,；;。]+)[，,；;]\s*", value or "")
    if section.label and clause and _is_short(clause.group(1), 12, 4):
        return f"{section.label}：{clause.group(1)}", section.text[clause.end() :]
    return section.label or value or "", section.text


def _first_sentence(text: str) -> tuple[str, str | None, str]:
    """A labelled section's first sentence, the verdict it states (if any), the text after it."""
    found = sentences(text)
    if not found:
        return "", None, text
    value = _tidy(found[0])
    said = _verdict_sentence(value, closing=True) if value else None
    return value, said, text[text.find(found[0]) + len(found[0]) :]


def _own_text(text: str, kind: str) -> tuple[str, str]:
    """The section's text and what follows it: `风险：A。适合做 X 的人。` ends before `适合`."""
    found = sentences(text)
    for sentence in found[1:]:
        other = (
            _verdict_sentence(sentence, closing=False)
            or len(MARKER_RE.findall(sentence)) >= 2
            or find_people(sentence)
            or _only_refs(sentence)
            or (kind != "audience" and _is_audience(sentence))
            or (kind != "caveats" and _is_caveat(sentence))
        )
        if other:
            at = text.find(sentence)
            return text[:at].strip(), text[at:].strip()
    return text, ""


def _section_items(text: str, lists: bool = False) -> list[str]:
    """Items of a labelled section without list lines: marked (①②, 一是), lines, `；`, or one piece."""
    text = text.strip()
    if not text:
        return []
    marked = _marked_items(text)
    if marked is not None:
        return marked
    return _numbered(text)[1] or _lines(text) or _sentence_items(text, lists)


def _lines(text: str) -> list[str]:
    """The lines of a text when it has two or more that are not blank, else none."""
    lines = [c for c in (clean(line) for line in text.split("\n")) if c]
    return lines if len(lines) > 1 else []


def _sentence_items(text: str, lists: bool) -> list[str]:
    """A one-line section cut at sentence ends (and `；` in a list of focus points)."""
    seps = ["；", ";", "。", ". "] if lists else ["。", ". "]
    pieces = [t for t in (_tidy(p) for p in split_top_level(text, seps)) if t]
    if lists and len(pieces) == 1:
        listed = _split_list(pieces[0])
        if len(listed) > 1:
            return listed  # `看点：A、B，以及 C`
    return pieces or [clean(text)]


def _marked_items(text: str) -> list[str] | None:
    """The items of a text with two or more markers (一是…二是…, (1)…(2)…), else None."""
    first = MARKER_RE.search(text)
    if first is None or not MARKER_RE.search(text, first.end()):
        return None
    return _split_markers(text[first.start() :])


def _read_prose(section: Section, parts: NoteParts, reading: _Reading, opening: bool) -> None:
    """Plain sentences: verdict, caveats, audience, enumerations; the rest is body for the why-line."""
    text = section.lead if section.items else section.text
    all_sentences = sentences(text or "")
    last = len(all_sentences) - 1
    for index, sentence in enumerate(_after_opening_verdict(all_sentences, section, parts, opening)):
        body = _read_sentence(sentence, parts, reading) if sentence else None
        if body is not None and not (section.items and index == last and _announces_list(body)):
            reading.body.append(body)  # (the last sentence before list lines may be its lead-in)
    if section.items:
        _take_listed(section.items, all_sentences, parts, reading)


def _take_listed(items: list[str], before: list[str], parts: NoteParts, reading: _Reading) -> None:
    """List lines, with the last sentence before them as their lead-in."""
    _take_items(items, clean(before[-1]) if before else None, parts, reading, listed=True)


def _after_opening_verdict(found: list[str], section: Section, parts: NoteParts, opening: bool) -> list[str]:
    """The sentences to read: the note's opening verdict goes to the parts, the rest of its
    sentence (possibly nothing) is read."""
    if not found or not opening or parts.verdict is not None:
        return found
    alone = len(found) == 1 and not section.items
    return [_take_opening_verdict(found[0], parts, alone), *found[1:]]


def _announces_list(sentence: str) -> bool:
    """The last sentence before list lines, when it is a lead-in or too short to be a why-line."""
    return _is_lead_in(sentence) or _is_short(sentence, 16, 6)


def _take_opening_verdict(sentence: str, parts: NoteParts, alone: bool) -> str:
    """The note's opening verdict goes to the parts; what follows it in the sentence is left."""
    verdict, rest = _opening_verdict(sentence, alone=alone)
    if not verdict:
        return sentence
    parts.verdict = verdict
    return rest


def _read_sentence(sentence: str, parts: NoteParts, reading: _Reading) -> str | None:
    """One prose sentence into the part it plainly is; the body sentence it leaves, if any."""
    if _only_refs(sentence):
        return None  # `See PR #1 and issue 2`: the refs hold it
    sentence = _take_rated_clause(sentence, parts)
    if not sentence or _take_verdict(sentence, parts):
        return None
    if _is_caveat(sentence) and not MARKER_RE.search(sentence):
        parts.caveats.append(_caveat_text(sentence))
        return None
    if _is_audience(sentence):
        parts.audience = parts.audience or _tidy(sentence)
        return None
    sentence = _take_audience_tail(sentence, parts)
    items, intro = _enumeration(sentence, reading.people)
    if items:
        _take_items(items, intro, parts, reading)
        return None
    return _tidy(sentence) or None


def _rated(sentence: str) -> bool:
    """Whether a sentence holds a rating; one without what any holds is spared the pattern."""
    return any(mark in sentence for mark in _RATING_MARKS) and RATING_RE.search(sentence) is not None


def _take_rated_clause(sentence: str, parts: NoteParts) -> str:
    """`打分 6/10，做 spec decode 的有空再看`: a clause that is a rating (after a verdict label, no
    colon) is the verdict, unless the rest says one in words (`打分 8/10，建议精读`); what is
    left of the sentence is read on."""
    if not _rated(sentence):
        return sentence
    first, *others = split_top_level(sentence, ["，", ",", "；", ";"])
    rating = RATING_RE.search(first)
    if rating is None or clean(first[rating.end() :]).strip("。."):
        return sentence
    head = clean(first[: rating.start()])
    if head and vocabulary().label_kind(head) != "verdict":
        return sentence
    rest = clean("".join(others).lstrip("，,；;"))
    said = _verdict_sentence(rest, closing=True) if rest else None
    parts.verdict = parts.verdict or said or clean(first)
    return "" if said else rest


def _take_verdict(sentence: str, parts: NoteParts) -> bool:
    """A verdict sentence (with its readers: `Must read for backend maintainers`) is taken."""
    said_for = vocabulary().verdict_re.match(sentence)
    if said_for and VERDICT_FOR_RE.match(sentence, said_for.end()):
        parts.verdict = parts.verdict or said_for.group(0)
        parts.audience = parts.audience or _tidy(sentence)
        return True
    said = _verdict_sentence(sentence, closing=False)
    if said:
        parts.verdict = parts.verdict or said  # a verdict said again is not a why-line either
        return True
    return _take_cue(sentence, parts)


def _take_cue(sentence: str, parts: NoteParts) -> bool:
    """`Read this if you own the scheduler.`, `只有用 X 的人需要看`: the verdict and its readers;
    whether the cue is the whole sentence (else the sentence is still the note's content)."""
    cue = reading_cue(sentence)
    if cue is None:
        return False
    parts.verdict = parts.verdict or cue.verdict
    if cue.for_readers:  # the readers are the cue's sentence, or its clauses in a longer one
        parts.audience = parts.audience or (_tidy(sentence) if cue.whole else cue.verdict)
    return cue.whole


def _take_audience_tail(sentence: str, parts: NoteParts) -> str:
    """A trailing `，对…有直接参考价值` clause is the audience of a longer sentence."""
    tail = split_top_level(sentence, ["，", ","])
    if len(tail) > 1 and _is_audience(clean(tail[-1])):
        parts.audience = parts.audience or clean(tail[-1])
        return clean("".join(tail[:-1]))
    return sentence


def _take_items(
    items: list[str], intro: str | None, parts: NoteParts, reading: _Reading, listed: bool = False
) -> None:
    """Enumerated items go where their lead-in says (`有两个坑：` → caveats), else to the focus points."""
    kind = _lead_kind(intro) if intro else None
    items = [t for t in (_tidy(i) for i in items) if t]
    if kind == "caveats":
        parts.caveats.extend(items)
    elif kind == "audience":
        parts.audience = parts.audience or "；".join(items)
    elif kind != "focus" and names_only(items):
        reading.body.append(name_listing(items, intro))  # who or what, not points to look at
    else:
        parts.highlights.extend(items)
        _take_intro(intro, reading, listed)


def _take_intro(intro: str | None, reading: _Reading, listed: bool) -> None:
    """A list's lead-in: the first that only announces the list names it, a real sentence is body
    (unless the list is on lines of its own: the prose reader has that sentence already)."""
    if not intro:
        return
    if not _is_lead_in(intro):
        if not listed:
            reading.body.append(intro)
    elif reading.enum_intro is None:
        reading.enum_intro = intro


def _lead_kind(intro: str) -> str | None:
    """What a lead-in announces: `有两个坑` / `Two gotchas` → caveats, `谁该看` → audience, else None."""
    vocab = vocabulary()
    key = _AS_FOLLOWS_RE.sub("", clean(intro)).strip()
    kind = vocab.label_kind(key) or vocab.label_kind(COUNT_PREFIX_RE.sub("", key))
    return kind if kind in ("caveats", "audience") else None


def _is_lead_in(intro: str) -> bool:
    """A lead-in that only announces a list (`重点关注三点`, `看点如下`, `Three things to look at`)."""
    vocab = vocabulary()
    key = clean(intro)
    return bool(
        ENUM_INTRO_RE.match(key + "：")
        or COUNT_LEAD_RE.match(key)
        or vocab.enumeration_lead_re.search(key)
        or vocab.label_kind(key) == "focus"
        or LEAD_SHAPE_RE.search(key)
    )


def _strip_period(text: str) -> str:
    """English items lose their closing full stop like Chinese ones lose `。`."""
    return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text


def _opening_verdict(sentence: str, alone: bool = False) -> tuple[str | None, str]:
    """A verdict opening the note (`值得精读，…`, `Must read. …`, `五颗星。`), and the rest of the sentence."""
    for pattern in (vocabulary().verdict_re, RATING_RE):
        said = _said_first(pattern, sentence)
        if said is not None:
            return said
    first = clean(split_top_level(sentence, ["，", ",", "——", " — ", " - "])[0])
    for piece in dict.fromkeys([sentence, first]):
        verdict = _verdict_sentence(piece, closing=False) or _verdict_word(piece, alone)
        if verdict:
            return verdict, _tidy(sentence[len(piece) :].lstrip(" —-"))
    return None, sentence


def _said_first(pattern: re.Pattern[str], sentence: str) -> tuple[str, str] | None:
    """A verdict word (`值得精读`) or rating (`★★★★☆`) the sentence opens with, standing alone
    (punctuation after it, not more words), and the rest of the sentence."""
    match = pattern.match(sentence)
    if match is None:
        return None
    end = match.end()
    if pattern is RATING_RE:
        alone = end == len(sentence) or not sentence[end].isalnum()
    else:
        alone = end == len(sentence) or VERDICT_END_RE.match(sentence, end) is not None
    return (match.group(0), _tidy(sentence[end:])) if alone else None


def _verdict_word(piece: str, alone: bool) -> str | None:
    """A short opening line with a verdict's word is the verdict even in words we don't list."""
    if alone or not _is_short(piece, 6, 3) or CODE_OR_NUMBER_RE.search(piece):
        return None
    return _tidy(piece) if vocabulary().verdict_stem_re.search(piece) else None


def _verdict_sentence(sentence: str, closing: bool) -> str | None:
    """The verdict a short sentence states (`力荐`, `总之值得一读` → 值得一读), else None."""
    vocab = vocabulary()
    sentence = clean(_strip_period(sentence))
    if RATING_RE.fullmatch(sentence):
        return sentence
    limit_cjk, limit_words = (16, 6) if closing else (8, 4)
    if not _is_short(sentence, limit_cjk, limit_words):
        return None
    match = vocab.verdict_re.search(sentence)
    if match is None:
        return None
    rest = clean(sentence[: match.start()] + sentence[match.end() :])
    # Closing words may be a little longer (`总的来说值得一读`); elsewhere only a word or two
    # (`短评：力荐`), so `测试很一般` stays a sentence.
    room_cjk, room_words = (6, 3) if closing else (2, 1)
    if _is_short(rest, room_cjk, room_words) and not CODE_OR_NUMBER_RE.search(rest):
        return match.group(0)
    return None


def _is_short(text: str, cjk: int, words: int) -> bool:
    if len(text) <= min(cjk, words):
        return True  # too short to hold more characters or words than either limit
    if has_han(text):
        return len("".join(text.split())) <= cjk  # `str.split` drops what `\s` matches
    return len(text.split()) <= words


def _enumeration(sentence: str, people: Callable[[], Sequence[str]] = tuple) -> tuple[list[str], str | None]:
    """Focus points in a sentence, with the lead-in before them (if any)."""
    marked = _marked_items(sentence)
    if marked is not None:
        first = MARKER_RE.search(sentence)
        assert first is not None
        return marked, clean(sentence[: first.start()]) or None
    intro, numbered = _numbered(sentence)
    if numbered:
        return numbered, intro
    halves = _split_colon(sentence)
    if len(halves) >= 2:
        intro = clean(halves[0])
        if intro in people():
            return [], None  # `bob: …` quotes a person, it does not announce a list
        items = _split_list("".join(halves[1:]))
        if len(items) >= 2:
            return items, intro
    return [], None


def _split_colon(sentence: str) -> list[str]:
    """Cut at top-level colons that end a lead-in: not `https://`, not `12:30`."""
    pieces = split_top_level(sentence, ["：", ":"])
    merged: list[str] = []
    for piece in pieces:
        if merged and merged[-1].endswith(":") and (piece.startswith("//") or piece[:1].isdigit()):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged
