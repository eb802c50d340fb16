"""Follow-up answers: a question about one entry, answered with the curator's own words.

The answer quotes one to three pieces of the note (a focus point, the audience sentence, a
caveat…) chosen by the kind of question (`chatbot.answers.intents`), or by term overlap when the
question fits no kind (`chatbot.answers.clause_ranker`). It is short by construction: everything,
interface words and PR link included, stays under three quarters of the note.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Literal

from chatbot.answers.clause_ranker import rank_pieces, warm_up
from chatbot.answers.intents import Intent, classify, has_cjk
from chatbot.digest import Entry, Library, Ref, clauses, clean, sentences, split_top_level

Lang = Literal["zh", "en"]
BUDGET_SHARE = 0.75
BULLET = "• "


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


@dataclass(frozen=True)
class Piece:
    """A quotable part of the note: where it comes from and the curator's words."""

    source: str
    text: str

    short: str | None = None

    @property
    def lead(self) -> str:
        """The short form when space is tight: a given short text, else its first real clause.

        A short intro before `：` ("它展示了一个高价值的测试模式：…") is skipped for what follows it.
        """
        if self.short:
            return self.short
        head = self.text
        intro = split_top_level(head, ["：", ":"])
        if len(intro) > 1 and len(clean(intro[0])) <= 16 and clean("".join(intro[1:])):
            head = clean("".join(intro[1:]))
        for sep in ("——", "：", ":", "，", ",", "；"):
            cut = split_top_level(head, [sep])
            if len(cut) > 1 and clean(cut[0]):
                head = clean(cut[0])
        return head


WORDS: dict[str, dict[Lang, str]] = {
    "why": {"zh": "为什么值得读：", "en": "Why read it: "},
    "focus": {"zh": "重点：", "en": "Focus on: "},
    "audience": {"zh": "适合：", "en": "For: "},
    "no_audience": {"zh": "笔记没写适合谁", "en": "Audience not stated"},
    "risks": {"zh": "注意：", "en": "Caveats: "},
    "risks_near": {"zh": "未单列风险，可留意：", "en": "No caveats listed; note: "},
    "no_risks": {"zh": "笔记没提风险或注意事项。", "en": "The note names no risks or caveats."},
    "tests": {"zh": "测试：", "en": "Tests: "},
    "no_tests": {"zh": "笔记没提测试。", "en": "The note does not mention tests."},
    "design": {"zh": "设计：", "en": "Design: "},
    "no_design": {"zh": "笔记没谈设计取舍。", "en": "The note does not discuss design choices."},
    "author": {"zh": "作者 ", "en": "Author: "},
    "people": {"zh": "笔记提到：", "en": "In the note: "},
    "no_people": {"zh": "笔记没写作者，也没提到人。", "en": "The note names no author and no people."},
    "related": {"zh": "相关 PR：", "en": "Related PRs: "},
    "also": {"zh": "另见 ", "en": "Also "},
    "same_topic": {"zh": "同主题条目：", "en": "Same topics: "},
    "no_related": {"zh": "笔记没提相关 PR。", "en": "No related PRs named."},
    "summary": {"zh": "一句话：", "en": "In short: "},
    "size": {"zh": "规模：", "en": "Size: "},
    "no_size": {"zh": "笔记没给改动规模。", "en": "The note gives no size."},
    "perf": {"zh": "性能：", "en": "Performance: "},
    "no_perf": {"zh": "笔记没给性能数字。", "en": "The note gives no performance numbers."},
    "other": {"zh": "", "en": "From the note: "},
    "no_match": {"zh": "概要：", "en": "In short: "},
    "see": {"zh": "可看：", "en": "See: "},
}

# Clause selectors per intent: (pattern, weight). Patterns look at the curator's words.
TEST_WORDS = [(re.compile(r"测试|断言|测|验证|覆盖率|用例|test|assert", re.I), 1.0)]
DESIGN_WORDS = [
    (re.compile(r"决策|权衡|取舍|设计思路|trade-?off", re.I), 2.0),
    (re.compile(r"(?<!测试)设计|design", re.I), 1.5),
    (re.compile(r"模式|思路|写法|做法|方案|拆分|统一|入口|下沉|抽象|架构|helper|处理方式|逻辑"), 1.0),
]
DESIGN_INTRO_RE = re.compile(r"(设计决策|设计|决策|权衡|取舍)[^。：:]{0,12}[：:]")
RISK_WORDS = [
    (
        re.compile(r"陷阱|坑|隐患|风险|反面教材|尚未|重新审视|是否可接受|是否有必要|不一致|争议|提醒|必要性"),
        2.0,
    ),
    (re.compile(r"回归|漏测|失效|崩溃|冲突|语义变化|注意|留意|超时"), 1.0),
]
SIZE_STRONG_RE = re.compile(r"\d+\s*(?:行|个?文件|files?\b|lines?\b)", re.I)
SIZE_WORDS = [
    (SIZE_STRONG_RE, 3.0),
    (re.compile(r"小改动|小范围|小修复|一行|几行|改动|大规模|重构"), 1.0),
]
PERF_STRONG_RE = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s*(?:%|倍|x\b|ms\b|s\b|秒)(?:\s*-\s*\d+(?:\.\d+)?\s*%)?"
)
PERF_WORDS = [
    (PERF_STRONG_RE, 3.0),
    (re.compile(r"性能|提速|加速|变快|越慢|更快|延迟|吞吐|耗时|超时|latency|throughput|speed", re.I), 1.0),
]
MAX_QUESTION_CHARS = 300
SLACK_TOKEN_RE = re.compile(r"<[@#!][^>\s]*>")
AUDIENCE_HINT_RE = re.compile(r"工程师|维护者|reviewer|读者|团队")
PEOPLE_SKIP_RE = re.compile(r"^对\s*reviewer\s*而言")


def _lang(question: str) -> Lang:
    return "zh" if has_cjk(question) else "en"


def entry_pieces(entry: Entry) -> list[Piece]:
    """Every quotable part of the entry, structured fields first, then the rest of the note."""
    pieces: list[Piece] = []
    pieces.extend(Piece(f"highlights[{i}]", h) for i, h in enumerate(entry.highlights))
    if entry.why and entry.why in entry.note and not any(entry.why == p.text for p in pieces):
        pieces.append(Piece("why", entry.why))
    if entry.audience:
        pieces.append(Piece("audience", entry.audience))
    for i, caveat in enumerate(entry.caveats):
        # A caveat cut from a focus point ("…，提醒跨版本验证的必要性") is quoted with its context.
        host = next((h for h in entry.highlights if caveat in h and caveat != h), None)
        if host is None:
            pieces.append(Piece(f"caveats[{i}]", caveat))
        else:
            lead = Piece("", host).lead
            pieces.append(Piece(f"caveats[{i}]", host, f"{lead}…{caveat}" if lead != caveat else caveat))
    covered = [p.text for p in pieces]
    for sentence in sentences(entry.note):
        if entry.verdict and sentence == entry.verdict:
            continue
        if not any(sentence in c or c in sentence for c in covered):
            pieces.append(Piece("note", sentence))
    return pieces


def _score(text: str, selectors: Sequence[tuple[re.Pattern[str], float]]) -> float:
    return sum(weight for pattern, weight in selectors if pattern.search(text))


TOPIC_WEIGHT = 3.0


def _select(
    pieces: Sequence[Piece],
    selectors: Sequence[tuple[re.Pattern[str], float]],
    bonus: dict[str, float],
    question: str = "",
) -> list[Piece]:
    """Pieces that match the selectors, best first; ties keep note order; only the top score band.

    A piece that also shares terms with the question ("re-export 有什么坑") moves up: the asker
    named the part of the PR they mean.
    """
    topic = dict.fromkeys(range(len(pieces)), 0.0)
    if question:
        topic.update({i: s for s, i in rank_pieces(question, [p.text for p in pieces])})
    scored = []
    for i, p in enumerate(pieces):
        kind = _score(p.text, selectors) + bonus.get(p.source, 0.0)
        if kind > 0:
            scored.append((kind + TOPIC_WEIGHT * topic[i], i, p))
    if not scored:
        return []
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[0][0]
    kept: dict[str, Piece] = {}
    for score, _, p in scored:
        if score >= top * 0.6 and p.text not in kept:
            kept[p.text] = p if p.short else _focused(p, selectors)
    return list(kept.values())[:3]


def _focused(piece: Piece, selectors: Sequence[tuple[re.Pattern[str], float]]) -> Piece:
    """The piece with a short form that keeps the clause the selectors matched, not just the first."""
    parts = clauses(piece.text)
    if len(parts) < 2:
        return piece
    best = max(range(len(parts)), key=lambda i: (_score(parts[i], selectors), -i))
    if best == 0 or _score(parts[best], selectors) <= _score(parts[0], selectors):
        return piece
    lead = Piece(piece.source, piece.text).lead
    short = f"{lead}…{parts[best]}" if len(lead) <= 20 else parts[best]
    return Piece(piece.source, piece.text, short)


@dataclass
class Composer:
    """Builds the answer text within the budget: prefix, quoted pieces, extra lines, PR link."""

    entry: Entry
    lang: Lang
    limit: int
    sources: list[str] = field(default_factory=list)
    found: bool = True
    probe: bool = False  # only finding out whether there is an answer: no see-also lookups

    def word(self, key: str) -> str:
        return WORDS[key][self.lang]

    @property
    def link(self) -> str:
        return self.entry.url or ""

    @property
    def room(self) -> int:
        """Space for the quoted words. On a short note the link would take half the budget or more, so
        it goes after the quote without counting against it (issue 17)."""
        reserve = len(self.link) + 1 if self.link else 0
        return self.limit - reserve if reserve * 2 < self.limit else self.limit

    def finish(self, body: str) -> str:
        """Body plus the PR link line; the link is dropped only when a tiny note leaves no room."""
        fits = len(body) + 1 + len(self.link) <= self.limit
        if self.link and (fits or (self.room == self.limit and len(body) <= self.limit)):
            return f"{body}\n{self.link}"
        return body

    def quote(self, prefix: str, pieces: Sequence[Piece], tail: Sequence[str] = ()) -> str:
        """The longest variant of the pieces that fits: full, first full + leads, leads, fewer."""
        room = self.room
        variants: list[list[tuple[Piece, str]]] = []
        full = [(p, p.text) for p in pieces]
        leads = [(p, p.lead) for p in pieces]
        variants.append(full)
        for n in range(len(pieces), 0, -1):
            variants.append([*full[:1], *leads[1:n]])
            variants.append(full[:n])
        for n in range(len(pieces), 0, -1):
            variants.append(leads[:n])
        chosen: list[tuple[Piece, str]] = leads[:1]
        for variant in variants:
            if len(self._render(prefix, [t for _, t in variant], tail)) <= room:
                chosen = variant
                break
        else:
            tail = ()
        self.sources.extend(p.source for p, _ in chosen)
        body = self._render(prefix, [t for _, t in chosen], tail)
        if len(body) > room:
            body = self._render(prefix, [t for _, t in chosen], ())
        if len(body) > room:
            body = body[: max(room - 1, 1)] + "…"
        return self.finish(body)

    @staticmethod
    def _render(prefix: str, texts: Sequence[str], tail: Sequence[str]) -> str:
        if len(texts) == 1:
            body = f"{prefix}{texts[0]}"
        else:
            body = prefix.rstrip() + "\n" + "\n".join(BULLET + t for t in texts)
        return "\n".join([body, *tail]) if tail else body

    def lines(
        self, lines: Sequence[str], alternatives: Sequence[str] = (), source: str = "related_entries"
    ) -> str:
        """Plain lines (no quotes), then the first of the alternative extra lines that fits."""
        out = list(lines)
        for line in alternatives:
            if len("\n".join([*out, line])) <= self.room:
                out.append(line)
                self.sources.append(source)
                break
        return self.finish("\n".join(out))


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


# Related entries probed for an answer of the question's kind, closest first: bounded, so an
# answer costs the same in a library of a hundred entries or of a hundred thousand.
MAX_PROBES = 32
# A question's kind: asked again by every probe, and the same phrasings recur across threads.
_classify = lru_cache(maxsize=256)(classify)


class Answerer:
    """Answers follow-up questions about entries; the library (or entry list) gives related entries.

    Given a `Library`, it reads `library.entries` on every answer, so a refreshed digest folder is
    seen without building a new answerer.
    """

    def __init__(self, library: Library | Sequence[Entry] = ()) -> None:
        self._library = library if isinstance(library, Library) else list(library)
        # Whether an entry's note answers a kind of question; "other" depends on the words, so it is not kept.
        self._has_answer: dict[tuple[str, str, Intent], bool] = {}
        self._tag_index: _TagIndex | None = None
        # Built now, not on the first answer: the tag index and the phrasing data files.
        self._topics()
        warm_up()

    def answer(self, entry: Entry, question: str) -> Answer:
        # "<@U123> 重点看什么？" asks 重点看什么; a question is a line or two, not a pasted log.
        question = SLACK_TOKEN_RE.sub(" ", question)[:MAX_QUESTION_CHARS]
        intent = _classify(question)
        if intent == "summary" and _names_code_of(entry, question):
            intent = "other"  # "asyncio.all_tasks 是干嘛的" asks about that name, not the whole PR
        lang = _lang(question)
        limit = max(int(len(entry.note) * BUDGET_SHARE) - 1, 20)
        composer = Composer(entry, lang, limit)
        handler = _HANDLERS.get(intent, Answerer._other)
        text = handler(self, entry, question, composer)
        sources = list(dict.fromkeys(composer.sources))
        return Answer(text=text, intent=intent, sources=sources, lang=lang, found=composer.found)

    # --- helpers -------------------------------------------------------------------------------

    @property
    def entries(self) -> list[Entry]:
        if isinstance(self._library, Library):
            return self._library.entries
        return self._library

    def same_topic_entries(
        self, entry: Entry, limit: int = 2, keep: Callable[[Entry], bool] | None = None
    ) -> list[Entry]:
        """Other entries of the library sharing the most tags with this one (and passing `keep`),
        ties in digest order. Looked up by tag, and `keep` asked of at most `MAX_PROBES` of the
        closest: a scan of the library per answer stalled every ack on a 10k-entry library."""
        topics = self._topics()
        shared = Counter(
            chain.from_iterable(topics.by_tag.get(tag, ()) for tag in {t.casefold() for t in entry.tags})
        )
        candidates = sorted((-count, rank) for rank, count in shared.items())
        out: list[Entry] = []
        probes = 0
        for _, rank in candidates:
            other = topics.ordered[rank]
            if other.id == entry.id:
                continue
            if keep is not None:
                if probes >= MAX_PROBES:
                    break
                probes += 1
                if not keep(other):
                    continue
            out.append(other)
            if len(out) >= limit:
                break
        return out

    def _topics(self) -> _TagIndex:
        """The tag index of the current entries, rebuilt when the library reloads."""
        entries = self.entries
        if self._tag_index is None or self._tag_index.source is not entries:
            self._tag_index = _TagIndex.build(entries)
        return self._tag_index

    def _see_also(self, entry: Entry, c: Composer, question: str = "") -> list[str]:
        """Up to two same-topic entries, preferring those whose notes do answer the question."""
        if c.probe:
            return []
        others: list[Entry] = []
        if question:
            others = self.same_topic_entries(entry, keep=lambda o: self._answers(o, question))
        others = others or self.same_topic_entries(entry)
        if not others:
            return []
        c.sources.append("related_entries")
        return [
            c.word("see") + "；".join(_entry_ref(o) for o in others[:n]) for n in range(len(others), 0, -1)
        ]

    def _answers(self, entry: Entry, question: str) -> bool:
        """Whether this entry's note has an answer of the question's kind (no see-also lookups)."""
        intent = _classify(question)
        key = (entry.id, entry.note, intent)
        if intent != "other" and key in self._has_answer:
            return self._has_answer[key]
        probe = Composer(entry, _lang(question), max(int(len(entry.note) * BUDGET_SHARE) - 1, 20), probe=True)
        _HANDLERS.get(intent, Answerer._other)(self, entry, question, probe)
        if intent != "other":
            self._has_answer[key] = probe.found
        return probe.found

    def _none(self, entry: Entry, c: Composer, key: str, question: str = "") -> str:
        c.found = False
        return c.lines([c.word(key)], self._see_also(entry, c, question))

    # --- intents -------------------------------------------------------------------------------

    def _why(self, entry: Entry, question: str, c: Composer) -> str:
        why = entry.why or (entry.highlights[0] if entry.highlights else entry.title)
        verdict = f"{entry.verdict}。" if entry.verdict else ""
        if entry.verdict:
            c.sources.append("verdict")
        return c.quote(c.word("why") + verdict, [Piece("why", why)])

    def _focus(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = [p for p in entry_pieces(entry) if p.source.startswith("highlights")]
        if not pieces:
            pieces = [Piece("why", entry.why or entry.title)]
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
        return c.lines([prefix], self._see_also(entry, c, question))

    def _risks(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = entry_pieces(entry)
        bonus = {p.source: 5.0 for p in pieces if p.source.startswith("caveats")}
        chosen = _select(pieces, RISK_WORDS, bonus, question)
        if not chosen:
            return self._none(entry, c, "no_risks", question)
        prefix = c.word("risks") if entry.caveats else c.word("risks_near")
        return c.quote(prefix, chosen[:2])

    def _tests(self, entry: Entry, question: str, c: Composer) -> str:
        chosen = _select(entry_pieces(entry), TEST_WORDS, {}, question)
        if not chosen:
            title = Piece("title", entry.title)
            if _score(title.text, TEST_WORDS):
                return c.quote(c.word("tests"), [title])
            return self._none(entry, c, "no_tests", question)
        return c.quote(c.word("tests"), chosen[:2])

    def _design(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = entry_pieces(entry)
        bonus: dict[str, float] = {}
        for match in DESIGN_INTRO_RE.finditer(entry.note):
            sentence_end = _sentence_end(entry.note, match.end())
            for p in pieces:
                at = entry.note.find(p.text[:12], match.end())
                if p.source.startswith("highlights") and match.end() <= at < sentence_end:
                    bonus[p.source] = 2.0
        chosen = _select(pieces, DESIGN_WORDS, bonus, question)
        if not chosen:
            return self._none(entry, c, "no_design", question)
        return c.quote(c.word("design"), chosen[:3])

    def _people(self, entry: Entry, question: str, c: Composer) -> str:
        lines: list[str] = []
        if entry.author:
            lines.append(c.word("author") + entry.author)
            c.sources.append("author")
        pieces = entry_pieces(entry)
        named = [p for p in pieces if any(person in p.text for person in entry.people)]
        if not named:
            named = [p for p in pieces if "reviewer" in p.text and not PEOPLE_SKIP_RE.match(p.text)]
        if named:
            prefix = "\n".join([*lines, c.word("people")]) if lines else c.word("people")
            return c.quote(prefix, named[:1])
        if not lines:
            return self._none(entry, c, "no_people", question)
        return c.lines(lines)

    def _related(self, entry: Entry, question: str, c: Composer) -> str:
        refs = entry.all_refs
        others = self.same_topic_entries(entry)
        if not refs and not others:
            c.found = False
            return c.lines([c.word("no_related")])
        room = c.room
        lines, with_urls = _fit_refs(refs, room, c)
        if refs and with_urls < len(refs):
            # Links to the related PRs matter more here than the entry's own link.
            more, more_urls = _fit_refs(refs, c.limit, c)
            if more_urls > with_urls:
                lines, with_urls, room = more, more_urls, c.limit
        if refs:
            c.sources.append("refs")
        optional = []
        if others:
            optional.append(c.word("same_topic") + "；".join(_entry_ref(o) for o in others))
            optional.append(c.word("same_topic") + _entry_ref(others[0]))
        out = list(lines)
        for line in optional:
            if len("\n".join([*out, line])) <= room:
                out.append(line)
                c.sources.append("related_entries")
                break
        if not refs and len(out) == 1:
            out = [c.word("no_related")]
        return c.lines(out)

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

    def _size(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = [Piece("title", entry.title), *entry_pieces(entry)]
        chosen = _select(pieces, SIZE_WORDS, {}, question)
        if not chosen:
            return self._none(entry, c, "no_size", question)
        return c.quote(c.word("size"), chosen[:2])

    def _perf(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = [Piece("title", entry.title), *entry_pieces(entry)]
        chosen = _select(pieces, PERF_WORDS, {}, question)
        if not chosen:
            return self._none(entry, c, "no_perf", question)
        return c.quote(c.word("perf"), chosen[:2])

    def _other(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = [*entry_pieces(entry), Piece("title", entry.title)]
        ranked = rank_pieces(question, [p.text for p in pieces])
        if not ranked or ranked[0][0] <= 0:
            # Nothing in the question matched the note: the why-read line is the best general answer.
            return self._summary(
                entry, question, _NoMatchWords(c.entry, c.lang, c.limit, c.sources, probe=c.probe)
            )
        best = ranked[0][0]
        chosen = [pieces[i] for score, i in ranked[:2] if score >= best * 0.8]
        return c.quote(c.word("other"), chosen)


_HANDLERS: dict[Intent, Callable[[Answerer, Entry, str, Composer], str]] = {
    "why": Answerer._why,
    "focus": Answerer._focus,
    "audience": Answerer._audience,
    "risks": Answerer._risks,
    "tests": Answerer._tests,
    "design": Answerer._design,
    "people": Answerer._people,
    "related": Answerer._related,
    "link": Answerer._link,
    "summary": Answerer._summary,
    "size": Answerer._size,
    "perf": Answerer._perf,
    "other": Answerer._other,
}


class _NoMatchWords(Composer):
    """A composer whose summary prefix fits a question that matched nothing in particular."""

    def word(self, key: str) -> str:
        return WORDS["no_match" if key == "summary" else key][self.lang]


def _names_code_of(entry: Entry, question: str) -> bool:
    """Whether the question names one of the entry's code identifiers."""
    folded = question.casefold()
    return any(len(i) >= 4 and i.strip("`().").casefold() in folded for i in entry.identifiers)


def _sentence_end(text: str, start: int) -> int:
    ends = [i for i in (text.find(ch, start) for ch in "。！？\n") if i >= 0]
    return min(ends) if ends else len(text)


def _entry_ref(entry: Entry) -> str:
    return f"#{entry.pr} {entry.title}" if entry.pr else entry.title


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
