"""Ranking a note's clauses against a free question: term overlap plus fuzzy matching.

Terms are Latin words, code identifiers and Chinese character bigrams. Two bridges between the
languages: the search glossary's concepts (vLLM jargon: "AMD" finds ROCm/MI300X, "spec decode"
finds 投机解码) matched as phrases, and a list of general engineering words read both ways
(`data/followup_terms.yaml`: "crash" finds 崩溃, "有哪些策略" finds `strategy`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

from rapidfuzz import fuzz

from chatbot.answers.intents import intent_rules
from chatbot.search import Glossary
from chatbot.text import HAN_RUN, INFLECTIONS, LATIN_WORD, han_bigrams, normalize_question, stem
from chatbot.yamlfast import load_yaml

IDENT_RE = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*(?:[._][A-Za-z0-9_]+)+(?:\(\))?)")

_EN_STOP_WORDS = (
    "a an the is are was were be been do does did what which who whom whose why how when where this that "
    "these those it its of in on at to for from by with about and or not no can could should would will "
    "i me my we our you your they them their there here pr prs please tell explain any some more most "
    "much many one two three has have had get got so if then than also just note entry it's what's "
    "whats doesn't into as up out over use used using way like"
)
EN_STOP = frozenset(_EN_STOP_WORDS.split())
# Bigrams made of question words: they say nothing about the subject.
ZH_STOP_CHARS = frozenset("什么怎么为何哪些吗呢吧啊呀的了是这那个一下请问能否可以有没")

TermWeights = dict[str, float]


@lru_cache(maxsize=1)
def english_to_chinese() -> dict[str, tuple[str, ...]]:
    text = resources.files("chatbot.answers").joinpath("data/followup_terms.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    return {str(k).casefold(): tuple(str(v) for v in vs) for k, vs in data["terms"].items()}


def chinese_of(word: str) -> tuple[str, ...]:
    """The Chinese the word list gives for an English word of a question, or for its uninflected
    form ("crashed" → crash, "leaks" → leak, "strategies" → strategy)."""
    glossary = english_to_chinese()
    return glossary.get(word, ()) or glossary.get(stem(word, INFLECTIONS), ())


@lru_cache(maxsize=1)
def chinese_to_english() -> dict[str, tuple[str, ...]]:
    """The word list read the other way: "有哪些策略可选" also looks for `strategy`."""
    out: dict[str, list[str]] = {}
    for en, zhs in english_to_chinese().items():
        for zh in zhs:
            if HAN_RUN.fullmatch(zh) and len(zh) >= 2:
                out.setdefault(zh, []).append(en)
    return {zh: tuple(ens) for zh, ens in out.items()}


def piece_terms(text: str) -> set[str]:
    """Every term a piece of the note offers (identifiers, words, bigrams)."""
    norm = normalize_question(text)
    terms: set[str] = set()
    for quoted, bare in IDENT_RE.findall(norm):
        ident = (quoted or bare).strip()
        if ident:
            terms.add(ident)
    terms.update(LATIN_WORD.findall(norm))
    for run in HAN_RUN.findall(norm):
        terms.update(han_bigrams(run))
    return terms


def question_terms(question: str) -> TermWeights:
    """Terms of a question with weights: identifiers 3, words 2, Chinese bigrams 1 (in that order:
    the first weight a term gets stays)."""
    norm = normalize_question(question)
    weights: TermWeights = {}
    _add_identifiers(norm, weights)
    _add_english_words(norm, weights)
    _add_english_of_chinese(norm, weights)
    _add_chinese_bigrams(norm, weights)
    return weights


_QUESTION_BIGRAMS = frozenset({"这个", "那个", "什么", "怎么", "为什", "哪些", "是否", "一下", "有没"})


def _add_identifiers(norm: str, weights: TermWeights) -> None:
    for quoted, bare in IDENT_RE.findall(norm):
        ident = (quoted or bare).strip()
        if ident:
            weights[ident] = 3.0


def _add_english_words(norm: str, weights: TermWeights) -> None:
    """English words (2) and the Chinese the word list gives for them (1.5)."""
    for word in LATIN_WORD.findall(norm):
        if word in EN_STOP or len(word) < 2:
            continue
        weights.setdefault(word, 2.0)
        for zh in chinese_of(word):
            if not HAN_RUN.fullmatch(zh):
                weights.setdefault(normalize_question(zh), 1.5)
                continue
            for gram in han_bigrams(zh):
                weights.setdefault(gram, 1.5)


def _add_english_of_chinese(norm: str, weights: TermWeights) -> None:
    for zh, ens in chinese_to_english().items():
        if zh in norm:
            for en in ens:
                if " " not in en:
                    weights.setdefault(en, 1.5)


def _is_filler_bigram(gram: str) -> bool:
    """Two stop characters, or a question word's bigram: no topic in it."""
    if len(gram) == 2 and all(ch in ZH_STOP_CHARS for ch in gram):
        return True
    return gram in _QUESTION_BIGRAMS


def _add_chinese_bigrams(norm: str, weights: TermWeights) -> None:
    for run in HAN_RUN.findall(norm):
        for gram in han_bigrams(run):
            if not _is_filler_bigram(gram):
                weights.setdefault(gram, 1.0)


# Related-entry probes rank the same question against many notes, and a note's pieces again on
# every question: both are cached (read only here).
_question_weights = lru_cache(maxsize=256)(question_terms)
_piece_terms = lru_cache(maxsize=1 << 14)(piece_terms)
_normalized = lru_cache(maxsize=1 << 14)(normalize_question)


def warm_up() -> None:
    """Load the data files now rather than on the first question."""
    english_to_chinese()
    intent_rules()


GLOSSARY_WEIGHT = 1.5


def glossary_terms(question: str, glossary: Glossary | None) -> TermWeights:
    """Every term of the glossary concepts the question names ("AMD" → rocm, MI300X, HIP…),
    matched as phrases in the note: the bilingual glossary bridges languages and jargon."""
    if glossary is None:
        return {}
    out: TermWeights = {}
    for expansion in glossary.expand(question):
        for term in concept_terms(glossary, expansion.concept):
            norm = normalize_question(term)
            if len(norm) >= 2:
                out.setdefault(norm, GLOSSARY_WEIGHT)
    return out


def concept_terms(glossary: Glossary, concept_id: str) -> list[str]:
    """Every term of a concept and of the narrower concepts it includes ("Blackwell" → SM120, B200…),
    as the search does: asking about the broad concept finds notes naming a narrow one."""
    terms: list[str] = []
    seen: set[str] = set()
    todo = [concept_id]
    while todo:
        cid = todo.pop()
        concept = glossary.concepts.get(cid)
        if concept is None or cid in seen:
            continue
        seen.add(cid)
        terms.extend(concept.terms)
        todo.extend(concept.includes)
    return terms


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def phrase_in(phrase: str, low: str) -> bool:
    """A glossary phrase in normalised text; Latin phrases at word boundaries."""
    start = 0
    while (at := low.find(phrase, start)) >= 0:
        before = low[at - 1] if at else " "
        after = low[at + len(phrase)] if at + len(phrase) < len(low) else " "
        if not (_latin(phrase[0]) and _latin(before)) and not (_latin(phrase[-1]) and _latin(after)):
            return True
        start = at + 1
    return False


def rank_pieces(
    question: str, pieces: Sequence[str], glossary: Glossary | None = None
) -> list[tuple[float, int]]:
    """(score, index) of every piece, best first; a score of 0 means nothing matched."""
    return [(score, index) for score, index, _ in rank_pieces_detailed(question, pieces, glossary)]


def rank_pieces_detailed(
    question: str, pieces: Sequence[str], glossary: Glossary | None = None
) -> list[tuple[float, int, float]]:
    """(score, index, matched weight) of every piece, best first.

    The matched weight is the plain sum of the weights of the question terms the piece has:
    one Latin word (2) or identifier (3) or glossary term (1.5) is a real match; one Chinese
    bigram (1) alone is not enough to claim the note answers the question.
    """
    weights = _question_weights(question)
    phrases = {t: w for t, w in glossary_terms(question, glossary).items() if t not in weights}
    lowered = [_normalized(p) for p in pieces]
    hits = [_found(weights, phrases, _piece_terms(p), low) for p, low in zip(pieces, lowered, strict=True)]
    doc_freq = Counter(term for found in hits for term in found)
    scored: list[tuple[float, int, float]] = []
    for index, (found, low) in enumerate(zip(hits, lowered, strict=True)):
        score = sum(weight / doc_freq.get(term, 1) ** 0.5 for term, weight in found.items())
        matched = sum(found.values())
        for extra in _fuzzy(weights, found, low):
            score += extra
            matched += extra
        scored.append((round(score, 4), index, matched))
    scored.sort(key=lambda si: (-si[0], si[1]))
    return scored


def _found(weights: TermWeights, phrases: TermWeights, bag: set[str], low: str) -> TermWeights:
    """The question's terms a piece has, and the glossary phrases it holds."""
    found = {t: w for t, w in weights.items() if t in bag}
    found.update({t: w for t, w in phrases.items() if phrase_in(t, low)})
    return found


FUZZY_SHARE = 0.6  # a term found only fuzzily counts this share of its weight
FUZZY_SCORE = 85


def _fuzzy(weights: TermWeights, found: TermWeights, low: str) -> list[float]:
    """Credit for each of the question's longer Latin terms a piece nearly has (a typo, another form)."""
    return [
        FUZZY_SHARE * weight
        for term, weight in weights.items()
        if term not in found
        and len(term) >= 4
        and term.isascii()
        and fuzz.partial_ratio(term, low) >= FUZZY_SCORE
    ]
