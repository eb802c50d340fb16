"""One scorer for follow-up answers: every clause of the note and every metadata fact of the entry
is a candidate, scored against the question; the question's kind only weighs the candidates.

A candidate's score is what it shares with the question's subject (identifiers, flags and numbers
exactly; words in both languages through the search glossary and a small word list; the rest
fuzzily), plus its fit with the kinds the question's cue words name (`data/kind_priors.yaml`:
the part it comes from, the words or shapes it holds). Nothing is ruled out up front: a phrasing
no cue word knows still finds the clause that shares its words.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import islice

from rapidfuzz import fuzz, process

from chatbot.answers import dictionary
from chatbot.answers.candidates import SHORT_CLAUSE, Candidate, KindPrior, kind_priors
from chatbot.answers.intents import Intent, Reading, cached_reading
from chatbot.digest import clauses
from chatbot.search import Glossary
from chatbot.search.glossary import Expansion
from chatbot.text import HAN_RUN, INFLECTIONS, LATIN_WORD, han_bigrams, normalize_question, once, stem
from chatbot.yamlfast import load_yaml

# --- the question's terms -----------------------------------------------------------------------

IDENT_RE = re.compile(
    r"`([^`]+)`|(#\d{2,7}\b|--[a-z][\w-]+|[A-Za-z_][A-Za-z0-9_]*(?:[._][A-Za-z0-9_]+)+(?:\(\))?|\d+(?:\.\d+)?\s?(?:gib|gb|mib|ms|%|x\b))"
)
_EN_STOP_WORDS = (
    "a an the is are was were be been do does did what which who whom whose why how when where this that "
    "these those it its of in on at to for from by with about and or not no can could should would will "
    "i me my we our you your they them their there here pr prs please tell explain any some more most "
    "much many one two three has have had get got so if then than also just note entry it's what's "
    "whats doesn't into as up out over use used using way like yet still ever all there's anything "
    "change changes changed fix fixes fixed work works mean means thing stuff say says said happen "
    "happened point main idea really actually ok hey bot pls plz know need want there touch mention "
    "mentions reference references other others give send anyway real question questions quick wondering "
    "better worse through go goes going"
)
EN_STOP = frozenset(_EN_STOP_WORDS.split())
ZH_STOP_CHARS = frozenset("什么怎么为何哪些吗呢吧啊呀的了是这那个一下请问能否可以有没么啥咋谁它该里")
TermWeights = dict[str, float]
BIGRAM = 1.0  # a Chinese character bigram of the subject
DICTIONARY = 1.0  # a word the general dictionary gives for one of the subject's (dictionary.py)


@lru_cache(maxsize=1)
def _word_list() -> dict[str, tuple[str, ...]]:
    """General engineering words of questions and the Chinese the notes use for them."""
    text = resources.files("chatbot.answers").joinpath("data/followup_terms.yaml").read_text(encoding="utf-8")
    return {str(k).casefold(): tuple(str(v) for v in vs) for k, vs in load_yaml(text)["terms"].items()}


def chinese_of(word: str) -> tuple[str, ...]:
    """The Chinese the word list gives for an English word or its uninflected form."""
    words = _word_list()
    return words.get(word, ()) or words.get(stem(word, INFLECTIONS), ())


@lru_cache(maxsize=1)
def _english_of() -> dict[str, tuple[str, ...]]:
    """Chinese words and the English a note may say them in: the word list read backwards and
    the common question words (`question_words`)."""
    out: dict[str, list[str]] = {}
    for en, zhs in _word_list().items():
        for zh in zhs:
            if HAN_RUN.fullmatch(zh) and len(zh) >= 2:
                out.setdefault(zh, []).append(en)
    for zh, ens in _question_words().items():
        out.setdefault(zh, []).extend(e for e in ens if e not in out.get(zh, ()))
    return {zh: tuple(ens) for zh, ens in out.items()}


@lru_cache(maxsize=1)
def _question_words() -> dict[str, tuple[str, ...]]:
    text = resources.files("chatbot.answers").joinpath("data/followup_terms.yaml").read_text(encoding="utf-8")
    words = load_yaml(text).get("question_words") or {}
    return {str(zh): tuple(normalize_question(str(e)) for e in ens) for zh, ens in words.items()}


def read_word_lists() -> None:
    """The word lists (`data/followup_terms.yaml`), read now by the answerer's warm-up rather
    than by the first question that names a word (bench/scale.py's answer p99: a few of its 300
    answers each paid one of these reads)."""
    _english_of()
    _ordinary_concepts()


@lru_cache(maxsize=1024)
def subject_terms(subject: str) -> TermWeights:
    """The subject's terms: identifiers, flags and numbers 3, words 2 (their Chinese 1.5), Chinese
    bigrams 1; the first weight a term gets stays."""
    norm = normalize_question(subject)
    weights: TermWeights = {}
    for quoted, bare in IDENT_RE.findall(norm):
        if ident := (quoted or bare).strip():
            weights[ident] = 3.0
    _add_words(norm, weights)
    _add_chinese(norm, weights)
    return weights


def _add_chinese(norm: str, weights: TermWeights) -> None:
    """The word list read backwards (1.5: "有哪些策略" looks for `strategy`), then bigrams (1)."""
    for zh, ens in _english_of().items():
        if zh in norm:
            weights.update({w: 1.5 for w in _english_words(ens) if w not in weights})
    grams = (g for run in HAN_RUN.findall(norm) for g in han_bigrams(run))
    weights.update({g: BIGRAM for g in grams if g not in weights and not set(g) <= ZH_STOP_CHARS})
    _add_glossed(norm, weights)


def _add_glossed(norm: str, weights: TermWeights) -> None:
    """The general dictionary's English for the Chinese words (`DICTIONARY`)."""
    for run in HAN_RUN.findall(norm):
        glossed = (_uninflected(w) for w in dictionary.english_of(run) if w not in EN_STOP)
        weights.update({w: DICTIONARY for w in glossed if w not in weights})


def _english_words(phrases: Sequence[str]) -> list[str]:
    """The words of English phrases ("watch out" → watch), stop words aside."""
    return [w for en in phrases for w in en.split() if w not in EN_STOP]


def _add_words(norm: str, weights: TermWeights) -> None:
    """English words (2, uninflected) and the Chinese the word list gives for them (1.5)."""
    for word in LATIN_WORD.findall(norm):
        if word in EN_STOP or len(word) < 2:
            continue
        weights.setdefault(_uninflected(word), 2.0)
        for zh in chinese_of(word):
            grams = han_bigrams(zh) if HAN_RUN.fullmatch(zh) else [normalize_question(zh)]
            weights.update({g: 1.5 for g in grams if g not in weights})
        weights.update({zh: DICTIONARY for zh in dictionary.chinese_of(word) if zh not in weights})


def _uninflected(word: str) -> str:
    return stem(word, INFLECTIONS) if len(word) > 4 else word


@lru_cache(maxsize=1 << 14)
def candidate_terms(text: str) -> tuple[str, frozenset[str]]:
    """A candidate's normalised text and the terms it offers."""
    norm = normalize_question(text)
    terms = {(q or b).strip() for q, b in IDENT_RE.findall(norm)}
    for word in LATIN_WORD.findall(SNAKE_RE.sub(" ", norm)):
        terms.update(_forms(word))
    for name in SNAKE_RE.findall(norm):  # a piece of a name is weaker evidence than a word
        terms.update(PIECE + f for word in LATIN_WORD.findall(name) for f in _forms(word) if f not in terms)
    for run in HAN_RUN.findall(norm):
        terms.update(han_bigrams(run))
    return norm, frozenset(terms)


SNAKE_RE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")
PIECE = "~"  # marks a word found only inside a snake_case name (`TYPE_CHECKING`)


def _forms(word: str) -> list[str]:
    """A word and the forms a question may use: uninflected, without -er ("reviewer" holds
    review), its hyphenated parts ("pull-based" holds pull)."""
    forms = [word, *word.split("-")] if "-" in word else [word]
    if len(word) > 4 and word[-1] in "sdg":
        forms.append(stem(word, INFLECTIONS))
    if len(word) >= 7 and word.endswith(("er", "ers")):
        forms.append(word[: word.rindex("er")])
    return [f for f in forms if f]


def expanded(glossary: Glossary, subject: str) -> list[Expansion]:
    """`glossary.expand(subject)`, once per subject within an answer (its scorer, its clauses'
    scorer and its denial each ask)."""
    return list(once("expand", (id(glossary), subject), lambda: glossary.expand(subject)))


def normalized(text: str) -> str:
    """`normalize_question(text)` of a whole entry's text, once within an answer."""
    return once("normalized", text, lambda: normalize_question(text))


def concept_terms(glossary: Glossary, concept_id: str) -> list[str]:
    """Every term of a concept and of the narrower concepts it includes."""
    terms: list[str] = []
    todo, seen = [concept_id], set()
    while todo:
        cid = todo.pop()
        concept = glossary.concepts.get(cid)
        if concept is None or cid in seen:
            continue
        seen.add(cid)
        terms.extend(concept.terms)
        todo.extend(concept.includes)
    return terms


def phrase_in(phrase: str, low: str) -> bool:
    """A phrase in normalised text; a Latin phrase only at word boundaries."""
    start = 0
    while (at := low.find(phrase, start)) >= 0:
        before = low[at - 1] if at else " "
        end = at + len(phrase)
        after = low[end] if end < len(low) else " "
        if not (_latin(phrase[0]) and _latin(before)) and not (_latin(phrase[-1]) and _latin(after)):
            return True
        start = at + 1
    return False


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


# --- scoring ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate with its score: `lexical` what it shares with the subject, `fit` its kind weight."""

    candidate: Candidate
    score: float
    lexical: float
    fit: float
    shared: float  # the plain sum of the weights of the subject's terms it has


FUZZY_SHARE = 0.6  # a term found only fuzzily counts this share of its weight
FUZZY_SCORE = 85
FACT_SHARE = 0.375  # a metadata line's words count less: the question is about the note
SECONDHAND = frozenset(
    {"summary", "title", "verdict"}
)  # parts that repeat the note: their words count half too
LEX_BY_FIT = 0.5  # a clause both on the subject and of the asked kind counts its words more


def fit(kinds: Mapping[Intent, float], candidate: Candidate) -> float:
    """How well a candidate's part and words answer the kinds the question names."""
    priors = kind_priors()
    total = 0.0
    for kind, weight in kinds.items():
        prior = priors.get(kind)
        if prior is None:
            continue
        part = max((prior.parts.get(p, 0.0) for p in candidate.parts), default=0.0)
        part = max(part, ABOUT_FIT if kind in _about_kinds(candidate.about) else 0.0)
        cue = _cue(prior, candidate)
        total += weight * max(part, cue, (part + cue) / 1.5)
    return total


ABOUT_FIT = 4.0  # a clause under the curator's own question or label of the asked kind ("Q: catch?")


def _about_kinds(about: str) -> frozenset[str]:
    """The kinds the curator's question or label names, read as a question ("catch?" → risks)."""
    return frozenset(cached_reading(about).kinds) if about else frozenset()


def _cue(prior: KindPrior, candidate: Candidate) -> float:
    """The weight of the kind's strongest cue in the candidate's words: none for a fact, half
    for the title (its words say what the PR is, not how or why)."""
    if candidate.fact:
        return 0.0
    cue = max((w for p, w in prior.cues if p.search(candidate.text)), default=0.0)
    return cue * FACT_SHARE if SECONDHAND & set(candidate.parts) else cue


def score_candidates(
    reading: Reading, candidates: Sequence[Candidate], glossary: Glossary | None
) -> list[Scored]:
    """Every candidate scored, best first (ties in note order)."""
    weights = _with_cue_terms(subject_terms(reading.subject), reading.cues)
    texts = [candidate_terms(f"{c.about}: {c.text}" if c.about else c.text) for c in candidates]
    phrases = _phrases_held(reading, glossary, weights, texts)
    near = _near_words(weights, texts)
    found = [_shared(weights, phrases, near, norm, bag) for norm, bag in texts]
    doc_freq = Counter(t for f in found for t in f)
    scored = [_scored(reading, c, f, doc_freq) for c, f in zip(candidates, found, strict=True)]
    order = {id(s): i for i, s in enumerate(scored)}
    return sorted(scored, key=lambda s: (-s.score, order[id(s)]))


def _phrases_held(
    reading: Reading,
    glossary: Glossary | None,
    weights: TermWeights,
    texts: Sequence[tuple[str, frozenset[str]]],
) -> TermWeights:
    """The subject's glossary phrases (once per answer) that some candidate holds, in their order:
    a concept's terms are many, the candidates hold few of them, and only those are looked for in
    each (bench/scale.py's follow-up answer row)."""
    key = (id(glossary), reading.subject, reading.cues)  # what the phrases are of, in one answer
    phrases = once("phrases", key, lambda: _glossary_phrases(reading.subject, glossary, weights))
    joined = "\n".join(norm for norm, _ in texts)
    return {t: w for t, w in phrases.items() if t in joined}


def _scored(reading: Reading, c: Candidate, found: TermWeights, doc_freq: Counter[str]) -> Scored:
    """One candidate's score: shared terms (rarer ones count more), times and plus its kind fit."""
    kind = fit(reading.kinds, c)
    lexical = sum(w / doc_freq[t] ** 0.5 for t, w in found.items())
    if c.fact and kind == 0:
        lexical = 0.0  # a fact answers only the kind that asks for it ("crash" in the tags)
    elif c.fact or SECONDHAND & set(c.parts) or (set(c.parts) == {"audience"} and kind == 0):
        lexical *= FACT_SHARE  # who should read it names topics; it answers only who
    score = lexical * (1 + LEX_BY_FIT * min(kind, 2.0)) + kind
    return Scored(c, round(score, 4), lexical, kind, sum(_as_word(t, w) for t, w in found.items()))


WORD_SHARED = 2.0  # a shared Chinese bigram that is a word ("开销") counts for the floor as a word does


def _as_word(term: str, weight: float) -> float:
    """A term's weight for the floor: a Chinese dictionary word as much as an English word."""
    if weight == BIGRAM and HAN_RUN.fullmatch(term) and dictionary.is_word(term):
        return max(weight, WORD_SHARED)
    return weight


def _near_words(
    weights: TermWeights, texts: Sequence[tuple[str, frozenset[str]]]
) -> dict[str, frozenset[str]]:
    """For each longer Latin term no candidate has, the entry's words it nearly is (a typo,
    another form): looked up once over the entry's words, not per candidate."""
    bags = tuple(bag for _, bag in texts)
    vocabulary, words = once("vocabulary", bags, lambda: _vocabulary(bags))
    missing = [t for t in weights if len(t) >= 4 and t.isascii() and t not in vocabulary]  # Latin, 4+
    return {term: _near(term, words) for term in missing}


def _vocabulary(bags: tuple[frozenset[str], ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Every term of an entry's candidates, and its Latin words of three letters or more, sorted
    (`_near` finds the words a term begins by bisection). Worked out once per answer, not kept
    after it: the last 256 entries' were kept, big sets every collector pass went through."""
    vocabulary: frozenset[str] = frozenset().union(*bags)
    return vocabulary, tuple(sorted(w for w in vocabulary if len(w) >= 3 and w.isascii()))


def _near(term: str, words: Sequence[str]) -> frozenset[str]:
    """Words a typo away, or that the term begins ("nixl" in NixlConnector)."""
    matches = process.extract(term, words, scorer=fuzz.ratio, score_cutoff=FUZZY_SCORE, limit=None)
    return frozenset(w for w, _, _ in matches) | frozenset(_beginning_with(term, words))


def _beginning_with(term: str, words: Sequence[str]) -> Iterator[str]:
    """The words (sorted) that begin with the term: those from where it would stand, while they
    do (each question term not in the entry looked through all its words: bench/scale.py's
    follow-up answer row)."""
    for word in islice(words, bisect_left(words, term), None):
        if not word.startswith(term):
            return
        yield word


CUE_SHARE = 0.5  # a cue word of the question found in a clause counts this share of its weight


def _with_cue_terms(weights: TermWeights, cues: str) -> TermWeights:
    """The subject's terms and, for less, the cue words' own ("why did it crash" finds 崩溃)."""
    if not cues:
        return weights
    extra = {t: w * CUE_SHARE for t, w in subject_terms(cues).items() if t not in weights}
    return {**weights, **extra}


def focused(reading: Reading, candidate: Candidate, glossary: Glossary | None) -> Candidate:
    """The candidate with, as its short form, the clause of it that best answers the question
    (the same scorer over its clauses) when that is not its first clause."""
    parts = clauses(candidate.text)
    if candidate.fact or candidate.short or len(parts) < 2:
        return candidate
    pieces = [Candidate(candidate.parts, p, candidate.source) for p in parts if len(p) >= SHORT_CLAUSE]
    if not pieces:
        return candidate
    best = score_candidates(reading, pieces, glossary)[0]
    if best.candidate.text == parts[0] or best.score <= 0:
        return candidate
    return Candidate(candidate.parts, candidate.text, candidate.source, best.candidate.text)


def _glossary_phrases(subject: str, glossary: Glossary | None, weights: TermWeights) -> TermWeights:
    """Every term of the glossary concepts the subject names, matched as phrases (1.5)."""
    if glossary is None or not subject.strip():
        return {}
    out: TermWeights = {}
    for expansion in expanded(glossary, subject):
        for term in concept_terms(glossary, expansion.concept):
            norm = normalize_question(term)
            if len(norm) >= 2 and norm not in weights:
                out.setdefault(norm, 1.5)
    return out


def _shared(
    weights: TermWeights,
    phrases: TermWeights,
    near: dict[str, frozenset[str]],
    norm: str,
    bag: frozenset[str],
) -> TermWeights:
    """The subject's terms a candidate has: exactly, as glossary phrases, or nearly (a typo)."""
    found = {t: w for t, w in weights.items() if t in bag}
    found.update({t: FUZZY_SHARE * w for t, w in weights.items() if t not in found and PIECE + t in bag})
    found.update({t: w for t, w in phrases.items() if phrase_in(t, norm)})
    for term, words in near.items():
        if words & bag:
            found[term] = FUZZY_SHARE * weights[term]
    return found


def concepts_missing(
    subject: str, glossary: Glossary | None, entry_text: str, *, ordinary: bool = False
) -> list[str]:
    """The named glossary concepts the subject asks about (hardware, models, features: a label
    with a capital, digit or a joined name, `FlashInfer`, `SM120`, `gpt-oss`) when the entry names
    none of them; an ordinary concept ("attention", "性能") may be said in words the glossary lacks,
    so it never denies (`ordinary`: those too, when nothing else answers). Each named concept
    the entry lacks is named in the denial."""
    if glossary is None or not subject.strip():
        return []
    named = [
        e for e in _concepts_named(subject, glossary) if ordinary or _a_named_concept(glossary, e.concept)
    ]
    text = normalized(entry_text)
    return [e.matched for e in named if not _concept_in(glossary, e.concept, text)]


def _concept_in(glossary: Glossary, concept_id: str, text: str) -> bool:
    terms = (t for t in concept_terms(glossary, concept_id) if len(t) >= 2)
    return any(phrase_in(normalize_question(t), text) for t in terms)


def _a_named_concept(glossary: Glossary, concept_id: str) -> bool:
    """A concept that is a name (hardware, a model, a feature), not an ordinary word of
    engineering (`data/followup_terms.yaml: ordinary_concepts`)."""
    return concept_id in glossary.concepts and concept_id not in _ordinary_concepts()


@lru_cache(maxsize=1)
def _ordinary_concepts() -> frozenset[str]:
    text = resources.files("chatbot.answers").joinpath("data/followup_terms.yaml").read_text(encoding="utf-8")
    return frozenset(str(c) for c in load_yaml(text).get("ordinary_concepts") or ())


def words_missing(
    subject: str, candidates: Sequence[Candidate], question: str, names: frozenset[str] = frozenset()
) -> list[str]:
    """The distinctive terms of the subject no candidate (note or metadata) names: an identifier
    or flag, a name with digits ("h100", "70 GiB"), an acronym the asker wrote in capitals
    ("ARM") or the glossary spells so (`names`: "ttft"). An ordinary word never denies: it may be
    a paraphrase, a colloquial word or the English of a Chinese note's word."""
    texts = [candidate_terms(c.text) for c in candidates]
    distinct = _distinct_words(subject, question, names)
    missing = [w for w in distinct if not any(_named(f, texts) for f in (w, *chinese_of(w)))]
    idents = [t for t, w in subject_terms(subject).items() if w >= IDENT_WEIGHT and t not in distinct]
    return missing + [t for t in idents if not _written(t, texts)]


# A yes/no question about the change's reach: "does it work with multimodal models too",
# "LMCache connector 也修了吗". What it asks about is beyond the note unless the note names it.
SCOPE_RE = re.compile(r"(?i:\b(?:also|as well|either)\b|\btoo\s*[?？]?\s*$)|也")


def scope_missing(subject: str, question: str, candidates: Sequence[Candidate]) -> list[str]:
    """The English words of a question about the change's reach ("…too?", "也…吗") that no
    candidate names, in either language, when they are at least half of its English words:
    there the note is silent, whatever else it shares."""
    if not SCOPE_RE.search(question):
        return []
    texts = [candidate_terms(c.text) for c in candidates]
    asked = [w for w in _subject_words(subject) if w not in SCOPE_WORDS]
    missing = [w for w in asked if not any(_named(f, texts) for f in _either_language(w))]
    return missing if len(missing) * 2 >= len(asked) else []  # silent on most of what is asked


SCOPE_WORDS = frozenset({"also", "too", "either", "well"})


def _either_language(word: str) -> tuple[str, ...]:
    """A word as a note may write it: as asked, uninflected, or in Chinese (the word list's,
    the general dictionary's)."""
    return (word, _uninflected(word), *chinese_of(word), *dictionary.chinese_of(word))


def _distinct_words(subject: str, question: str, names: frozenset[str]) -> list[str]:
    return [w for w in _subject_words(subject) if w in names or _a_name(w, question)]


def _written(ident: str, texts: Sequence[tuple[str, frozenset[str]]]) -> bool:
    return any(ident in norm for norm, _ in texts)


IDENT_WEIGHT = 3.0  # subject_terms' weight of identifiers, flags and numbers with units


_NAMES: dict[int, tuple[Glossary, frozenset[str]]] = {}
ACRONYM_RE = re.compile(r"[A-Z].*[A-Z0-9]|\d")


def glossary_names(glossary: Glossary | None) -> frozenset[str]:
    """The glossary's one-word terms spelled as names (`TTFT`, `FlashInfer`, `H100`), folded:
    distinctive however the asker types them."""
    if glossary is None:
        return frozenset()
    cached = _NAMES.get(id(glossary))
    if cached is None or cached[0] is not glossary:
        terms = (t for c in glossary.concepts.values() for t in (*c.en, *c.aliases))
        names = frozenset(t.casefold() for t in terms if " " not in t and ACRONYM_RE.search(t[1:] or "x"))
        cached = _NAMES[id(glossary)] = (glossary, names)
    return cached[1]


# A decimal measure (`2.76x`, `1.5ms`) is one word, not a `76x` the note lacks; a bare decimal or a
# version (`0.8908`, `0.6.3`) stays as it was read before: its pieces are plain digits.
DECIMAL_WORD_RE = re.compile(r"(?<![\w.])\d+\.\d+(?:x|ms|s|gb|gib|%)(?![\w.])")


def _subject_words(subject: str) -> list[str]:
    norm = normalize_question(subject)
    decimals = DECIMAL_WORD_RE.findall(norm)
    words = LATIN_WORD.findall(DECIMAL_WORD_RE.sub(" ", norm))
    return decimals + [w for w in words if w not in EN_STOP and len(w) >= 2]


def _a_name(word: str, question: str) -> bool:
    """A word that is a name: with digits ("h100"), or an acronym the asker wrote in capitals
    ("ARM", "TTFT")."""
    if any(ch.isdigit() for ch in word):
        return not word.isdigit()
    return word.upper() in CAPITALS_RE.findall(question)


CAPITALS_RE = re.compile(r"(?<![A-Za-z])[A-Z]{2,8}(?![A-Za-z])")


def _named(word: str, texts: Sequence[tuple[str, frozenset[str]]]) -> bool:
    """Whether a name is in the candidates as written: no fuzzy match (`gemma3n` is not
    `gemma3`, `h200` not `h100`)."""
    cuda = CUDA_TAG_RE.fullmatch(word)
    if cuda:  # a wheel's tag: "cu118" is said "CUDA 11.8", "cu124" "12.4"
        version = re.compile(rf"(?<![\d.]){cuda[1]}\.{cuda[2]}(?![\d])")
        return any(version.search(norm) for norm, _ in texts) or any(word in bag for _, bag in texts)
    measure = MEASURE_WORD_RE.fullmatch(word)
    if measure:  # "24g" is said "24 GB", "13b" "13B"
        unit = re.compile(rf"(?<![\d.]){re.escape(measure[1])}\s*{re.escape(measure[2])}")
        return any(unit.search(norm) for norm, _ in texts)
    return any(word in bag or phrase_in(word, norm) for norm, bag in texts)


CUDA_TAG_RE = re.compile(r"cu(1\d)(\d)")
MEASURE_WORD_RE = re.compile(r"(\d+(?:\.\d+)?)(g|gb|gib|m|mb|k|b|t|ms|s|x|bits?)")


@lru_cache(maxsize=4096)
def is_english(text: str) -> bool:
    """Whether a note is mostly Latin letters (English, with perhaps a few Chinese terms)."""
    latin = len(LATIN_LETTERS_RE.findall(text))
    return latin >= 0.6 * (latin + len(HAN_CHARS_RE.findall(text)))


LATIN_LETTERS_RE = re.compile(r"[A-Za-z]")
HAN_CHARS_RE = re.compile(r"[\u4e00-\u9fff]")


def _concepts_named(subject: str, glossary: Glossary) -> list[Expansion]:
    """The concepts whose term the subject itself holds (not a stem of it, not a stop word)."""
    asked = normalize_question(subject)
    return [
        e
        for e in expanded(glossary, subject)
        if phrase_in(normalize_question(e.matched), asked) and normalize_question(e.matched) not in EN_STOP
    ]
