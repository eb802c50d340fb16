"""What a follow-up answer may quote: every clause of the note with the part it belongs to
(verdict, why, focus, audience, caveat, how-to, numbers…: the reader's parts, a line's or
sentence's label, or the label above a list) and every metadata fact as a line of its own.

The scorer (`chatbot.answers.retrieval`) ranks these against the question; nothing here reads
the question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from chatbot.digest import Entry, sentences
from chatbot.digest.cues import reading_cue
from chatbot.digest.note_labels import vocabulary
from chatbot.digest.rows import QA_RE, TABLE_ROW_RE, note_rows
from chatbot.text import FOLDS_TO_ASCII, has_han, without_shortcodes
from chatbot.yamlfast import load_yaml


@dataclass(frozen=True, slots=True)
class Candidate:
    """Something the answer may say: a clause of the note with the parts it belongs to, or a fact
    of the metadata (`fact`: said as a line of its own, not quoted)."""

    parts: tuple[str, ...]
    text: str
    source: str
    short: str = ""
    fact: bool = False
    about: str = ""  # the label it was written under ("Breaking", "Migration"): matched, not quoted


# A label opening a line or sentence: `【风险】`, `[Risks]`, `注意：`, `**Gotcha:**`.
LABEL_RE = re.compile(
    r"^(?:\*?([^*\s:：](?:[^*\n:：]{0,13}[^*\s:：])?)\*\s+(?=\S)|\**(?:【([^】]{1,14})】|\[([^\]]{1,20})\]|([^：:。，,\s`*][^：:。，,`]{0,16}?)\**\s*[:：](?!//)\**)\s*)"
)
BOLD_LINE_RE = re.compile(r"\*{1,2}[^*\s][^*\n]{0,14}\*{1,2}")  # `*要点*` alone on its line: a label
# List and heading marks at the start of a line: `- `, `* `, `## `, `1. `, `(2)`, `③`, `> `.
MARK_RE = re.compile(r"^\s*(?:[-*•+>]\s+|#{1,6}\s*|\d{1,2}[.)、]\s*|[（(]\d{1,2}[)）]\s*|[①-⑩]\s*)+")
_PART_OF_LABEL = {
    "verdict": "verdict",
    "why": "why",
    "focus": "focus",
    "audience": "audience",
    "caveats": "caveat",
}
# A handle right before what people do in a review ("ywang96 在 review 中指出"), named or not.
PERSON_ACTS_RE = re.compile(
    r"(?<![\w/.@-])[A-Za-z][\w-]{2,38}\s*(?:在\s*review|在评审|认为|指出|建议|提出|提醒|发现|解释|质疑|回复|"
    r"argued|suggested|pointed out|noted|asked)"
)
# Whoever a role phrase names, handle or full name: "co-authored with Cyrus Leung", "reported by x".
ROLE_NAME_RE = re.compile(
    r"(?i:co-?authored with|reported by|filed by|approved by|reviewed by|suggested by|raised by|thanks to|"
    r"authored by)\s+@?[A-Za-z][\w-]+|(?:感谢|谢谢)\s*@?[A-Za-z][\w-]+"
)
# "Nicolò Lucchesi (NickLucche)": a full name with the handle after it.
NAMED_HANDLE_RE = re.compile(r"\b[A-Z][\w.'-]+(?: [A-Z][\w.'-]+)* \([A-Za-z0-9][\w-]{1,38}\)")
REVIEWED_BY_RE = re.compile(
    r"(?i:reviewed by|approved by|reviewers? (?:were|was|is|are)|\w+ \(\w[\w-]*\) (?:reviewed|approved|pushed back))|评审人|审阅人"
)
REVIEW_RE = re.compile(
    r"review(?:ed|ers?|s|ing)?\b|(?<![\w-])r=@?[A-Za-z]|审阅|审查|评审|的评价|approv|批准|已批|批了|批的|点头|LGTM|sign(?:ed)?[- ]off|pushed back",
    re.I,
)
REVIEWER_RE = re.compile(
    r"reviewers?\s*(?:认为|指出|建议|要求|坚持|提出|argued|asked|insisted|suggested|pointed)|评审(?:认为|指出|建议|意见)",
    re.I,
)


@lru_cache(maxsize=1)
def _own_labels() -> dict[str, str]:
    """Labels the digest reader names no part for (`TL;DR`, `How to enable`), by folded text."""
    labels = priors_file()["labels"]
    return {_folded(str(word)): str(part) for part, words in labels.items() for word in words}


@lru_cache(maxsize=1)
def priors_file() -> dict[str, Any]:
    """`data/kind_priors.yaml`, read once: its labels here, its kinds for the scorer."""
    text = resources.files("chatbot.answers").joinpath("data/kind_priors.yaml").read_text(encoding="utf-8")
    return dict(load_yaml(text))


@dataclass(frozen=True)
class KindPrior:
    """What one kind of question favours: parts (weights) and clause cues (pattern, weight)."""

    parts: dict[str, float]
    cues: tuple[tuple[re.Pattern[str], float], ...]


@lru_cache(maxsize=1)
def kind_priors() -> dict[str, KindPrior]:
    """The kinds of `data/kind_priors.yaml`, compiled once: the scorer's weights, and the state
    kind's cues for the summary (a PR's fate is not its summary)."""
    data = priors_file()["kinds"]
    return {
        str(kind): KindPrior(
            {str(p): float(w) for p, w in (row.get("parts") or {}).items()},
            tuple((re.compile(str(p)), float(w)) for p, w in (row.get("cues") or {}).items()),
        )
        for kind, row in data.items()
    }


def _folded(label: str) -> str:
    return " ".join(label.casefold().split())


def _label(line: str) -> tuple[str | None, str]:
    """The part a line's or sentence's label announces, and the text after the label."""
    match = LABEL_RE.match(line)
    if match is None:
        return None, line
    label = next(g for g in match.groups() if g)
    own = _own_labels().get(_folded(label))
    if own == "tldr" and _verdict_only(line[match.end() :]):
        return "verdict", line[match.end() :]  # "一句话：建议精读。" closing a note is its verdict
    if own is not None:
        return own, line[match.end() :]
    kind = vocabulary().label_kind(label)
    if kind is None or kind not in _PART_OF_LABEL:
        # An unknown label keeps its words, without the Markdown around it ("**Example:** …").
        return (
            ("note", line[match.end() :])
            if kind == "refs"
            else (None, f"{label.strip('* ')}: {line[match.end() :]}")
        )
    return _PART_OF_LABEL[kind], line[match.end() :]


def _verdict_only(text: str) -> bool:
    """Whether a labelled line says only a verdict: short, and a verdict's words in it."""
    return len(text.strip(" 。.!！")) <= SHORT and bool(_verdict_cue().search(text))


@lru_cache(maxsize=1)
def _verdict_cue() -> re.Pattern[str]:
    return re.compile("|".join(str(p) for p in priors_file()["kinds"]["verdict"]["cues"]))


def _line_shaped(note: str) -> bool:
    """Whether most of a note's lines are table rows or Q/A lines."""
    lines = [line for line in note.split("\n") if line.strip()]
    shaped = sum(1 for line in lines if TABLE_ROW_RE.fullmatch(line.strip()) or QA_RE.match(line))
    return shaped * 2 > len(lines)


def note_clauses(note: str) -> list[tuple[str, str, bool, str]]:
    """(part, sentence, own, about) for every sentence of the note: the part its own label
    announces (`own`), or the last label's before it in the same paragraph ("Watch out: A. B." —
    B is a caveat too), or the bare label line's above a list; else `note`. `about`: the
    question a Q/A line answers."""
    out: list[tuple[str, str, bool, str]] = []
    section: str | None = None
    heading = ""  # a bare label line naming no part ("- **现象**"): the list under it is about it
    for raw, about in note_rows(note):
        listed = bool(MARK_RE.match(raw))
        unmarked = MARK_RE.sub("", without_shortcodes(raw)).strip()
        line = unmarked.strip("*").strip()
        heads = _heads(line, unmarked)
        if heads is not None:
            section, heading = heads
            continue
        under = about or (heading if listed else "")
        out.extend((*c, under) for c in _labelled_sentences(line, section if listed else None))
    return out


def _heads(line: str, unmarked: str) -> tuple[str | None, str] | None:
    """(part, label) when a line heads the list under it: a blank line ends the last one (both
    none), a bare label line names its part, or its words when it names none; else None."""
    if not line:
        return None, ""
    labelled = f"{line}：" if BOLD_LINE_RE.fullmatch(unmarked) else line
    part, rest = _label(labelled)
    if part is not None and not rest.strip():
        return part, ""
    label = _bare_label(labelled) if part is None else ""
    return (None, label) if label else None


def _bare_label(line: str) -> str:
    """The words of a line that is only a short label naming no part ("现象：", "**Fix**")."""
    match = LABEL_RE.match(line)
    if match is None or line[match.end() :].strip():
        return ""
    return _short(next(g for g in match.groups() if g).strip("* "))


def _labelled_sentences(line: str, section: str | None) -> list[tuple[str, str, bool]]:
    """The sentences of one line, each with the part of the label it or a sentence before opens."""
    out: list[tuple[str, str, bool]] = []
    current = section
    for sentence in sentences(line):
        part, rest = _label(sentence)
        if part is None and _for_whom(sentence):
            part = "audience"  # "Read it if you touch spec decode": its readers, whatever came before
        current = part or current
        if rest.strip():
            text = rest.rstrip(".。!！;；")
            own = part is not None and part != "note"
            out.append((current or "note", text, own))
            out.extend((current or "note", item, own) for item in _items(text))
    return out


# An item of a list written inline: `①…②…`, `(1)…(2)…`, `（1）…`.
ITEM_RE = re.compile(r"\s*(?:[①-⑩]|[（(]\d{1,2}[)）])\s*")


def _items(text: str) -> list[str]:
    """The items of a list written inline in one sentence ("①只支持 H100；②默认关闭"), each a
    candidate of its own beside the whole sentence; none when the sentence is no such list."""
    pieces = ITEM_RE.split(text)
    if len(pieces) < 3:
        return []
    return [p.strip(" ；;，,。") for p in pieces[1:] if len(p.strip(" ；;，,。")) >= SHORT_CLAUSE]


def _structured(entry: Entry) -> list[Candidate]:
    """The parts the digest reader found: verdict, why line, focus points, audience, caveats.
    The rest of the verdict's own sentence ("可以一读，但不急") is the verdict, not a point."""
    verdict = _verdict_sentence(entry)
    found = _points_and_caveats(entry, verdict)
    if entry.why and not _of_verdict(entry.why, verdict):
        found.append(Candidate(("why",), entry.why, "why"))
    if entry.audience:
        found.append(Candidate(("audience",), entry.audience, "audience"))
    if entry.verdict:
        found.append(Candidate(("verdict",), _qualified(entry, verdict), "verdict"))
    return found


def _qualified(entry: Entry, verdict: str) -> str:
    """The verdict with its condition when its sentence is short ("Skip unless you serve
    multi-LoRA", "可以一读，但不急"), else the verdict alone."""
    alone = entry.verdict or ""
    if verdict:  # the note opens with it
        return verdict if len(verdict) <= len(alone) + SHORT else alone
    own = _holding_verdict(entry, sentences(entry.note)).rstrip(".。!！;；")
    return own if own and len(own) <= len(alone) + QUALIFIER else alone


def _holding_verdict(entry: Entry, said: Sequence[str]) -> str:
    """The first of these sentences that holds the verdict's words."""
    alone = entry.verdict or ""
    return next((s for s in said if alone and alone in s), "")


QUALIFIER = 48  # a verdict's sentence at most this much longer is the verdict with its condition


def _points_and_caveats(entry: Entry, verdict: str) -> list[Candidate]:
    """The focus points (not the verdict's qualifier) and the caveats; a caveat cut from a focus
    point ("…，提醒跨版本验证的必要性") is quoted with its context."""
    found = [
        Candidate(("focus",), h, f"highlights[{i}]")
        for i, h in enumerate(entry.highlights)
        if not _of_verdict(h, verdict)
    ]
    for i, caveat in enumerate(entry.caveats):
        host = next((n for n, c in enumerate(found) if caveat in c.text and caveat != c.text), None)
        if host is None:
            found.append(Candidate(("caveat",), caveat, f"caveats[{i}]"))
        else:
            found[host] = Candidate(("focus", "caveat"), found[host].text, f"caveats[{i}]")
    return found


def _verdict_sentence(entry: Entry) -> str:
    """The note's first sentence when it opens with the verdict, else nothing."""
    if not entry.verdict:
        return ""
    first = next(iter(sentences(entry.note)), "").rstrip(".。!！;；")
    return first if first.startswith(entry.verdict) else ""


def _of_verdict(point: str, verdict: str) -> bool:
    """Whether a point is only the verdict's qualifier ("但不急" of "可以一读，但不急")."""
    return bool(verdict) and point in verdict and len(point) < SHORT


def _people_parts(entry: Entry, text: str) -> tuple[str, ...]:
    """`people` for a clause naming one of the entry's people (besides the author), `reviewers`
    too when it speaks of review."""
    named = _names_someone(entry, text)
    if _may_speak_of_review(text) and _of_review(text, named):
        return ("people", "reviewers")
    return ("people",) if named else ()


def _names_someone(entry: Entry, text: str) -> bool:
    """One of the entry's people besides its author, or anyone a person's verb or role names."""
    if any(p in text for p in entry.people if p != entry.author):
        return True
    return _names_a_handle(text) or (_may_name_a_role(text) and ROLE_NAME_RE.search(text) is not None)


def _names_a_handle(text: str) -> bool:
    """A handle right before what people do in a review, or a full name with its handle."""
    acts = _holds_any(text, PERSON_ACTS_WORDS + PERSON_ACTS_WORDS_EN) and PERSON_ACTS_RE.search(text)
    return bool(acts or (" (" in text and NAMED_HANDLE_RE.search(text)))


def _of_review(text: str, named: bool) -> bool:
    """Who reviewed it, or review spoken of with a person named (or the reviewers)."""
    return bool(
        REVIEWED_BY_RE.search(text) or (REVIEW_RE.search(text) and (named or REVIEWER_RE.search(text)))
    )


# What a match of each pattern above holds: a clause holding none (most) is spared the patterns,
# which `re` tries at every character (the case-insensitive ones cannot skip ahead). Every
# candidate of a first answer is asked (bench/scale.py's follow-up answer row).
PERSON_ACTS_WORDS = ("在", "认为", "指出", "建议", "提出", "提醒", "发现", "解释", "质疑", "回复")
PERSON_ACTS_WORDS_EN = ("argued", "suggested", "pointed out", "noted", "asked")
REVIEW_WORDS = ("审阅", "审查", "评审", "批准", "已批", "批了", "批的", "点头")  # and `评审人`, `审阅人`
REVIEW_WORDS_FOLDED = ("review", "r=", "approv", "lgtm", "sign", "pushed back")  # any case
ROLE_WORDS = ("感谢", "谢谢")
ROLE_WORDS_FOLDED = ("authored with", " by", "thanks to")  # any case


def _holds_any(text: str, words: Sequence[str]) -> bool:
    return any(word in text for word in words)


def _may_speak_of_review(text: str) -> bool:
    """Whether a clause may match `REVIEW_RE` (every match of `REVIEWED_BY_RE` holds one of its
    words too): one of its words, the English ones in any case as `re.I` reads them."""
    if _holds_any(text, REVIEW_WORDS) or FOLDS_TO_ASCII.intersection(text):
        return True
    return _holds_any(text.lower(), REVIEW_WORDS_FOLDED)


def _may_name_a_role(text: str) -> bool:
    """Whether a clause may match `ROLE_NAME_RE`: one of its words, the English ones in any case
    as `re.I` reads them."""
    if _holds_any(text, ROLE_WORDS) or FOLDS_TO_ASCII.intersection(text):
        return True
    return _holds_any(text.lower(), ROLE_WORDS_FOLDED)


def entry_candidates(entry: Entry, words: Mapping[str, str]) -> list[Candidate]:
    """Every candidate of the entry: its parts, the rest of its sentences, its title, its facts."""
    # A note of table rows or Q/A lines is read line by line here: the reader's sentences cut
    # across its cells and questions.
    merged = {} if _line_shaped(entry.note) else _parts_found(entry)
    held = list(merged)
    for i, (part, text, own, about) in enumerate(note_clauses(entry.note)):
        _add_sentence(entry, merged, held, (i, part, text, about), own)
    merged.setdefault(entry.title, Candidate(("title",), entry.title, "title"))
    return _without_bare_headings(list(merged.values())) + _facts(entry, words)


def _add_sentence(
    entry: Entry,
    merged: dict[str, Candidate],
    held: Sequence[str],
    sentence: tuple[int, str, str, str],
    own: bool,
) -> None:
    """A sentence of the note: its own label's part given to the reader's parts it is in or
    holds ("My concern: A, and B"), a label carried from a sentence before only to the reader's
    part it is in; and what it says besides the parts inside it ("…不到 4%" before "对…有帮助") as a
    candidate of its own."""
    i, part, text, about = sentence
    same = _parts_in(text, held)
    for h in _labelled_by(text, same, own):
        merged[h] = _with_part(merged[h], part)
    about = about or _short(_unknown_label(text))
    _about(merged, same, about)
    rest = _rest(text, same and [*same, *(h for h in held if h in text)])
    if rest and (rest == text or not _said(rest, merged)):
        merged.setdefault(
            rest, Candidate((part, *_people_parts(entry, rest)), rest, f"note[{i}]", about=about)
        )


def _about(merged: dict[str, Candidate], parts: Sequence[str], label: str) -> None:
    """The reader's parts under a label that names no part, with that label's words."""
    for h in parts if label else ():
        merged[h] = replace(merged[h], about=label)


def _short(label: str) -> str:
    """A label that names a topic ("为什么", "Migration"), not a sentence's opening words
    ("重点关注三个设计决策")."""
    return label if len(label.split()) <= 2 and (len(label) <= 6 or not has_han(label)) else ""


def _unknown_label(text: str) -> str:
    """The label a sentence opens with when it names no part ("Breaking: …"): its words."""
    match = LABEL_RE.match(text)
    if match is None or _label(text)[0] is not None:
        return ""
    return next(g for g in match.groups() if g).strip("* ")


def _labelled_by(text: str, same: Sequence[str], own: bool) -> list[str]:
    """The reader's parts a sentence's label names: all it holds or is in for its own label, the
    one it is in for a label carried from before."""
    return [h for h in same if own or text in h]


def _parts_in(text: str, held: Sequence[str]) -> list[str]:
    """The reader's parts a sentence is in, or that are (not too short) in it."""
    return [h for h in held if text in h or (h in text and len(h) >= SHORT_CLAUSE)]


def _said(rest: str, merged: Mapping[str, Candidate]) -> bool:
    """Whether a candidate already says this rest of a sentence (or begins with it)."""
    return any(rest in h or h.startswith(rest[:SHORT]) for h in merged)


def _rest(text: str, parts: Sequence[str]) -> str:
    """A sentence without the parts inside it, when what is left says something; the whole
    sentence when no part is in it; else nothing."""
    if not parts:
        return text
    if any(text in h for h in parts):
        return ""
    rest = text
    for h in parts:
        rest = rest.replace(h, "\n")
    if INTRO_RE.search(rest.split("\n")[0]):
        return text  # "有两点好处：（1）…（2）…": the intro says nothing without its items
    pieces = [p.strip(" ，,;；。.:：") for p in rest.split("\n")]
    longest = max(pieces, key=len)
    return longest if len(longest) >= SHORT else ""


INTRO_RE = re.compile(r"[:：]?\s*(?:[（(](?:1|一)[)）]|(?<!\d)1[.、]|[①⑴])\s*$")


def _parts_found(entry: Entry) -> dict[str, Candidate]:
    """The reader's parts by text, one candidate per text with all the parts it is."""
    merged: dict[str, Candidate] = {}
    for c in _structured(entry):
        if "verdict" not in c.parts and _a_label_of(entry.note, c.text):
            continue  # "Breaking" of "Breaking: …" read as a part is the label of what follows
        # "TL;DR: …" or "- **Who:** …" read as a point is quoted without its label, as the part
        # its label says (the label wins: "**How to enable:**" under 风险 is not a caveat).
        part, text = _label(MARK_RE.sub("", without_shortcodes(c.text)).strip().strip("*").strip())
        known = merged[text].parts if text in merged else ()
        own = (part,) if part and part != "note" else c.parts
        parts = (*known, *own, *_people_parts(entry, text))
        merged[text] = Candidate(tuple(dict.fromkeys(parts)), text, c.source)
    return merged


def _a_label_of(note: str, text: str) -> bool:
    """Whether a short text is only a label in the note (followed by its colon)."""
    bare = text.strip("*")
    return len(bare) < SHORT and (
        re.search(re.escape(bare) + r"\**\s*[:：]", note) is not None
        or re.search(r"^\s*(?:[-*•]\s+)?\*{1,2}" + re.escape(bare) + r"\*{1,2}\s*$", note, re.M) is not None
    )


def _without_bare_headings(candidates: list[Candidate]) -> list[Candidate]:
    """A bare heading ("测试设计") inside a longer candidate says nothing of its own."""
    texts = [c.text for c in candidates]
    return [
        c
        for c in candidates
        if len(c.text) >= SHORT or "verdict" in c.parts or not any(c.text in t and c.text != t for t in texts)
    ]


SHORT = 12
SHORT_CLAUSE = 8  # a clause shorter than this is a heading ("测试设计"), not a point


def _with_part(candidate: Candidate, part: str) -> Candidate:
    """A part found by the reader, with the part its own label says: the label wins ("How to
    enable:" after "Watch out:" is not a caveat)."""
    if part in candidate.parts or part == "note":
        return candidate
    people = tuple(p for p in candidate.parts if p in ("people", "reviewers"))
    return Candidate((part, *people), candidate.text, candidate.source)


def _facts(entry: Entry, words: Mapping[str, str]) -> list[Candidate]:
    """The metadata as candidates, each a line in the asker's language, after the summary."""
    facts = [
        Candidate((part,), text, source, fact=True)
        for part, source, text in _fact_lines(entry, words)
        if text
    ]
    return [_summary(entry), *facts]


def _summary(entry: Entry) -> Candidate:
    """The title and the note's first point; said short, the point when the title is the PR's."""
    why = _first_point(entry)
    joint = "。" if has_han(entry.title) else ". "
    summary = f"{entry.title}{joint}{why}" if why and why != entry.title else entry.title
    short = why if why and _pr_title(entry) else entry.title
    return Candidate(("summary",), summary, "title", short=short)


def _first_point(entry: Entry) -> str:
    """The note's first point (its why line, else its first focus point) that is not the
    verdict's qualifier nor a line naming who reviewed it ("Nicolò Lucchesi 已 review")."""
    verdict = _verdict_sentence(entry)
    said = _verdict_own(entry)
    points = (p for p in (entry.why, *entry.highlights) if p and not _of_the_verdict(entry, p, verdict, said))
    return next((p for p in points if _tells_the_change(entry, p)), "")


def _tells_the_change(entry: Entry, point: str) -> bool:
    """A point that says what the change is: not who did or reviewed it, whom it is for, how its
    review went, or whose PR it was and where it ended ("X 提的改动，最后 closed 没进主线")."""
    if len(point) < SHORT or _who_did_it(entry, point) or _for_whom(point) or _of_the_review(point):
        return False
    return not _framing(entry, point)


FRAMING = 60  # a point this short naming its author and its fate frames the change, not tells it


def _framing(entry: Entry, point: str) -> bool:
    """What a note says of a PR's fate (merged, closed, 没进主线) is the state kind's cue words."""
    named = any(p in point for p in (entry.author, *entry.people) if p)
    fate = kind_priors()["state"].cues
    return named and len(point) <= FRAMING and any(pattern.search(point) for pattern, _ in fate)


# A point telling the review, not the change: `评审里 @x 要求…`, `In review, …`, `Reviewers asked…`.
REVIEW_OPENING_RE = re.compile(
    r"^(?:评审|审阅|审查|(?i:review))\s*(?:里|中|时|上|意见|过程)|^(?i:in review\b|during review\b|reviewers?\b)"
)


def _of_the_review(point: str) -> bool:
    return REVIEW_OPENING_RE.match(point) is not None


def _of_the_verdict(entry: Entry, point: str, verdict: str, said: str) -> bool:
    """Whether a point is the verdict's qualifier or reasons, or only a label of the note."""
    return _of_verdict(point, verdict) or bool(said and point in said) or _a_label_of(entry.note, point)


def _verdict_own(entry: Entry) -> str:
    """The sentence holding the verdict when it is not the note's first: a verdict standing
    after the change is told gives reasons to read it, not what the change is (a verdict
    opening the note is often a tag before the summary: "[must-read] Prefix caching now …")."""
    return _holding_verdict(entry, sentences(entry.note)[1:])


def _for_whom(point: str) -> bool:
    """Whether a point names its readers ("Read this if you own the scheduler"), not the change:
    the digest reader's own audience lead or reading cue."""
    cue = reading_cue(point)
    return bool(vocabulary().is_audience(point)) or (cue is not None and cue.for_readers)


WHO_LINE = 40
WHO_LINE_RE = re.compile(r"^(?:作者|(?i:author\b|by\b|reviewed by\b))")
# A line that only says someone reviewed or approved it ("Nicolò Lucchesi 已 review", "mgoin approved").
WHO_REVIEWED_RE = re.compile(
    r"^[^，,。.；;]{2,30}?\s*(?:已经?|都|也)?\s*(?:review(?:ed)?|approved?|LGTM|批准|批了|点头)(?:\s*过)?(?:了)?\s*[。.!！]?$",
    re.I,
)


def _who_did_it(entry: Entry, point: str) -> bool:
    """Whether a point only says who wrote, reviewed or tested it."""
    short = len(point) <= WHO_LINE  # a long point may end with who approved it; it is still the point
    if WHO_LINE_RE.match(point) or (short and WHO_REVIEWED_RE.match(point)):
        return True
    return short and "reviewers" in _people_parts(entry, point)


PR_TITLE_RE = re.compile(r"^\[[^\]]+\]|#\d+\s*$")


def _pr_title(entry: Entry) -> bool:
    """Whether the entry's title is the PR's own (`[Bugfix] … #4869`), not the curator's summary:
    then the note's why line, not the title the asker has already read, sums it up."""
    return bool(PR_TITLE_RE.search(entry.title)) or entry.title == entry.github_title


def _fact_lines(entry: Entry, words: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(part, source, line) of each metadata field; an empty line where the field is unknown."""
    date = f"{entry.date.isoformat()}{f' (#{entry.pr})' if entry.pr else ''}" if entry.date else ""
    return [
        ("author", "author", _line(words["author"], entry.author)),
        ("date", "date", _line(words["date"], date)),
        ("english", "github_title", _line(words["english"], entry.github_title)),
        ("tags", "tags", _line(words["labels"], ", ".join(entry.tags))),
        ("link", "url", _line(f"#{entry.pr} " if entry.pr else "", entry.title if entry.url else "")),
    ]


def _line(label: str, value: str | None) -> str:
    return f"{label}{value}" if value else ""
