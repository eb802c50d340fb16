"""Follow-up answers: a question about one entry, answered with the curator's own words.

The answer quotes one to three pieces of the note (a focus point, the audience sentence, a
caveat…) chosen by the kind of question (`chatbot.answers.intents`), or by term overlap when the
question fits no kind (`chatbot.answers.clause_ranker`). It is short by construction: everything,
interface words and PR link included, stays under three quarters of the note.

`ANSWERS` is the table of how each kind is answered: a `Quoting` row (selectors over the note's
pieces and the words around them, `chatbot.answers.kinds`) or, for the kinds with structure of
their own (metadata, people, related PRs, free questions), a method of `Answerer`.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, islice

from chatbot.answers.addressing import addressing_rules
from chatbot.answers.asking import asking_part, questions
from chatbot.answers.clause_ranker import (
    EN_STOP,
    concept_terms,
    phrase_in,
    rank_pieces_detailed,
    warm_up,
)
from chatbot.answers.composer import Composer, Lang, answer_words
from chatbot.answers.intents import Intent, cached_classify
from chatbot.answers.kinds import (
    BENCH_WORDS,
    BENCHMARK_QUESTION_RE,
    CAUSE_WORDS,
    DESIGN_WORDS,
    MODEL_SELECTORS,
    PERF_WORDS,
    RISK_WORDS,
    SIZE_WORDS,
    STATE_WORDS,
    TEST_WORDS,
    Handler,
    Quoting,
    caveat_bonus,
    caveat_marks,
    change_for_fix,
    design_intro_bonus,
    title_on_tests,
)
from chatbot.answers.pieces import Piece, entry_pieces, select
from chatbot.answers.pr_facts import answer_from_facts
from chatbot.digest import Entry, FactsLookup, Library, Ref, no_facts
from chatbot.search import Glossary, load_glossary
from chatbot.search.glossary import Expansion
from chatbot.text import has_han, normalize_question, strip_slack_markup

BUDGET_SHARE = 0.75


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


PERSON_ACTS_RE = re.compile(
    r"(?<![\w/.@-])[A-Za-z][\w-]{2,38}\s*(?:在\s*review|在评审|认为|指出|建议|提出|提醒|发现|解释|质疑|回复|"
    r"argued|suggested|pointed out|noted|asked)"
)
REVIEW_QUESTION_RE = re.compile(r"review|审阅|审查|评审", re.I)
REVIEWER_ADVICE_RE = re.compile(r"reviewer|review\s*时|审阅时|审查时|评审时", re.I)
MAX_QUESTION_CHARS = 300
AUDIENCE_HINT_RE = re.compile(r"工程师|维护者|reviewer|读者|团队")
PEOPLE_SKIP_RE = re.compile(r"^对\s*reviewer\s*而言")


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


# A question's kind: the same phrasings recur across threads.
_classify = cached_classify


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
        # The concepts a question names, asked again for each kind that checks them: one lookup
        # (made with the glossary, which may be read later).
        self._concept_lookup: Callable[[str], list[Expansion]] | None = None
        if warm:
            self.warm_up()

    def warm_up(self) -> None:
        """Build the tag index and read the glossary and the phrasing and wording data files now,
        not on the first answer (`serve` does this once the digests are loaded: not needed to be
        ready, a tenth of a second of CPU before it)."""
        self._topics()
        self.glossary  # noqa: B018 -- read for its side effect
        warm_up()
        answer_words()
        addressing_rules()  # the question splitter's words (which clause asks)

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
        self._concept_lookup = None

    def _concepts(self, question: str) -> list[Expansion]:
        """The concepts `question` names (the glossary's expansion), remembered per question."""
        lookup = self._concept_lookup
        if lookup is None:
            lookup = self._concept_lookup = lru_cache(maxsize=1024)(self.glossary.expand)
        return lookup(question)

    def answer(self, entry: Entry, question: str) -> Answer:
        """The answer to a reply: its asking part (no quote, no preamble), each of its questions
        (at most three) answered in turn under one PR link."""
        # "<@U123> 重点看什么？" asks 重点看什么; a question is a line or two, not a pasted log.
        question = asking_part(strip_slack_markup(question), MAX_QUESTION_CHARS)
        fact = answer_from_facts(entry, question, self.facts(entry), dt.datetime.now(dt.UTC))
        if fact is not None:
            return Answer(fact.text, fact.intent, ["github"], fact.lang)
        asked = [
            (kind, q)
            for kind, q in questions(question)
            if kind != "other" or question_topic(q, self.glossary)
        ]
        if len(asked) < 2:
            return self._answer_one(entry, question, _classify(question), self._limit(entry))
        return self._answer_several(entry, question, asked)

    def _answer_several(self, entry: Entry, question: str, asked: Sequence[tuple[Intent, str]]) -> Answer:
        """Each question answered within its share of the budget, in the order asked; the PR link
        once, last."""
        share = self._limit(entry, len(asked))
        parts = [self._answer_one(entry, q, kind, share) for kind, q in asked]
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

    def _answer_one(self, entry: Entry, question: str, intent: Intent, limit: int) -> Answer:
        if intent == "summary" and (
            _names_code_of(entry, question) or not self._covers_concepts(entry, question)
        ):
            # "asyncio.all_tasks 是干嘛的" asks about that name, "what changed for AMD?" (of a PR
            # that never names AMD) about that concept, not for the whole PR.
            intent = "other"
        if intent in METADATA_INTENTS and _names_other_pr(entry, question):
            intent = "other"  # "what's the status of #53516?" asks about that PR, as the note tells it
        lang = _lang(question)
        composer = Composer(entry, lang, limit)
        text = ANSWERS[intent](self, entry, question, composer)
        sources = list(dict.fromkeys(composer.sources))
        return Answer(text=text, intent=intent, sources=sources, lang=lang, found=composer.found)

    # --- helpers -------------------------------------------------------------------------------

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

    # --- intents -------------------------------------------------------------------------------

    def _why(self, entry: Entry, question: str, c: Composer) -> str:
        why = entry.why or (entry.highlights[0] if entry.highlights else entry.title)
        verdict = f"{entry.verdict}。" if entry.verdict else ""
        if entry.verdict:
            c.sources.append("verdict")
        return c.quote(c.word("why") + verdict, [Piece("why", why)])

    def _focus(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = _focus_pieces(entry, question) or [Piece("why", entry.why or entry.title)]
        return c.quote(c.word("focus"), pieces[:3])

    def _audience(self, entry: Entry, question: str, c: Composer) -> str:
        if entry.audience:
            return c.quote(c.word("audience"), [Piece("audience", entry.audience)])
        hints = [p for p in entry_pieces(entry) if AUDIENCE_HINT_RE.search(p.text)]
        hints = [p for p in hints if not PEOPLE_SKIP_RE.match(p.text)]
        c.found = False
        topics = ", ".join(entry.tags[:2])
        prefix = c.word("no_audience")
        prefix += (
            (f"；主题：{topics}。" if c.lang == "zh" else f"; topics: {topics}.")
            if topics
            else ("。" if c.lang == "zh" else ".")
        )
        if hints:
            return c.quote(prefix, hints[:1])
        return c.lines([prefix])

    def _people(self, entry: Entry, question: str, c: Composer) -> str:
        lines: list[str] = []
        if entry.author:
            lines.append(c.word("author") + entry.author)
            c.sources.append("author")
        named = _people_pieces(entry, question, c.lang)
        if named:
            return c.quote("\n".join([*lines, c.word("people")]), named[:1])
        if not lines:
            return c.nothing("no_people")
        return c.lines(lines)

    def _related(self, entry: Entry, question: str, c: Composer) -> str:
        refs = entry.all_refs
        others = self.same_topic_entries(entry)
        if not refs and not others:
            return c.nothing("no_related")
        lines, room = _ref_block(refs, c)
        if refs:
            c.sources.append("refs")
        numbers = {r.number for r in refs}
        lines = _with_same_topic(lines, [o for o in others if o.pr not in numbers], room, c)
        if not refs and len(lines) == 1:
            lines = [c.word("no_related")]
        return c.lines(lines)

    def _link(self, entry: Entry, question: str, c: Composer) -> str:
        c.sources.append("url")
        label = f"#{entry.pr} " if entry.pr else ""
        return c.lines([f"{label}{entry.title}"]) if entry.url else c.lines([entry.title])

    def _summary(self, entry: Entry, question: str, c: Composer) -> str:
        c.sources.append("title")
        why = Piece("why", entry.why or (entry.highlights[0] if entry.highlights else ""))
        title = c.word("summary") + entry.title
        room = c.limit - (len(c.link) + 1 if c.link else 0)
        for text in (f"{title}。{why.text}", f"{title}。{why.lead}"):
            if why.text and len(text) <= room:
                c.sources.append("why")
                return c.finish(text)
        return c.finish(title if len(title) <= room else entry.title)

    def _other(self, entry: Entry, question: str, c: Composer) -> str:
        """The note's pieces ranked by the question's terms and glossary concepts; when nothing in
        the note matches, one honest line saying so — never the summary dressed as an answer."""
        pieces = [*entry_pieces(entry), Piece("title", entry.title)]
        if entry.github_title:
            pieces.append(Piece("github_title", entry.github_title))
        ranked = rank_pieces_detailed(question, [p.text for p in pieces], self.glossary)
        if not self._covers_concepts(entry, question):
            return self._not_covered(question, c)
        if not ranked or ranked[0][0] <= 0 or ranked[0][2] < MIN_MATCH:
            if not question_topic(question, self.glossary):
                # Nothing to look for ("<@bot> ?"): the one-line summary is the useful answer.
                return self._summary(entry, question, c)
            return self._not_covered(question, c)
        return c.quote(c.word("other"), _best_ranked(ranked, pieces))

    def _covers_concepts(self, entry: Entry, question: str) -> bool:
        """When the question names glossary concepts ("speculative decoding", "AMD"), the entry
        must name at least one of them (any of its terms, in either language): words inside the
        concept ("decoding" → 解码) matching elsewhere do not make the note answer it."""
        expansions = self._concepts(question)
        if not expansions:
            return True
        text = normalize_question(" ".join([entry.title, entry.github_title or "", entry.note, *entry.tags]))
        return any(
            phrase_in(normalize_question(term), text)
            for e in expansions
            for term in concept_terms(self.glossary, e.concept)
            if len(term) >= 2
        )

    def _not_covered(self, question: str, c: Composer) -> str:
        c.found = False
        topic = question_topic(question, self.glossary)
        line = c.word("not_covered").format(topic=topic) if topic else c.word("not_covered_any")
        return c.lines([line])

    # --- facts from the metadata ---------------------------------------------------------------

    def _date(self, entry: Entry, question: str, c: Composer) -> str:
        if entry.date is None:
            return c.nothing("no_date")
        c.sources.append("date")
        label = f" (#{entry.pr})" if entry.pr else ""
        return c.lines([f"{c.word('date')}{entry.date.isoformat()}{label}"])

    def _state(self, entry: Entry, question: str, c: Composer) -> str:
        """What the note says about the PR's state; the date from the metadata when known."""
        chosen = select(entry_pieces(entry), STATE_WORDS, {}, question)
        date = [f"{c.word('date')}{entry.date.isoformat()}"] if entry.date is not None else []
        if date:
            c.sources.append("date")
        if chosen:
            return c.quote(c.word("state"), chosen[:1], date)
        c.found = False
        return c.lines([c.word("no_state"), *date])

    def _english(self, entry: Entry, question: str, c: Composer) -> str:
        """The PR's English title (metadata), and the note's why line: the note itself is Chinese."""
        if not entry.github_title:
            if classify_summary(question):
                return self._summary(entry, question, c)
            return c.nothing("no_english")
        c.sources.append("github_title")
        lines = [c.word("english") + entry.github_title]
        why = entry.why or (entry.highlights[0] if entry.highlights else "")
        extra = [c.word("in_short") + why, c.word("in_short") + Piece("why", why).lead] if why else []
        return c.lines(lines, extra, source="why")

    def _labels(self, entry: Entry, question: str, c: Composer) -> str:
        if not entry.tags:
            return c.nothing("no_labels")
        c.sources.append("tags")
        return c.lines([c.word("labels") + ", ".join(entry.tags)])


# How each kind of question is answered. The kinds that quote the pieces of the note their
# selectors match are rows (selectors, prefix word, "not in the note" word, and their twists);
# the rest are methods. tests/test_answers.py checks that every intent has a row.
ANSWERS: dict[Intent, Handler] = {
    "english": Answerer._english,
    "date": Answerer._date,
    "state": Answerer._state,
    "labels": Answerer._labels,
    # "事件元数据为什么会丢": the note may say it without a cause word; then ranked like `other`.
    "cause": Quoting(CAUSE_WORDS, "cause", "no_cause", title="last", fallback=Answerer._other),
    "models": Quoting(MODEL_SELECTORS, "models", "no_models", title="last"),
    "why": Answerer._why,
    "focus": Answerer._focus,
    "audience": Answerer._audience,
    "risks": Quoting(RISK_WORDS, "risks", "no_risks", bonus=caveat_bonus, adjust=caveat_marks),
    "tests": Quoting(TEST_WORDS, "tests", "no_tests", fallback=title_on_tests),
    "design": Quoting(
        DESIGN_WORDS, "design", "no_design", most=3, bonus=design_intro_bonus, fallback=change_for_fix
    ),
    "people": Answerer._people,
    "related": Answerer._related,
    "link": Answerer._link,
    "summary": Answerer._summary,
    "size": Quoting(SIZE_WORDS, "size", "no_size", title="first"),
    "perf": Quoting(
        PERF_WORDS,
        "perf",
        "no_perf",
        title="first",
        narrower=(BENCHMARK_QUESTION_RE, Quoting(BENCH_WORDS, "perf", "no_bench", title="first")),
    ),
    "other": Answerer._other,
}


MIN_MATCH = 1.5  # one Latin word, identifier or glossary term; a lone Chinese bigram is not enough
TOPIC_CHARS = 40
OTHER_BAND = 0.8  # free questions: the pieces within this share of the best score are quoted


def _focus_pieces(entry: Entry, question: str) -> list[Piece]:
    """The focus points; "What should I review?": the curator's advice to reviewers first."""
    every = entry_pieces(entry)
    pieces = [p for p in every if p.source.startswith("highlights")]
    if not REVIEW_QUESTION_RE.search(question):
        return pieces
    advice = [p for p in every if REVIEWER_ADVICE_RE.search(p.text)][:1]
    return [*advice, *(p for p in pieces if not advice or p.text != advice[0].text)]


def _people_pieces(entry: Entry, question: str, lang: Lang) -> list[Piece]:
    """Pieces naming the entry's people, those about review first when the question is about
    review; none of those: pieces speaking of reviewers, but not advice addressed to them."""
    pieces = entry_pieces(entry)
    named = _naming_people(entry, pieces)
    if REVIEW_QUESTION_RE.search(question) or (lang == "en" and "review" in question.casefold()):
        named.sort(key=lambda p: not REVIEW_QUESTION_RE.search(p.text))
    if named:
        return named
    return [p for p in pieces if "reviewer" in p.text and not PEOPLE_SKIP_RE.match(p.text)]


def _naming_people(entry: Entry, pieces: Sequence[Piece]) -> list[Piece]:
    """Pieces naming one of the entry's people, then those naming a handle by its shape, right
    before what people do in a review ("ywang96 在 review 中指出")."""
    named = [p for p in pieces if any(person in p.text for person in entry.people)]
    return named + [p for p in pieces if PERSON_ACTS_RE.search(p.text) and p not in named]


def _best_ranked(ranked: Sequence[tuple[float, int, float]], pieces: Sequence[Piece]) -> list[Piece]:
    """The best two distinct pieces among the top three within `OTHER_BAND` of the best."""
    best = ranked[0][0]
    chosen: dict[str, Piece] = {}
    for score, i, _ in ranked[:3]:
        if score >= best * OTHER_BAND and pieces[i].text not in chosen:
            chosen[pieces[i].text] = pieces[i]
    return list(chosen.values())[:2]


@lru_cache(maxsize=1)
def _bundled_glossary() -> Glossary:
    return load_glossary()


def classify_summary(question: str) -> bool:
    """Whether a question asks for a summary besides a language ("summarize in English")."""
    return bool(re.search(r"summar|tl;?dr|总结|概括|讲了什么", normalize_question(question)))


# Words every PR is about: a question made of only these asks for the summary, not a topic.
GENERIC_WORDS = frozenset(
    [
        "change",
        "changes",
        "changed",
        "fix",
        "fixes",
        "fixed",
        "do",
        "does",
        "did",
        "work",
        "works",
        "mean",
        "means",
        "about",
        "thing",
        "stuff",
        "say",
        "says",
        "said",
        "happen",
        "happened",
        "this",
        "that",
        "pr",
        "it",
        "point",
        "main",
        "idea",
        "here",
    ]
)
_QUESTION_NOISE_RE = re.compile(
    r"有没有|有无|是否|会不会|能不能|可不可以|吗|呢|吧|么|什么|怎么|哪些|哪个|多少|请问|一下|"
    r"这个|那个|该|它|笔记|里|提到|说到|讲到|关于|相关|的|了|[？?！!。，,.、：:；;\"'“”‘’()（）]"
)


def question_topic(question: str, glossary: Glossary | None = None) -> str:
    """What a question is about, to name it in "The note doesn't cover X.": the glossary
    concepts it names (as the asker wrote them), else its words without question words."""
    if glossary is not None:
        named = [e.matched for e in glossary.expand(question)]
        if named:
            return " / ".join(dict.fromkeys(named))[:TOPIC_CHARS]
    norm = normalize_question(question)
    words = [w for w in re.findall(r"[a-z0-9][a-z0-9+\-.'’]*|[^\sa-z0-9'’]+", norm) if w not in EN_STOP]
    words = [w for w in words if w not in GENERIC_WORDS]
    topic = " ".join(_QUESTION_NOISE_RE.sub(" ", " ".join(words)).split())
    topic = re.sub(r"^有\s*|\s*的$", "", topic)
    return topic[:TOPIC_CHARS]


METADATA_INTENTS = frozenset({"date", "state", "english", "labels"})
_PR_REF_RE = re.compile(r"(?<![\w&])#(\d{2,7})\b")


def _names_other_pr(entry: Entry, question: str) -> bool:
    """Whether the question names a PR/issue number other than the entry's own."""
    return any(int(n) != entry.pr for n in _PR_REF_RE.findall(question))


def _names_code_of(entry: Entry, question: str) -> bool:
    """Whether the question names one of the entry's code identifiers."""
    folded = question.casefold()
    return any(len(i) >= 4 and i.strip("`().").casefold() in folded for i in entry.identifiers)


def _without_link(text: str, link: str) -> str:
    return text.removesuffix(link).rstrip() if link else text


def _within(bodies: list[str], room: int) -> list[str]:
    """Answers to several questions within one answer's room: a short note's whole sentence, quoted
    by each, is cut to its share so that together they stay under the budget."""
    if len("\n".join(bodies)) <= room:
        return bodies
    share = max(room // len(bodies) - 2, 8)
    return [b if len(b) <= share else b[: share - 1].rstrip() + "…" for b in bodies]


def _entry_ref(entry: Entry) -> str:
    return f"#{entry.pr} {entry.title}" if entry.pr else entry.title


def _ref_block(refs: Sequence[Ref], c: Composer) -> tuple[list[str], int]:
    """The related PRs' lines, and the room left for the answer. Links to the related PRs matter
    more here than the entry's own link: when not all fit in the room, the whole budget is used."""
    lines, with_urls = _fit_refs(refs, c.room, c)
    if refs and with_urls < len(refs):
        more, more_urls = _fit_refs(refs, c.limit, c)
        if more_urls > with_urls:
            return more, c.limit
    return lines, c.room


def _with_same_topic(lines: list[str], others: Sequence[Entry], room: int, c: Composer) -> list[str]:
    """The lines and one line of entries on the same topics (both, or the closest) if it fits."""
    if not others:
        return lines
    for line in (
        c.word("same_topic") + "；".join(_entry_ref(o) for o in others),
        c.word("same_topic") + _entry_ref(others[0]),
    ):
        if len("\n".join([*lines, line])) <= room:
            c.sources.append("related_entries")
            return [*lines, line]
    return lines


def _fit_refs(refs: Sequence[Ref], room: int, c: Composer) -> tuple[list[str], int]:
    """Ref lines with as many full links as fit in `room`, the rest as bare `#N`."""
    for with_urls in range(len(refs), -1, -1):
        lines = _ref_lines(refs, with_urls, c)
        if len("\n".join(lines)) <= room:
            return lines, with_urls
    return _ref_lines(refs, 0, c), 0


def _ref_lines(refs: Sequence[Ref], with_urls: int, c: Composer) -> list[str]:
    lines = [c.word("related").rstrip()]
    lines.extend(f"#{r.number} {r.url}" for r in refs[:with_urls])
    rest = refs[with_urls:]
    if rest:
        label = c.word("also") if with_urls else ""
        lines.append(label + " ".join(f"#{r.number}" for r in rest))
    return lines


def answer_question(entry: Entry, question: str, library: Library | Sequence[Entry] = ()) -> Answer:
    """One-shot form of `Answerer(library).answer(entry, question)`."""
    return Answerer(library).answer(entry, question)
