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
from typing import Literal, cast, get_args

from rapidfuzz import fuzz, process

from chatbot.text import HAN_CHAR, normalize_question
from chatbot.yamlfast import load_yaml

Intent = Literal[
    "english",
    "date",
    "state",
    "labels",
    "cause",
    "motive",
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
    "reviewers",
    "howto",
    "benchmark",
    "verdict",
    "defaults",
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
    key: str = ""  # the phrase without spaces: a cheap test before the pattern
    weak: bool = False  # a kind that leads only where no other is named (`weak:` in the file)


@dataclass(frozen=True)
class Phrasings:
    """The data file: the rules, the colloquial rewrites and the whole-question phrasings."""

    rules: tuple[IntentRule, ...]
    rewrites: tuple[tuple[re.Pattern[str], str], ...]
    whole: dict[str, Intent]


def weight(phrase: str) -> int:
    """How specific a phrase is: its length, a Chinese character counting twice (one character
    says as much as a short English word), so "哪些人参与" outweighs "review"."""
    return len(phrase) + len(HAN_CHAR.findall(phrase))


def _compile(phrase: str) -> re.Pattern[str]:
    escaped = re.escape(phrase).replace(r"\ ", r"\s*")
    if phrase[:1].isascii() and phrase[:1].isalnum():
        escaped = r"(?<![a-z0-9-])" + escaped  # "author" is not in "co-author"
    if phrase[-1:].isascii() and phrase[-1:].isalnum():
        # nor "bench" in "benchislett": a word ends the phrase, an inflection aside
        escaped += r"(?:s|es|ed|d|ing|er|ers|y)?(?![a-z0-9])"
    return re.compile(escaped)


@lru_cache(maxsize=1)
def phrasings() -> Phrasings:
    """The data file, compiled once: phrases are rewritten like the questions they meet."""
    text = (
        resources.files("chatbot.answers").joinpath("data/followup_intents.yaml").read_text(encoding="utf-8")
    )
    data = load_yaml(text)
    rewrites = tuple((re.compile(pattern), plain) for pattern, plain in data.get("rewrites", []))
    rules: list[IntentRule] = []
    weak = frozenset(data.get("weak") or ())
    for order, (name, phrases) in enumerate(data["intents"].items()):
        if name not in INTENTS:
            raise ValueError(f"followup_intents.yaml: unknown intent {name!r}")
        for phrase in phrases:
            norm = _rewrite(normalize_question(str(phrase)), rewrites)
            key = norm.replace(" ", "")
            rules.append(IntentRule(cast(Intent, name), norm, _compile(norm), order, key, name in weak))
    rules.extend(_pattern_rules(data.get("patterns") or {}, list(data["intents"])))
    whole = {
        _bare(_rewrite(normalize_question(str(phrase)), rewrites)): cast(Intent, name)
        for name, phrases in data.get("whole", {}).items()
        if name in INTENTS
        for phrase in phrases
    }
    return Phrasings(tuple(rules), rewrites, whole)


def _pattern_rules(patterns: dict[str, list[str]], names: list[str]) -> list[IntentRule]:
    """The question families' shapes: a rule with no phrase, tried on every question, ordered
    as its kind's phrasings."""
    rules: list[IntentRule] = []
    for name, regexes in patterns.items():
        if name not in INTENTS:
            raise ValueError(f"followup_intents.yaml: patterns: unknown intent {name!r}")
        order = names.index(name) if name in names else len(names)
        rules.extend(IntentRule(name, "", re.compile(str(r)), order, "") for r in regexes)
    return rules


def intent_rules() -> tuple[IntentRule, ...]:
    """The phrasings of the data file, in file order."""
    return phrasings().rules


def _rewrite(text: str, rewrites: tuple[tuple[re.Pattern[str], str], ...]) -> str:
    for pattern, plain in rewrites:
        text = pattern.sub(plain, text)
    return text


def plain_question(question: str) -> str:
    """The question as the phrasings are written: NFKC, casefolded, colloquial forms made plain
    ("改了啥" → "改了什么", "合了没" → "合了吗", "this PR" → "it")."""
    return _rewrite(normalize_question(question), phrasings().rewrites)


_BARE_NOISE_RE = re.compile(r"[\s?!.,;:~…。？！，、；：]+|\b(?:pls|plz|please|then|so)\b")


def _bare(text: str) -> str:
    """A question without punctuation and politeness: "why??" and "why" are one whole question."""
    return _BARE_NOISE_RE.sub("", text)


@dataclass(frozen=True)
class Reading:
    """What a question's cue words say: each kind they name with a weight (the longest phrase's
    kind 1.0, others by their phrase's share of it), and the question without those words (its
    subject: what the asker wants to know about)."""

    kinds: dict[Intent, float]
    subject: str
    cues: str = ""  # the cue words themselves: they still count, for less, as words to find

    @property
    def top(self) -> Intent:
        return max(self.kinds, key=lambda k: self.kinds[k]) if self.kinds else "other"


SECONDARY = 0.4


def read_question(question: str) -> Reading:
    """The kinds a question's cue words name, as weights, and its subject without them."""
    text = plain_question(question)
    whole = phrasings().whole.get(_bare(text))
    if whole is not None:
        return Reading({whole: 1.0}, "")
    best, taken, phrased = _cues_taken(text)
    subject = list(text)
    for start, end in taken:
        subject[start:end] = " " * (end - start)
    if not phrased:
        best = _with_typo(best, text)
        if not taken:
            return Reading(_weighed(best) if best else {}, text)
    cues = " ".join(text[a:b] for a, b in taken)
    return Reading(_weighed(best), "".join(subject), cues)


def _cues_taken(text: str) -> tuple[dict[Intent, tuple[int, int]], list[tuple[int, int]], bool]:
    """Each kind's strongest cue (weight, file order), the spans the cues take, and whether any
    is a phrase rather than a shape; a cue inside a longer one's span is not taken ("设计" inside
    "测试设计", or one phrase of two kinds: the longer, the first)."""
    best: dict[Intent, tuple[int, int]] = {}
    taken: list[tuple[int, int]] = []
    phrased = False
    for start, end, size, order, intent, phrase in _cue_matches(text):
        if any(a <= start and end <= b for a, b in taken):
            continue
        taken.append((start, end))
        best[intent] = max(best.get(intent, (0, 0)), (size, -order))
        phrased = phrased or phrase
    return best, taken, phrased


def _with_typo(best: dict[Intent, tuple[int, int]], text: str) -> dict[Intent, tuple[int, int]]:
    """Where only a shape (a bare "who") or nothing matched, a misspelt phrase says more ("who
    was the reviwer" asks for reviewers): its kind leads."""
    typo = _classify_typo(text)
    if typo == "other":
        return best
    return {**best, typo: (max((size for size, _ in best.values()), default=0) + 1, 0)}


def _cue_matches(text: str) -> list[tuple[int, int, int, int, Intent, bool]]:
    """(start, end, weight, order, kind, a phrase: not a shape nor a weak kind's word) of every
    phrasing in the text, longest first, then file order."""
    squeezed = text.replace(" ", "")
    found = [
        (
            m.start(),
            m.end(),
            1 if rule.weak else weight(rule.phrase or m.group(0).replace(" ", "")),
            rule.order,
            rule.intent,
            bool(rule.phrase) and not rule.weak,  # a weak kind's word leaves room for a typo's
        )
        for rule in phrasings().rules
        if rule.key in squeezed
        for m in rule.pattern.finditer(text)
    ]
    found.sort(key=lambda f: (-f[2], f[3]))
    return found


def _weighed(best: dict[Intent, tuple[int, int]]) -> dict[Intent, float]:
    """The longest phrase's kind leads (a tie: the kind listed first in the file); another named
    in the same question weighs less ("测试是怎么设计的" asks about the tests' design, not for any
    design)."""
    lead = max(best, key=lambda k: best[k])
    top = best[lead][0]
    return {k: 1.0 if k == lead else SECONDARY * size / top for k, (size, _) in best.items()}


cached_reading = lru_cache(maxsize=1024)(read_question)


def classify(question: str) -> Intent:
    """The kind of a question (the lead of its reading); "other" when no phrasing matches."""
    return cached_reading(question).top


# The kind of a question asked before (threads repeat "风险？", "who wrote it?"): classifying
# tries every phrasing, so the answerer and the question splitter share this cache.
cached_classify = classify

_ASCII_WORD_RE = re.compile(r"[a-z][a-z;\-']+")
TYPO_WORD_SCORE = 80.0
TYPO_PHRASE_SCORE = 90.0


def _classify_typo(text: str) -> Intent:
    """Second pass for English typos ("focsu", "reviwer"): fuzzy match of words and phrases; the
    closest wins, then the longer phrase, then the intent listed first."""
    words = [w for w in _ASCII_WORD_RE.findall(text) if 5 <= len(w) <= 30]
    if not words:
        return "other"
    typos = _typo_phrases()
    # The phrases of several words in one call: rapidfuzz loops over them in C (scored as
    # `_typo_score` does); a one-word phrase only when a word opens with its letter (bench/scale.py's
    # follow-up answer row: a question without cue words tried the 460 phrases one by one).
    found = process.extract(
        text[:500], typos.phrases, scorer=fuzz.partial_ratio, score_cutoff=TYPO_PHRASE_SCORE, limit=None
    )
    scored = [
        _typo_key(typos.several[at], score)
        for _, score, at in found
        if len(text) >= len(typos.several[at].phrase) - 1  # as `_typo_score` asks: the question holds it
        and _misspelt(typos.several[at].phrase, text)
    ]
    scored += _one_word_typos(text, words, typos)
    return max(scored, key=lambda s: s[0])[1] if scored else "other"


def _one_word_typos(
    text: str, words: list[str], typos: _TypoPhrases
) -> list[tuple[tuple[float, int, int], Intent]]:
    """The one-word phrases a word of the question is close to, of the words' first letters."""
    rules = (rule for letter in {w[0] for w in words} for rule in typos.one_word.get(letter, ()))
    return [
        _typo_key(rule, score)
        for rule in rules
        if (score := _typo_score(rule.phrase, text, words)) is not None
    ]


def _misspelt(phrase: str, text: str) -> bool:
    """Whether the words the phrase is found fuzzily in hold one that is not a cue word spelt
    right: "why did it get reverted" is no typo of "who did it", "who was the reviwer" is one
    of "who was the reviewer"."""
    at = fuzz.partial_ratio_alignment(phrase, text[:500])
    if at is None:
        return False
    region = _ASCII_WORD_RE.findall(text[at.dest_start : at.dest_end])
    differing = set(region) - set(phrase.split())
    return not differing or not differing <= _cue_vocabulary()


@lru_cache(maxsize=1)
def _cue_vocabulary() -> frozenset[str]:
    """Every English word of the file's phrasings: a question word among them is spelt right."""
    return frozenset(w for rule in intent_rules() for w in _ASCII_WORD_RE.findall(rule.phrase))


def _typo_key(rule: IntentRule, score: float) -> tuple[tuple[float, int, int], Intent]:
    """The closest wins, then the longer phrase, then the intent listed first."""
    return (score, len(rule.phrase), -rule.order), rule.intent


@lru_cache(maxsize=1)
def _typo_rules() -> tuple[IntentRule, ...]:
    """The English phrasings of five letters or more: the ones a typo can be read as."""
    return tuple(rule for rule in intent_rules() if rule.phrase.isascii() and len(rule.phrase) >= 5)


@dataclass(frozen=True)
class _TypoPhrases:
    """`_typo_rules` of several words (and their phrases, for rapidfuzz), and of one word by its
    first letter."""

    several: tuple[IntentRule, ...]
    phrases: tuple[str, ...]
    one_word: dict[str, tuple[IntentRule, ...]]


@lru_cache(maxsize=1)
def _typo_phrases() -> _TypoPhrases:
    several = tuple(rule for rule in _typo_rules() if " " in rule.phrase)
    one_word: dict[str, list[IntentRule]] = {}
    for rule in _typo_rules():
        if " " not in rule.phrase:
            one_word.setdefault(rule.phrase[0], []).append(rule)
    return _TypoPhrases(several, tuple(r.phrase for r in several), {k: tuple(v) for k, v in one_word.items()})


def _typo_score(phrase: str, text: str, words: list[str]) -> float | None:
    """How close the question comes to an English phrase; None when not close enough. A one-word
    phrase is compared with words of the same first letter: typos rarely hit it, and "patch"
    must not read as "catch"."""
    # With `score_cutoff` rapidfuzz gives up on a pair as soon as it cannot reach it (0 then), and
    # the score is the same above it: a question without cue words tried 460 phrases this way
    # (bench/scale.py's follow-up answer row).
    if " " in phrase:
        if len(text) < len(phrase) - 1:
            return None  # the question must hold the phrase, typo and all: "merged?" is not "merged when"
        score = fuzz.partial_ratio(phrase, text[:500], score_cutoff=TYPO_PHRASE_SCORE)
        return score if score >= TYPO_PHRASE_SCORE else None
    score = max(
        (fuzz.ratio(phrase, w, score_cutoff=TYPO_WORD_SCORE) for w in words if w[0] == phrase[0]), default=0.0
    )
    return score if score >= TYPO_WORD_SCORE else None
