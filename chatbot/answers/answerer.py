"""Follow-up answers: a question about one entry, answered with the curator's own words.

Every clause of the note and every metadata fact is a candidate (`chatbot.answers.retrieval`);
one scorer ranks them by what they share with the question, weighed by the kinds of question its
cue words name. The answer quotes the best (a list question: the list), short by construction:
everything but the PR link stays under three quarters of the note. It says the note does not
cover something only when no candidate clears the floor, naming the subject in the asker's words
and, when something comes close, quoting it.
"""

from __future__ import annotations

import datetime as dt
import re
import string
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain, islice

from chatbot.answers.addressing import addressing_rules
from chatbot.answers.asking import asking_part, questions
from chatbot.answers.candidates import Candidate, entry_candidates, kind_priors
from chatbot.answers.composer import Composer, Lang, answer_words, words_in
from chatbot.answers.intents import Intent, Reading, cached_reading
from chatbot.answers.polarity import polarity
from chatbot.answers.pr_facts import answer_from_facts
from chatbot.answers.retrieval import (
    EN_STOP,
    Scored,
    concepts_missing,
    focused,
    glossary_names,
    normalized,
    read_word_lists,
    scope_missing,
    score_candidates,
    subject_terms,
    words_missing,
)
from chatbot.answers.slots import measures, slots
from chatbot.answers.typed import (
    MIN_FIT,
    MIN_SHARED,
    YES_NO_RE,
    Typed,
    keeping_what_is_asked,
    said_absent,
    typed_ranking,
)
from chatbot.digest import Entry, FactsLookup, Library, Ref, no_facts
from chatbot.search import Glossary, load_glossary
from chatbot.text import (
    FOLDS_TO_ASCII,
    LATIN_WORD,
    has_han,
    nfkc,
    normalize_question,
    one_answer,
    strip_slack_markup,
)

BUDGET_SHARE = 0.75
MAX_QUESTION_CHARS = 300
OFF_KIND_SHARED = 1.5  # a candidate of another kind than the one asked shares this much (leave-one-set-out on the training pool)
BAND = 0.4  # candidates within this share of the best score are quoted with it (bench/tune_answers.py)
MOST = 3  # clauses quoted in one answer, at most (a list question: MOST_LISTED)
MOST_LISTED = 4
LIST_KINDS = frozenset({"focus"})  # "重点看什么" asks for the points, all that fit
LIST_RE = re.compile(r"哪些|哪几|几件|几点|几个|列出|列一下|(?i:\bwhich\b|\blist\b|\bwhat are\b|\ball\b)")
POINTS_RE = re.compile(r"哪些|哪几|几点|列出|列一下|(?i:\blist\b|\bwhat are the\b)")  # asks for the points
TOPIC_CHARS = 40
RELATED = "refs"
MAX_LINKED = 3  # related PRs given with their links, at most


@dataclass(frozen=True)
class Answer:
    """What the bot says back, which kind of question it took it for, and what it quoted."""

    text: str
    intent: Intent
    sources: list[str]
    lang: Lang
    found: bool = True  # False when the note has nothing on it and the answer says so

    def to_json(self) -> dict[str, object]:
        return {
            "answer": self.text,
            "intent": self.intent,
            "sources": self.sources,
            "lang": self.lang,
            "found": self.found,
        }


def _lang(question: str) -> Lang:
    return "zh" if has_han(question) else "en"


@dataclass(frozen=True)
class _TagIndex:
    """Entries in digest order and, per casefolded tag, the ranks of the entries carrying it."""

    source: Sequence[Entry]
    ordered: list[Entry]
    by_tag: dict[str, list[int]]

    @classmethod
    def build(cls, entries: Sequence[Entry]) -> _TagIndex:
        ordered = sorted(entries, key=lambda e: (e.digest, e.position))
        by_tag: dict[str, list[int]] = {}
        for rank, entry in enumerate(ordered):
            for tag in {t.casefold() for t in entry.tags}:
                by_tag.setdefault(tag, []).append(rank)
        return cls(entries, ordered, by_tag)


CANDIDATE_CACHE = 4096


class Answerer:
    """Answers follow-up questions about entries; the library (or entry list) gives related entries.

    Given a `Library`, it reads `library.entries` on every answer, so a refreshed digest folder is
    seen without building a new answerer.
    """

    def __init__(
        self,
        library: Library | Sequence[Entry] = (),
        glossary: Glossary | Callable[[], Glossary] | None = None,
        *,
        warm: bool = True,
        facts: FactsLookup = no_facts,
    ) -> None:
        self.facts = facts  # GitHub's facts about an entry's PR (merged, reviewers, reverts…)
        self._library = library if isinstance(library, Library) else list(library)
        # The search glossary (with DIGEST_DIR's extensions when the wiring passes it, or how to
        # read it) names the concepts of a question in both languages; the bundled one otherwise.
        self._glossary = glossary if isinstance(glossary, Glossary) else None
        self._read_glossary = glossary if callable(glossary) else _bundled_glossary
        self._reading = threading.Lock()
        self._tag_index: _TagIndex | None = None
        self._candidates: dict[tuple[str, Lang], tuple[str, list[Candidate]]] = {}
        if warm:
            self.warm_up()

    def warm_up(self) -> None:
        """Build the tag index and read the glossary and the data files now, not on the first
        answer (`serve` does this once the digests are loaded). Not CC-CEDICT (`dictionary`, half
        a second): the first question that needs it reads it."""
        self._topics()
        self.glossary  # noqa: B018 -- read for its side effect
        kind_priors()
        read_word_lists()
        slots()
        measures()
        answer_words()
        addressing_rules()  # the question splitter's words (which clause asks)
        cached_reading("warm up")

    @property
    def glossary(self) -> Glossary:
        """The glossary, read on first use when given as a function (once, whichever thread asks)."""
        glossary = self._glossary
        if glossary is None:
            with self._reading:
                if self._glossary is None:
                    self._glossary = self._read_glossary()
                glossary = self._glossary
        return glossary

    @glossary.setter
    def glossary(self, glossary: Glossary) -> None:
        self._glossary = glossary

    def answer(self, entry: Entry, question: str) -> Answer:
        """The answer to a reply: its asking part (no quote, no preamble), each of its questions
        (at most three) answered in turn under one PR link. What its parts ask of the same text
        is worked out once for the answer (`one_answer`)."""
        with one_answer():
            return self._answer(entry, question)

    def _answer(self, entry: Entry, question: str) -> Answer:
        question = asking_part(strip_slack_markup(question), MAX_QUESTION_CHARS)
        fact = answer_from_facts(entry, question, self.facts(entry), dt.datetime.now(dt.UTC))
        if fact is not None:
            return Answer(fact.text, fact.intent, ["github"], fact.lang)
        asked = [(kind, q) for kind, q in questions(question) if kind != "other" or question_topic(q)]
        if len(asked) < 2:
            return self._answer_one(entry, question, self._limit(entry))
        return self._answer_several(entry, question, [q for _, q in asked])

    def _answer_several(self, entry: Entry, question: str, asked: Sequence[str]) -> Answer:
        """Each question answered within its share of the budget, in the order asked; the PR link
        once, last."""
        share = self._limit(entry, len(asked))
        parts = [self._answer_one(entry, q, share) for q in asked]
        link = entry.url or ""
        bodies = _within([_without_link(p.text, link) for p in parts], self._limit(entry) - len(link) - 1)
        text = "\n".join([*filter(None, bodies), *filter(None, [link])])
        sources = list(dict.fromkeys(s for p in parts for s in p.sources))
        found = any(p.found for p in parts)
        return Answer(text=text, intent=parts[0].intent, sources=sources, lang=_lang(question), found=found)

    def _limit(self, entry: Entry, questions: int = 1) -> int:
        """The answer's budget (¾ of the note); each of several questions gets its share of the
        quote, the one PR link line counted once."""
        limit = max(int(len(entry.note) * BUDGET_SHARE) - 1, 20)
        if questions == 1:
            return limit
        link = len(entry.url or "") + 1
        quote = limit - link if link * 2 < limit else limit
        return max(quote // questions - 1, 20) + (link if link * 2 < limit else 0)

    def _answer_one(self, entry: Entry, question: str, limit: int) -> Answer:
        lang = _lang(question)
        reading = cached_reading(question)
        composer = Composer(entry, lang, limit)
        scored = score_candidates(reading, self._entry_candidates(entry, lang), self.glossary)
        text = self._compose(entry, question, reading, scored, composer)
        # The kind it was taken for: the cue words', unless the words themselves found the answer.
        kind = reading.top if not composer.found or not scored or scored[0].fit > 0 else "other"
        return Answer(text, kind, list(dict.fromkeys(composer.sources)), lang, composer.found)

    def _entry_candidates(self, entry: Entry, lang: Lang) -> list[Candidate]:
        """The entry's candidates, built once per note and language."""
        key = (entry.id, lang)
        cached = self._candidates.get(key)
        if cached is not None and cached[0] == entry.note:
            return cached[1]
        if len(self._candidates) >= CANDIDATE_CACHE:
            self._candidates.clear()
        candidates = entry_candidates(entry, words_in(lang))
        if entry.all_refs or entry.tags:
            # Said as the related PRs and same-topic entries, looked up only when chosen.
            candidates.append(Candidate(("refs",), words_in(lang)["related"], RELATED, fact=True))
        self._candidates[key] = (entry.note, candidates)
        return candidates

    def _compose(
        self, entry: Entry, question: str, reading: Reading, scored: Sequence[Scored], c: Composer
    ) -> str:
        """The answer from the ranked candidates, or the honest line when none clears the floor."""
        reading, scored, missing = self._ranked(entry, question, reading, scored)
        typed = typed_ranking(entry, question, reading, scored, missing)
        scored = typed.scored
        refusal = self._refusal(entry, question, reading, typed, c)
        if refusal is not None:
            return refusal
        best = scored[0]
        chosen = [
            keeping_what_is_asked(
                typed.slots, self._said(entry, focused(reading, s, self.glossary), c), entry
            )
            for s in _chosen(question, scored, reading.top, typed=bool(typed.slots))
        ]
        chosen = _refs_once(entry, [s for s in chosen if s.text])
        if not chosen:
            return self._not_covered(reading, [], None, c, question)
        if typed.instead:
            topic = _as_asked(" / ".join(typed.instead), question)
            c.found = False  # "The note doesn't name amd; it says: …CUDA-only": a denial, with why
            spaced = f" {topic} " if c.lang == "zh" else topic
            plain = c.word("not_covered").format(topic=spaced.rstrip())
            return _line_kept(c, c.word("instead").format(topic=spaced), chosen, plain)
        prefix = self._prefix(reading, best, question, c)
        return c.quote(prefix, chosen)

    def _refusal(
        self, entry: Entry, question: str, reading: Reading, typed: Typed, c: Composer
    ) -> str | None:
        """The honest line when the note does not answer: no verdict to "值得看吗" (the kind's own
        line, not "doesn't cover 给个评分"), a name it lacks, no holder of the type asked, or the
        best candidate below the floor; None when it answers."""
        best = typed.scored[0] if typed.scored else None
        if _no_verdict(reading, entry):  # the verdict's own line, whichever of the two asked
            return self._not_covered(Reading({"verdict": 1.0}, "", reading.cues), [], best, c, question)
        if best is None or typed.refused(lambda: _denied(reading, best, entry, question)):
            return self._not_covered(reading, typed.missing, best, c, question)
        return None

    def _ranked(
        self, entry: Entry, question: str, reading: Reading, scored: Sequence[Scored]
    ) -> tuple[Reading, Sequence[Scored], list[str]]:
        """The candidates in answering order, and what the question names that the entry lacks."""
        scored = _clause_before_beside_fact(
            _measured_first(question, reading, scored), reading, entry, question
        )
        if not scored:
            return reading, scored, []
        missing = self._missing(entry, reading, scored, question)
        if not missing and not _clears(scored[0], bool(reading.kinds)):
            reading, scored = self._fallback(entry, question, reading, scored)
        return reading, scored, missing

    def _fallback(
        self, entry: Entry, question: str, reading: Reading, scored: Sequence[Scored]
    ) -> tuple[Reading, Sequence[Scored]]:
        """When nothing clears the floor and the question names nothing the note lacks: a question
        of no known kind naming nothing the entry lacks ("咋回事", "list the changes") is asked
        about the note as a whole (its summary; a list question, its points); a kind whose part
        the note lacks is answered by the best clause that clears the floor on its words.
        Otherwise the ranking stands and the honest line follows ("accuracy 掉多少")."""
        if not reading.kinds and not self._names_absent(entry, reading.subject, question):
            kind: Intent = "focus" if POINTS_RE.search(question) else "summary"
            whole = Reading({kind: 1.0}, reading.subject, reading.cues)
            return whole, score_candidates(whole, [s.candidate for s in scored], self.glossary)
        return reading, _words_first(scored)

    def _names_absent(self, entry: Entry, subject: str, question: str) -> bool:
        """Whether the subject names something the entry lacks: a glossary concept, or in a
        Chinese question an English word (there the asker's English is a name: "nightingale")."""
        text = _entry_text(entry)
        if concepts_missing(subject, self.glossary, text, ordinary=True):
            return True
        return has_han(question) and any(w not in normalized(text) for w in _latin_words(subject))

    def _missing(self, entry: Entry, reading: Reading, scored: Sequence[Scored], question: str) -> list[str]:
        """The distinctive things the question names that neither the note nor the metadata does:
        an identifier, a name with digits ("h100"), an acronym ("ARM"), a named glossary concept
        ("FlashInfer")."""
        known = glossary_names(self.glossary)
        candidates = [s.candidate for s in scored]
        names = words_missing(reading.subject, candidates, question, known)
        if names:
            return names
        concepts = concepts_missing(reading.subject, self.glossary, _entry_text(entry))
        if concepts and ALTERNATIVE_RE.search(question) and scored[0].shared >= MIN_SHARED:
            return []  # "sampling or only greedy" on "只支持 greedy": the note names one of them
        if concepts or not YES_NO_RE.search(normalize_question(question)):
            return concepts
        return scope_missing(reading.subject, question, candidates)

    def _prefix(self, reading: Reading, best: Scored, question: str, c: Composer) -> str:
        """The kind's own words when the best candidate answers by its kind; a yes or no first
        when a yes/no question's subject is in the quote; else the plain "From the note"."""
        if best.candidate.fact:
            return c.word("other")
        words = answer_words()
        kind = reading.top
        label = c.word(kind) if best.fit >= MIN_FIT and kind in words else c.word("other")
        answer = _yes_or_no(reading, best, question)
        return c.word(answer) + label if answer else label

    def _not_covered(
        self, reading: Reading, missing: Sequence[str], best: Scored | None, c: Composer, question: str
    ) -> str:
        """One honest line naming what was asked in the asker's words; the closest clause quoted
        when one comes near (a shared word, or the kind's part)."""
        c.found = False
        line = _honest_line(reading, missing, c, question)
        if line == c.word("no_audience"):
            line = _with_topics(line, c)
        if best is None or missing or (best.shared == 0 and best.fit == 0):
            return c.lines([line])
        if best.candidate.fact:
            c.sources.append(best.candidate.source)
            return c.lines([line, c.word("closest") + best.candidate.text])
        return _line_kept(c, f"{line}\n{c.word('closest')}", [best.candidate], line)

    def _said(self, entry: Entry, candidate: Candidate, c: Composer) -> Candidate:
        """The candidate as said: the related PRs' lines looked up now, fitted to the room; a
        clause introducing a list with its list."""
        if candidate.source != RELATED:
            return _with_its_list(entry.note, candidate)
        return Candidate(candidate.parts, self._related_text(entry, c.lang, c.room), RELATED, fact=True)

    # --- related entries -----------------------------------------------------------------------

    @property
    def entries(self) -> list[Entry]:
        if isinstance(self._library, Library):
            return self._library.entries
        return self._library

    def same_topic_entries(self, entry: Entry, limit: int = 2) -> list[Entry]:
        """Other entries of the library sharing the most tags with this one, ties in digest order.
        Looked up by tag: a scan of the library per answer stalled every ack on a 10k-entry library."""
        topics = self._topics()
        shared = Counter(
            chain.from_iterable(topics.by_tag.get(tag, ()) for tag in {t.casefold() for t in entry.tags})
        )
        ranks = (rank for _, rank in sorted((-count, rank) for rank, count in shared.items()))
        others = (topics.ordered[rank] for rank in ranks)
        return list(islice((o for o in others if o.id != entry.id), limit))

    def _topics(self) -> _TagIndex:
        """The tag index of the current entries, rebuilt when the library reloads."""
        entries = self.entries
        if self._tag_index is None or self._tag_index.source is not entries:
            self._tag_index = _TagIndex.build(entries)
        return self._tag_index

    def _related_text(self, entry: Entry, lang: Lang, room: int) -> str:
        """The related PRs — with links while they fit the room, else as `#N` — and the entries
        on the same topics when they fit too."""
        words = words_in(lang)
        refs = entry.all_refs
        lines = _ref_lines(refs, words, room)
        numbers = {r.number for r in refs}
        others = [o for o in self.same_topic_entries(entry) if o.pr not in numbers]
        topic = words["same_topic"] + "；".join(_entry_ref(o) for o in others)
        if others and (not refs or len("\n".join([*lines, topic])) <= room):
            lines.append(topic)
        return "\n".join(lines)


def _as_asked(topic: str, question: str) -> str:
    """The topic's Latin words as the asker wrote them ("arm" → "ARM")."""
    return re.sub(r"[a-z0-9][a-z0-9+\-.]*", lambda m: _spelled(m.group(0), question), topic)


def _spelled(word: str, question: str) -> str:
    """The word (lower-case ASCII) as the question spells it, standing as a word; a pattern
    compiled per word only for a question with a letter `re` folds to an ASCII one (a denial's
    line compiled one per word: bench/scale.py's follow-up answer row)."""
    if FOLDS_TO_ASCII.intersection(question):
        found = re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", question, re.I)
        return found.group(0) if found else word
    folded = question.translate(_ASCII_LOWER)  # as `re.I` compares them, one character for one
    at = folded.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or folded[at - 1] not in _ALNUM) and (end == len(folded) or folded[end] not in _ALNUM):
            return question[at:end]
        at = folded.find(word, at + 1)
    return word


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_ALNUM = frozenset(string.ascii_lowercase + string.digits)


def _line_kept(c: Composer, prefix: str, chosen: Sequence[Candidate], alone: str) -> str:
    """A denial's line with its quotes; on a note too short for both, the line `alone`: the quote
    without it would read as an answer."""
    said = len(c.sources)
    quoted = c.quote(prefix, chosen)
    if quoted.startswith(prefix.split("\n")[0].rstrip()):
        return quoted
    del c.sources[said:]
    return c.lines([alone])


def _with_topics(line: str, c: Composer) -> str:
    """ "Audience not stated" and what the entry is about (its first tags), for the asker to judge."""
    tags = ", ".join(c.entry.tags[:2])
    if c.lang == "zh":
        return f"{line}；主题：{tags}。" if tags else f"{line}。"
    return f"{line}; topics: {tags}." if tags else f"{line}."


def _yes_or_no(reading: Reading, best: Scored, question: str) -> str | None:
    """ "answer_yes"/"answer_no" for a yes/no question whose subject the quote holds, or None; an
    "X or Y" question is answered by neither."""
    if best.shared < MIN_SHARED or not YES_NO_RE.search(normalize_question(question)):
        return None
    if ALTERNATIVE_RE.search(question):
        return None
    problem = reading.top == "risks" and bool(reading.cues)  # "有坑吗": a caveat told is a yes
    answer = polarity(reading.subject, best.candidate.text, problem=problem, testing=reading.top == "tests")
    if answer is None and said_absent(best.candidate.text):
        return "answer_no"  # "有 benchmark 吗" on "no benchmark, no test plan"
    return answer


def _honest_line(reading: Reading, missing: Sequence[str], c: Composer, question: str) -> str:
    """ "The note doesn't cover X." with X as asked; the kind's own line when nothing else is named,
    or when a question about who asks it ("who wrote the v1 ngram one": not "doesn't cover wrote
    the v1 ngram one")."""
    who = not missing and reading.top in WHO_KINDS
    topic = "" if who else _as_asked(" / ".join(missing) or _named_topic(reading.subject, question), question)
    if topic:
        spaced = f" {topic}" if c.lang == "zh" and topic[0].isascii() else topic
        return c.word("not_covered").format(topic=spaced)
    missing_word = f"no_{reading.top}"
    return c.word(missing_word) if missing_word in answer_words() else c.word("not_covered_any")


WHO_KINDS = frozenset({"people", "reviewers"})
# "X 还是 Y", "X or only Y": which of two, not whether ("有 A 或者 B 吗" still asks whether).
ALTERNATIVE_RE = re.compile(r"还是|(?i:\bor\s+(?:only|just|rather|instead|[a-z-]+\s+only)\b)")
QUANTITY_RE = re.compile(
    r"多少|多久|多大|多快|多慢|几倍|几个|[快慢省涨降少多]了?\s*几\s*(?:秒|分钟|小时|成|个点)|(?i:how (?:much|many|long|fast|big)|numbers?\b)"
)
# A number as a measure, not inside a name or an assignment (`level=2`, `Qwen2`).
MEASURE_RE = re.compile(
    r"(?<![\w.=/#-])\d+(?:[.,]\d+)?(?![\d.,]|[A-Za-z]{2})|[-+−]\d+(?:\.\d+)?\s*%|[一二两三四五六七八九十百千万半几]+\s*(?:倍|个|处|行|次|成|种|类|点|条|项|秒|分钟|小时|天)"
)


def _measured_first(question: str, reading: Reading, scored: Sequence[Scored]) -> Sequence[Scored]:
    """For a how-much question, the best candidate that holds a number (and clears the floor)
    ahead of better-scored ones that hold none: the number is the answer."""
    if not scored or not QUANTITY_RE.search(question) or MEASURE_RE.search(scored[0].candidate.text):
        return scored
    kind_asked = bool(reading.kinds)
    for s in scored[1:]:
        if (
            MEASURE_RE.search(s.candidate.text)
            and _clears(s, kind_asked)
            and s.score >= scored[0].score * BAND
        ):
            return [s, *(o for o in scored if o is not s)]
    return scored


def _clause_before_beside_fact(
    scored: Sequence[Scored], reading: Reading, entry: Entry, question: str
) -> Sequence[Scored]:
    """A fact beside the question ("whats different vs the previous attempt" is no list of
    related PRs) gives way to the best clause of the asked kind ("a redo of #5025 w/ …")."""
    if not scored or not scored[0].candidate.fact or not _beside(reading, scored[0], entry, question):
        return scored
    clause = next((s for s in scored[1:] if not s.candidate.fact and s.fit >= MIN_FIT), None)
    return scored if clause is None else [clause, *(s for s in scored if s is not clause)]


def _words_first(scored: Sequence[Scored]) -> Sequence[Scored]:
    """The best clause that clears the floor on its words (not of the asked kind), first."""
    by_words = next((s for s in scored if _clears(s, True) and not s.candidate.fact), None)
    return scored if by_words is None else [by_words, *(s for s in scored if s is not by_words)]


def _latin_words(subject: str) -> list[str]:
    """The subject's English words of three letters or more, stop words aside."""
    return [w for w in LATIN_WORD.findall(normalize_question(subject)) if w not in EN_STOP and len(w) > 2]


def _denied(reading: Reading, best: Scored, entry: Entry, question: str) -> bool:
    """Whether even the best candidate does not answer: below the floor, or beside the question."""
    if best.shared >= MIN_SHARED and said_absent(best.candidate.text):
        return False  # "有 benchmark 吗" on "no benchmark, no test plan": that is the answer
    return not _clears(best, bool(reading.kinds)) or _beside(reading, best, entry, question)


VERDICT_KINDS = frozenset({"why", "verdict"})


def _no_verdict(reading: Reading, entry: Entry) -> bool:
    """Whether the question asks whether to read it and the note gives no verdict: no clause
    is a yes or a no to "值得看吗" there."""
    return reading.top in VERDICT_KINDS and not entry.verdict


def _beside(reading: Reading, best: Scored, entry: Entry, question: str) -> bool:
    """Whether the best candidate is beside the question: a how-much question answered by a
    clause without a number ("acceptance rate 多少"; a size may be said without one, "小范围"), or
    a fact of the entry answering about something else ("guidance backend 啥时候合")."""
    if QUANTITY_RE.search(question) and not MEASURE_RE.search(best.candidate.text):
        return reading.top != "size" and best.fit < MIN_FIT
    return (
        best.candidate.fact
        and "author" not in best.candidate.parts
        and best.shared == 0
        and _elsewhere(reading, entry)
    )


def _elsewhere(reading: Reading, entry: Entry) -> bool:
    """Whether the subject names words (English, identifiers) the entry's titles do not."""
    title = normalize_question(f"{entry.title} {entry.github_title or ''}")
    asked = normalize_question(reading.subject)
    own = [t for t, w in subject_terms(reading.subject).items() if w >= MIN_SHARED * 2 and t in asked]
    return bool(own) and not any(t in title for t in own)


def _clears(best: Scored, kind_asked: bool = False) -> bool:
    """Whether a candidate answers: it fits the asked kind, or shares a real term with the
    subject — two when the question asked for a kind this candidate is not ("what do the tests
    check?" is not answered by any sentence saying "check")."""
    if best.fit >= MIN_FIT:
        return True
    return best.shared >= (OFF_KIND_SHARED if kind_asked and best.fit == 0 else MIN_SHARED)


def _chosen(
    question: str, scored: Sequence[Scored], kind: Intent = "other", *, typed: bool = False
) -> list[Candidate]:
    """The best candidate and those close to it (a list question, or a kind that is a list: the
    list); of a typed question's holders, the best stands on what it holds."""
    best = scored[0]
    most = MOST_LISTED if LIST_RE.search(question) or kind in LIST_KINDS else MOST
    chosen: dict[str, Candidate] = {best.candidate.text: best.candidate} if typed else {}
    for s in (s for s in scored if s.score >= best.score * BAND):
        if len(chosen) < most and _joins(s, best, chosen):
            for text in _continued(s.candidate.text, chosen):
                del chosen[text]
            chosen[s.candidate.text] = s.candidate
    return list(chosen.values())


def _continued(text: str, chosen: dict[str, Candidate]) -> list[str]:
    """The chosen clauses `text` goes on from with more of their list (`…触发: A` before `…触发：
    A、B、C`): the longer one stands for them."""
    whole = _folded(text)
    return [t for t in chosen if _goes_on(whole, _folded(t))]


def _goes_on(whole: str, part: str) -> bool:
    """Whether `whole` is `part` with more of its list after it."""
    return len(whole) > len(part) and whole.startswith(part) and whole[len(part)] in "、,;"


def _joins(s: Scored, best: Scored, chosen: dict[str, Candidate]) -> bool:
    """Whether a close candidate is quoted with the best: new, clearing the floor, and beyond the
    first two, of the same part (the rest of the list, not a caveat after the focus points)."""
    listed = len(chosen) < MOST or bool(set(s.candidate.parts) & set(best.candidate.parts))
    text = _folded(s.candidate.text)
    said = any(text in _folded(c) for c in chosen)  # a piece of a clause already quoted adds nothing
    return bool(text) and not said and _clears(s) and listed


def _folded(text: str) -> str:
    """A clause as compared with another: NFKC (full-width punctuation as ASCII), no spaces (`A：B`
    read as a label's value and `A: B` as a clause are one thing said twice)."""
    return "".join(nfkc(text).split())


REF_NUMBER_RE = re.compile(r"(?<![\w/&])#(\d{3,7})\b|/(?:pull|issues)/(\d+)")


INTRO_MIN = 10
INTRO_RE = re.compile(r"\s*[:：]\s*([^。；;\n]{1,160})")


def _with_its_list(note: str, candidate: Candidate) -> Candidate:
    """A clause that ends where the note goes on with a colon ("X 补充了升级能白拿到的东西：A、B，
    以及 C") promises what follows: said with it, up to the sentence's end."""
    if candidate.fact or "verdict" in candidate.parts or len(candidate.text) < INTRO_MIN:
        return candidate  # `可跳过：…`, `注意：…`: a label's value is no list it promised
    at = note.find(candidate.text)
    listed = INTRO_RE.match(note, at + len(candidate.text)) if at >= 0 else None
    if listed is None:
        return candidate
    colon = "：" if has_han(candidate.text) else ": "
    return replace(candidate, text=f"{candidate.text}{colon}{listed.group(1).rstrip('，, ')}")


def _refs_once(entry: Entry, chosen: list[Candidate]) -> list[Candidate]:
    """The related PRs' lines and a clause naming only PRs they list say them twice: the
    clause goes after the lines ("related PRs?" on a note citing #43617), the lines after a
    clause that answers first."""
    if not any(c.source == RELATED for c in chosen):
        return chosen
    if not chosen[0].fact:  # the clause answers ("a redo of #5025 w/ …"): the list would repeat it
        return [c for c in chosen if c.source != RELATED]
    listed = {ref.number for ref in entry.all_refs}
    return [c for c in chosen if c.fact or not _only_refs_of(c.text, listed)]


def _only_refs_of(text: str, listed: set[int]) -> bool:
    named = {int(a or b) for a, b in REF_NUMBER_RE.findall(text)}
    return bool(named) and named <= listed


def _entry_text(entry: Entry) -> str:
    return " ".join([entry.title, entry.github_title or "", entry.note, *entry.tags])


@lru_cache(maxsize=1)
def _bundled_glossary() -> Glossary:
    return load_glossary()


_QUESTION_NOISE_RE = re.compile(
    r"为什么|为啥|为何|哪几个|哪几|什么情况下?|啥情况下?|情况下|是不是|能不能|会不会|有没有|有无|是否|多大|多久|多长|多快|会不会|能不能|可不可以|吗|呢|吧|么|什么|怎么|哪些|哪个|多少|请问|一下|啥|咋|"
    r"这个|那个|该|它|笔记|里|提到|说到|讲到|关于|相关|什么时候|时候|有人|比呢|的|了|[？?！!。，,.、：:；;\"'“”‘’()（）]"
)


def _named_topic(subject: str, question: str) -> str:
    """What the honest line names: an English question's words after its question words ("how
    do i turn it on" → "turn it on", not "turn"), else the subject's topic."""
    topic = question_topic(subject)
    if topic and question.isascii():
        plain = _EN_LEAD_RE.sub("", question.strip().rstrip("?!. ")).strip()
        subject = _ASKING_RE.sub("", plain)  # "label did they add" → "label"
        plain = _TRAILING_RE.sub("", subject) if subject != plain else plain
        return _clipped(plain) if plain else topic
    return topic


def question_topic(question: str) -> str:
    """What a question is about, in the asker's words, to name it in "The note doesn't cover X.":
    its words without question words."""
    norm = normalize_question(question)
    words = [
        w
        for w in re.findall(r"[a-z0-9][a-z0-9+\-.'’_]*|[^\sa-z0-9'’]+", norm)
        if w not in EN_STOP and len(w) > 1
    ]
    kept = (_EDGE_RE.sub("", w) for w in _QUESTION_NOISE_RE.sub(" ", " ".join(words)).split())
    topic = " ".join(w for w in kept if len(w) > 1 or w.isascii())
    return _clipped(topic)


def _clipped(topic: str) -> str:
    """A topic short enough for one line, cut where the asker paused (its first clause) or
    between words, never inside one ("…in v1, what fl")."""
    first = re.split(r"\s*[,;，；]\s*", topic, maxsplit=1)[0] or topic
    if len(first) <= TOPIC_CHARS:
        return first
    cut = first[:TOPIC_CHARS]
    space = cut.rfind(" ")
    if first[TOPIC_CHARS] == " " or space <= TOPIC_CHARS // 2:
        return cut  # ends at a word already, or has too few spaces to cut at
    return cut[:space]


_EN_LEAD_RE = re.compile(
    r"^(?:(?:how|what|which|who|when|where|why|is|are|was|were|does|do|did|can|could|will|would|should|"
    r"has|have|any|there|it|this|that|i|we|you|they|the|a|an|about|much|many|to)\b\s*)+|\s+(?:too|also|yet|at all)$",
    re.I,
)
# The asking words inside an English question's subject: an auxiliary with its pronoun (and
# verb): "label did they add" → "label", "throughput does it get on v6e" → "throughput on v6e";
# then a preposition they leave at the end ("tuned configs did they look at" → "tuned configs";
# "turn it on" keeps its "on").
_PRONOUN = r"(?:it|this|that|they|we|you|i|he|she)"
_ASKING_RE = re.compile(
    rf"\s+(?:(?:did|does|do)\s+{_PRONOUN}(?:\s+[a-z]+)?|(?:is|are|was|were|has|have|had)\s+{_PRONOUN})\b",
    re.I,
)
_TRAILING_RE = re.compile(r"\s+(?:at|on|in|for|with|to|of|by|from)$", re.I)
# A question's function characters at a word's edges ("具体表现是", "能提速"): not the subject.
_EDGE_RE = re.compile(
    r"^[有是能会要在把给让]+(?=[\u4e00-\u9fff]{2})|(?<=[\u4e00-\u9fff]{2})[是能会要在的了有过]+$"
)


def _without_link(text: str, link: str) -> str:
    return text.removesuffix(link).rstrip() if link else text


def _within(bodies: list[str], room: int) -> list[str]:
    """Answers to several questions within one answer's room: each cut to its share when together
    they would not fit."""
    if len("\n".join(bodies)) <= room:
        return bodies
    share = max(room // len(bodies) - 2, 8)
    return [b if len(b) <= share else b[: share - 1].rstrip() + "…" for b in bodies]


def _ref_lines(refs: Sequence[Ref], words: dict[str, str], room: int) -> list[str]:
    """The related PRs' lines: as many with their links as fit the room (three at most)."""
    if not refs:
        return []
    lines: list[str] = []
    for linked in range(min(len(refs), MAX_LINKED), -1, -1):
        rest = " ".join(f"#{r.number}" for r in refs[linked:])
        lines = [words["related"].rstrip(), *(f"#{r.number} {r.url}" for r in refs[:linked])]
        lines += [(words["also"] if linked else "") + rest] if rest else []
        if len("\n".join(lines)) <= room:
            break
    return lines


def _entry_ref(entry: Entry) -> str:
    return f"#{entry.pr} {entry.title}" if entry.pr else entry.title


def answer_question(entry: Entry, question: str, library: Library | Sequence[Entry] = ()) -> Answer:
    """One-shot form of `Answerer(library).answer(entry, question)`."""
    return Answerer(library).answer(entry, question)
