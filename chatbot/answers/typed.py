"""Typed follow-ups: a question asking for hardware, a version, a number, a flag, a reference or
a person (`chatbot.answers.slots`) is answered only by a clause holding one, and honestly denied
when none does; a clause saying the thing is not given answers an existence question and denies
a typed one; a yes/no question about hardware the note never names is answered by a clause
restricting the change to the hardware it does name ("CUDA-only").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chatbot.answers.candidates import PERSON_ACTS_RE, REVIEW_RE, Candidate
from chatbot.answers.intents import Reading
from chatbot.answers.retrieval import Scored, subject_terms
from chatbot.answers.slots import (
    Slot,
    asked_measures,
    asked_slots,
    asking_words,
    holding_part,
    holding_span,
    holds,
    named_slots,
    slot_matches,
    slot_values,
    without_asks,
)
from chatbot.digest import Entry, clauses
from chatbot.text import normalize_question

# The floor, calibrated on the training pools (bench/answers.py): a candidate answers when it
# shares a real term with the subject (one word or identifier; a lone Chinese bigram is not
# enough) or fits the asked kind by its part or a cue of its own.
MIN_SHARED = 1.0
MIN_FIT = 1.0
YES_NO_RE = re.compile(
    r"^(?:is|are|does|do|did|can|could|will|would|has|have|should)\b|吗\s*$|了没有?\s*$|是否|有没有|是不是|能不能|会不会|支不支持",
    re.I,
)


def said_absent(text: str) -> bool:
    """Whether a clause says a thing is not given ("no benchmark", "x86 上的收益没有给出")."""
    return bool(ABSENT_RE.search(text))


@dataclass(frozen=True)
class Typed:
    """The ranking as a typed question sees it: only the candidates holding what it asks for
    (`slots`), `denied` when none does; `instead` the names a yes/no question asked about that
    the note answers with another of their type."""

    scored: Sequence[Scored]
    missing: list[str]
    slots: tuple[str, ...] = ()
    denied: bool = False
    instead: tuple[str, ...] = ()

    def refused(self, untyped_denial: Callable[[], bool]) -> bool:
        """Whether to say the note lacks it: a name it lacks, no holder of the type asked, or
        (an untyped question) the best candidate below the floor."""
        return bool(self.missing) or self.denied or (not self.slots and untyped_denial())


def typed_ranking(
    entry: Entry, question: str, reading: Reading, scored: Sequence[Scored], missing: list[str]
) -> Typed:
    """The candidates that may answer a typed question ("在啥硬件上测的": those naming hardware),
    best first; a yes/no question naming hardware the note lacks ("does this work on amd") is
    answered by the clause naming the hardware it does ("CUDA-only")."""
    asked = tuple(s for s in asked_slots(question) if not (s == "quantity" and reading.top == "size"))
    if not asked:
        return _untyped(entry, question, scored, missing)
    holders = _holders(entry, question, reading, asked, scored)
    if _off_subject(reading, holders, asked, scored):
        return _untyped(entry, question, scored, missing)
    if holders:
        return _held(question, asked, holders, missing)
    # No holder: "perf numbers" on a note saying "没给 benchmark" is answered by that line.
    absent = _says_absent(scored)
    return Typed(absent or scored, missing, asked, denied=not absent)


def _held(question: str, asked: tuple[str, ...], holders: list[Scored], missing: list[str]) -> Typed:
    """The holders answer; the words asking for the type ("启动参数") are not a subject the note
    lacks, and a holder on the subject saying the thing is not there ("x86 上能快多少" on "…9% on
    Arm; x86 上的收益没有给出") denies."""
    missing = [m for m in missing if m not in asking_words(asked, question)]
    holder_says_absent = holders[0].shared >= MIN_SHARED and bool(_says_absent(holders[:1]))
    return Typed(holders, missing, asked, denied=holder_says_absent)


def _off_subject(
    reading: Reading, holders: Sequence[Scored], asked: tuple[str, ...], scored: Sequence[Scored]
) -> bool:
    """Whether a slot held by words of reasoning, not by a value, has only holders off the
    question's subject while a clause on it leads ("why did this get reverted": the clause on the
    revert, not one saying a maintainer asked for something else; "why was it closed" names no
    subject)."""
    return (
        bool(holders)
        and set(asked) <= WORDED_SLOTS
        and bool(subject_terms(reading.subject))
        and scored[0].shared >= MIN_SHARED
        and not scored[0].candidate.fact
        and all(s.shared < MIN_SHARED for s in holders)
    )


WORDED_SLOTS = frozenset({"reason"})


def _untyped(entry: Entry, question: str, scored: Sequence[Scored], missing: list[str]) -> Typed:
    """A question asking for no type: a yes/no question about a measure or about hardware the
    note lacks is still answered only by what holds one; any other ranks as scored."""
    named = _yes_no_measures(question)
    return _measured_yes_no(named, scored, missing) if named else _instead(entry, question, scored, missing)


def _yes_no_measures(question: str) -> tuple[Slot, ...]:
    """The measures a yes/no question asks about ("比原来快吗" → speed)."""
    return asked_measures(question) if YES_NO_RE.search(normalize_question(question)) else ()


def _measured_yes_no(named: Sequence[Slot], scored: Sequence[Scored], missing: list[str]) -> Typed:
    """A yes/no question about a measure ("比原来快吗", "会不会拖慢 /metrics"): answered by a
    clause naming that measure, honestly denied when none does."""
    holders = [s for s in scored if not s.candidate.fact and _measuring([s], named)]
    return Typed(holders or scored, missing, ("quantity",) if holders else (), denied=not holders)


def _says_absent(scored: Sequence[Scored]) -> list[Scored]:
    """The clauses on the subject that say the thing is not given."""
    return [s for s in scored if ABSENT_RE.search(s.candidate.text) and (s.shared or s.fit)]


def _holders(
    entry: Entry, question: str, reading: Reading, asked: tuple[str, ...], scored: Sequence[Scored]
) -> list[Scored]:
    """The candidates holding what is asked; a number only on the subject (numbers are everywhere)."""
    others = reading.top == "reviewers"  # "who reviewed it" is not answered by the author
    holders = [s for s in scored if any(holds(k, s.candidate, entry, besides_author=others) for k in asked)]
    if others:  # nor by a clause naming someone without a word of review
        return [s for s in holders if _reviewing(s.candidate)]
    if "hardware" in asked:  # "跑的啥卡": the clause naming an A100 before one saying "CUDA kernels"
        return sorted(holders, key=lambda s: not any(ch.isdigit() for ch in _hardware(s.candidate.text)))
    return holders if not set(asked) <= WEAK_SLOTS else _numbers(entry, question, reading, asked, holders)


def _numbers(
    entry: Entry, question: str, reading: Reading, asked: tuple[str, ...], holders: list[Scored]
) -> list[Scored]:
    """The holders of a number that answer: of the measure asked, on the subject, and for a
    question about the result ("开了 tkw1 之后吞吐多少") not the baseline alone."""
    named = asked_measures(question)
    if AFTER_RE.search(question):
        holders = [s for s in holders if not _baseline_only(s.candidate.text)]
    return _on_subject(entry, reading, asked, _measuring(holders, named), named)


# A how-much question about the result of the change, and a clause giving only the value before it.
AFTER_RE = re.compile(
    r"(?:之后|以后|修完|改完|优化后|开了.{0,12}后)|(?i:\bafter\b|\bwith\s+(?:it|this|the fix)\b)"
)
BASELINE_RE = re.compile(r"基线|修之前|改之前|不开|(?i:\bbaseline\b|\bbefore\b|\bwithout\b)")
CHANGE_RE = re.compile(
    r"→|->|⇒|(?<=\d)\s*到\s*\d|从.{0,40}(?:到|降到|升到|涨到)|(?i:\bto\s+[\d.]+|\bvs\.?\b)"
)


def _baseline_only(text: str) -> bool:
    return bool(BASELINE_RE.search(text)) and not CHANGE_RE.search(text)


def _hardware(text: str) -> str:
    return " ".join(m.group(0) for m in slot_matches("hardware", text))


def _measuring(holders: list[Scored], named: Sequence[Slot]) -> list[Scored]:
    """The holders naming what a how-much question measures ("吞吐多少": a number of throughput,
    not the acceptance rate beside it); all when it names no measure."""
    if not named:
        return holders
    return [s for s in holders if any(m.holds.search(s.candidate.text) for m in named)]


def _on_subject(
    entry: Entry, reading: Reading, asked: tuple[str, ...], holders: list[Scored], named: Sequence[Slot] = ()
) -> list[Scored]:
    """The holders of a number that share the subject ("吞吐多少": those on throughput), or of
    the kind asked when the question names nothing else ("提速多少") or only what the entry is
    about (its title's words: "how much faster w/ caching" on the prefix-caching entry)."""
    subject = without_asks(asked, reading.subject)
    for measure in named:  # the measure's words are held by its units already
        subject = measure.asks.sub(" ", subject)
    if _beyond_title(entry, subject):
        return [s for s in holders if s.shared >= MIN_SHARED]
    return holders if named else [s for s in holders if s.fit >= MIN_FIT]


def _beyond_title(entry: Entry, subject: str) -> bool:
    """Whether the subject names, in the asker's own words, something the titles do not."""
    title = normalize_question(f"{entry.title} {entry.github_title or ''}")
    asked_words = normalize_question(subject)
    # a lone Chinese character ("掉多少" → 掉) is how the measure moves, not a subject
    return any(t not in title for t in subject_terms(subject) if t in asked_words and len(t) > 1)


WEAK_SLOTS = frozenset({"quantity"})
ABSENT_RE = re.compile(
    r"没有?给出|没有?给(?=[^，。；,;]{0,12}?(?:数字|数据|结果|对比|收益|(?i:benchmark|numbers)))|没给$|未给出|没有公开|没有?提供|没有?(?:具体)?(?:数字|数据|benchmark|bench|测试数据|性能数据)|没有[^，。；,;\s]{1,6}?(?:数字|数据|对比)|只有[^，。；]{0,10}截图|没(?:看到|有)明显的?(?:加速|提升|收益)|"
    r"(?i:\bnot\s+(?:given|reported|published|measured|shown)\b|\b(?:no|without(?:\s+any)?)\s+(?:[a-z0-9-]+\s+(?:or\s+|and\s+)?){0,3}(?:numbers|data|figures|benchmarks?|perf|comparisons?)\b|"
    r"\b(?:didn't|did not|doesn't|does not)\s+(?:post|share|give|include|report|show)\s+(?:any\s+)?(?:[a-z0-9-]+\s+){0,2}(?:numbers|benchmarks?|data|figures)\b|"
    r"\bnothing to (?:quote|show|report)\b|\bonly (?:exists? )?(?:as |in )(?:a |two )?screenshots?\b|\bno (?:noticeable |measurable |significant |clear )?(?:speed-?up|gain)s?\b)"
)


def _instead(entry: Entry, question: str, scored: Sequence[Scored], missing: list[str]) -> Typed:
    """A yes/no question about hardware the note never names ("does this work on amd"): the
    clause naming the hardware it does name answers; hardware the note names ("tpu v4") does not."""
    named = _named_elsewhere(entry, question) if missing else ()
    holders = [s for s in scored if _restricts(s.candidate, named, entry)]
    if not holders:
        return Typed(scored, missing)
    return Typed(holders, [], named, instead=tuple(missing))


def _reviewing(candidate: Candidate) -> bool:
    """Whether a clause speaks of reviewing: a word of review, or a person named in it doing
    what reviewers do ("claude[bot] 提出的…", "youkaichao asked to link…")."""
    text = candidate.text
    if "reviewers" in candidate.parts or REVIEW_RE.search(text) or PERSON_ACTS_RE.search(text):
        return True
    return "people" in candidate.parts and bool(REVIEW_ACTS_RE.search(text))


REVIEW_ACTS_RE = re.compile(
    r"提出|指出|建议|认为|提醒|质疑|要求|追问|(?i:\b(?:asked|suggested|argued|pointed out|noted|flagged|requested|objected)\b)"
)


ONLY_RE = re.compile(r"仅|只有|只在|只能|只支持|唯一|专用|限于|(?i:-only\b|\bonly\b|\bexclusive)")
NEAR = 16  # characters between the restricting word and the hardware it restricts to


def _restricts(candidate: Candidate, named: tuple[str, ...], entry: Entry) -> bool:
    """Whether a clause restricts the change to hardware of the named type ("sleep mode is
    CUDA-only", "只有 SM90+ 才打开"): that answers whether it works on another. The word must
    be next to the hardware ("offline only" in a clause about x86 restricts nothing)."""
    if candidate.fact:
        return False
    text = candidate.text
    values = [m for k in named for m in slot_matches(k, text)]
    return any(
        abs(o.start() - v.end()) <= NEAR or abs(v.start() - o.end()) <= NEAR
        for o in ONLY_RE.finditer(text)
        for v in values
    )


def _named_elsewhere(entry: Entry, question: str) -> tuple[str, ...]:
    """The slots a yes/no question names a value of that the note does not name."""
    if not YES_NO_RE.search(normalize_question(question)):
        return ()
    named = named_slots(question)
    return tuple(k for k in named if not slot_values(k, question) & slot_values(k, entry.note))


def keeping_what_is_asked(slot_names: tuple[str, ...], candidate: Candidate, entry: Entry) -> Candidate:
    """The candidate with, as its short form (quoted when room is tight), the clause holding
    what the question asks for ("…1.62× speedup at 10 concurrency on an RTX 4090")."""
    if (
        not slot_names
        or candidate.fact
        or (candidate.short and holding_part(slot_names, candidate.short, entry))
    ):
        return candidate
    held = next((c for c in clauses(candidate.text) if holding_part(slot_names, c, entry)), "")
    if held == candidate.text:  # one long clause ("…speedup at 10 concurrency on one RTX 4090")
        held = holding_span(slot_names, held) or held
    return Candidate(candidate.parts, candidate.text, candidate.source, held, fact=candidate.fact)
