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
from typing import Literal, Protocol

from chatbot.answers.clause_ranker import (
    EN_STOP,
    concept_terms,
    phrase_in,
    rank_pieces,
    rank_pieces_detailed,
    warm_up,
)
from chatbot.answers.intents import Intent, classify, normalize_question
from chatbot.digest import Entry, Library, Ref, clauses, clean, sentences, split_top_level
from chatbot.search import Glossary, load_glossary
from chatbot.text import has_han, strip_slack_markup

Lang = Literal["zh", "en"]
BUDGET_SHARE = 0.75
MIN_LEAD = 8  # a lead shorter than this is a heading, not a point
SHORT_NOTE = 200  # on a note this short, one whole relevant sentence may be quoted
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
        head = FRAMING_RE.sub("", self.text, count=1) or self.text
        intro = split_top_level(head, ["：", ":"])
        if len(intro) > 1 and len(clean(intro[0])) <= 16 and clean("".join(intro[1:])):
            head = clean("".join(intro[1:]))
        for sep in ("——", "：", ":", "，", ",", "；"):
            cut = split_top_level(head, [sep])
            if len(cut) > 1 and clean(cut[0]):
                # A bare heading ("测试设计——…") says nothing: keep what follows it too.
                short = clean(cut[0])
                if len(short) < MIN_LEAD and len(cut) > 1:
                    short = clean(short + sep + _first_clause(sep.join(cut[1:])))
                head = short
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
    "change": {"zh": "改动：", "en": "The change: "},
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
    "no_bench": {"zh": "笔记没有提到 benchmark 数据。", "en": "The note doesn't cover benchmarks."},
    "other": {"zh": "", "en": "From the note: "},
    "not_covered": {"zh": "笔记没有提到{topic}。", "en": "The note doesn't cover {topic}."},
    "not_covered_any": {"zh": "笔记没有谈到这个问题。", "en": "The note doesn't cover that."},
    "see": {"zh": "可看：", "en": "See: "},
    "date": {"zh": "日期：", "en": "Date: "},
    "no_date": {"zh": "笔记和元数据都没有日期。", "en": "Neither the note nor the PR metadata has a date."},
    "state": {"zh": "状态：", "en": "State: "},
    "no_state": {
        "zh": "笔记没说是否已合并。",
        "en": "The note doesn't say whether it is merged.",
    },
    "english": {"zh": "英文标题：", "en": "English title: "},
    "in_short": {"zh": "笔记要点：", "en": "The note (Chinese) in short: "},
    "no_english": {"zh": "没有这个 PR 的英文标题。", "en": "There is no English title for this PR."},
    "labels": {"zh": "标签：", "en": "Tags: "},
    "no_labels": {"zh": "这个条目没有标签。", "en": "This entry has no tags."},
    "cause": {"zh": "原因：", "en": "Cause: "},
    "no_cause": {"zh": "笔记没写根因。", "en": "The note doesn't name a root cause."},
    "models": {"zh": "模型：", "en": "Models: "},
    "no_models": {"zh": "笔记没提具体模型。", "en": "The note names no models."},
}


class Matcher(Protocol):
    """What a selector needs of a pattern (a compiled regex, or a shape check like model names)."""

    def search(self, string: str, /) -> object: ...


Selector = tuple[Matcher, float]

# Clause selectors per intent: (pattern, weight). Patterns look at the curator's words.
TEST_WORDS = [(re.compile(r"测试|断言|测|验证|覆盖率|用例|test|assert", re.I), 1.0)]
DESIGN_WORDS = [
    (re.compile(r"决策|权衡|取舍|设计思路|trade-?off", re.I), 2.0),
    (re.compile(r"(?<!测试)设计|design", re.I), 1.5),
    (
        re.compile(
            r"模式|思路|[修改写做解]法|方案|拆分|统一|入口|下沉|抽象|架构|helper|处理方式|逻辑|更好的"
        ),
        1.0,
    ),
]
DESIGN_INTRO_RE = re.compile(r"(设计决策|设计|决策|权衡|取舍)[^。：:]{0,12}[：:]")
RISK_WORDS = [
    (
        re.compile(
            r"陷阱|坑|隐患|风险|反面教材|尚未|重新审视|是否可接受|是否有必要|不一致|争议|提醒|必要性|"
            r"代价|副作用|牺牲|不再可用|不再支持|无法受益|不同意见"
        ),
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
CAUSE_WORDS = [
    (re.compile(r"根因|根源|起因|原因|问题出在|症结|root cause|caused by", re.I), 3.0),
    (re.compile(r"由于|因为|导致|(?<![一极细以])致(?![力谢])|源于|出在|because|due to", re.I), 2.0),
    (re.compile(r"触发|引入|改变了|假设|误|漏|没有考虑|未考虑|失效|报错|崩溃|冲突|broke", re.I), 1.0),
]
STATE_WORDS = [
    (
        re.compile(
            r"已合并|已合入|已经合|合入主干|合进|尚未合并|未合并|仍处于|[A-Za-z]+ 状态|\bmerged\b|\bopen\b|\bclosed\b|"
            r"草稿|draft|revert|回滚",
            re.I,
        ),
        2.0,
    ),
]
# A model name has a shape: letters and digits joined by - . / (Qwen2-0.5B, Llama-3.1-8B,
# deepseek-ai/DeepSeek-V3, Mistral-Small-3.2-24B-Instruct-2506), or stands next to 模型/model(s).
MODEL_NAME_RE = re.compile(r"(?<![\w/.-])[A-Za-z][\w.]*(?:[-/][\w.]+)+")
MODEL_WORDS = [
    (re.compile(r"模型|models?\b|checkpoints?|检查点|架构|architectures?", re.I), 1.0),
]
# A framing opener says who or what the sentence is for, not the point: "对 reviewer 而言，…".
FRAMING_RE = re.compile(r"^(?:对于?[^，,。：:]{1,24}(?:而言|来说)|另外|此外|其次|总之|总的来说)[，,：:]\s*")
PERSON_ACTS_RE = re.compile(
    r"(?<![\w/.@-])[A-Za-z][\w-]{2,38}\s*(?:在\s*review|在评审|认为|指出|建议|提出|提醒|发现|解释|质疑|回复|"
    r"argued|suggested|pointed out|noted|asked)"
)
BENCHMARK_QUESTION_RE = re.compile(r"benchmark|bench\b|基准|跑分|数据|实测|测试结果|measured", re.I)
CAVEAT_MARK_RE = re.compile(r"^(?:注意|需要留意的是|需要留意|需留意|留意|提醒)\s*[：:，,]\s*")
FIX_QUESTION_RE = re.compile(r"fix|修|改|实现|implement|work|做的|how does it", re.I)
CHANGE_WORDS = [
    (
        re.compile(
            r"修复|改为|改成|改用|换成|替换|补上|补了|新增|加了|更新|移除|删除|引入|只改|把|让|changes?|replaces?|adds?",
            re.I,
        ),
        1.0,
    ),
]
REVIEW_QUESTION_RE = re.compile(r"review|审阅|审查|评审", re.I)
REVIEWER_ADVICE_RE = re.compile(r"reviewer|review\s*时|审阅时|审查时|评审时", re.I)
BENCH_WORDS = [
    (
        re.compile(
            r"(?<![\w.])\d+(?:\.\d+)?\s*(?:%|倍|x\b)|\d\s*(?:tok/s|tokens/s|it/s|req/s|qps)|"
            r"从\s*[\d.]+[^，。；]{0,12}?(?:提升|上升|下降|降低|降|增加|减少)到",
            re.I,
        ),
        3.0,
    ),
]
MAX_QUESTION_CHARS = 300
AUDIENCE_HINT_RE = re.compile(r"工程师|维护者|reviewer|读者|团队")
PEOPLE_SKIP_RE = re.compile(r"^对\s*reviewer\s*而言")


def _lang(question: str) -> Lang:
    return "zh" if has_han(question) else "en"


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


def _score(text: str, selectors: Sequence[Selector]) -> float:
    return sum(weight for pattern, weight in selectors if pattern.search(text))


TOPIC_WEIGHT = 3.0


def _select(
    pieces: Sequence[Piece],
    selectors: Sequence[Selector],
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


def _focused(piece: Piece, selectors: Sequence[Selector]) -> Piece:
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
        """Body plus the PR link line, always: an answer, or an honest "not in the note", names
        the PR it speaks for (`room` keeps the quote short enough on a long note)."""
        body = body.strip()
        if self.link:
            return f"{body}\n{self.link}" if body else self.link
        return body

    def quote(self, prefix: str, pieces: Sequence[Piece], tail: Sequence[str] = ()) -> str:
        """The longest variant of the pieces that fits: full, first full + leads, leads, fewer."""
        room = self.room
        if pieces and len(self.entry.note) <= SHORT_NOTE:
            # A short note's answer can be the whole relevant sentence.
            whole = len(self._render(prefix, [pieces[0].text], ()))
            room = max(room, min(whole, len(self.entry.note) - 1))
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
            bullets = "\n".join(BULLET + t for t in texts)
            body = f"{prefix.rstrip()}\n{bullets}" if prefix.strip() else bullets
        return "\n".join([body, *tail]).strip() if tail else body.strip()

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

    def __init__(self, library: Library | Sequence[Entry] = (), glossary: Glossary | None = None) -> None:
        self._library = library if isinstance(library, Library) else list(library)
        # The search glossary (with DIGEST_DIR's extensions when the wiring passes it) names the
        # concepts of a question in both languages; the bundled one otherwise.
        self.glossary = glossary if glossary is not None else _bundled_glossary()
        self._tag_index: _TagIndex | None = None
        # Built now, not on the first answer: the tag index and the phrasing data files.
        self._topics()
        warm_up()

    def answer(self, entry: Entry, question: str) -> Answer:
        # "<@U123> 重点看什么？" asks 重点看什么; a question is a line or two, not a pasted log.
        question = strip_slack_markup(question)[:MAX_QUESTION_CHARS]
        intent = _classify(question)
        if intent == "summary" and _names_code_of(entry, question):
            intent = "other"  # "asyncio.all_tasks 是干嘛的" asks about that name, not the whole PR
        if intent in METADATA_INTENTS and _names_other_pr(entry, question):
            intent = "other"  # "what's the status of #53516?" asks about that PR, as the note tells it
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

    def _none(self, entry: Entry, c: Composer, key: str, question: str = "") -> str:
        """One honest line and the PR link: other entries "on the same topic" are not an answer."""
        c.found = False
        return c.lines([c.word(key)])

    # --- intents -------------------------------------------------------------------------------

    def _why(self, entry: Entry, question: str, c: Composer) -> str:
        why = entry.why or (entry.highlights[0] if entry.highlights else entry.title)
        verdict = f"{entry.verdict}。" if entry.verdict else ""
        if entry.verdict:
            c.sources.append("verdict")
        return c.quote(c.word("why") + verdict, [Piece("why", why)])

    def _focus(self, entry: Entry, question: str, c: Composer) -> str:
        every = entry_pieces(entry)
        pieces = [p for p in every if p.source.startswith("highlights")]
        if REVIEW_QUESTION_RE.search(question):
            # "What should I review?": the curator's advice to reviewers comes first.
            advice = [p for p in every if REVIEWER_ADVICE_RE.search(p.text)]
            pieces = [*advice[:1], *(p for p in pieces if not advice or p.text != advice[0].text)]
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
        return c.lines([prefix])

    def _risks(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = entry_pieces(entry)
        bonus = {p.source: 5.0 for p in pieces if p.source.startswith("caveats")}
        chosen = _select(pieces, RISK_WORDS, bonus, question)
        if not chosen:
            return self._none(entry, c, "no_risks", question)
        # A sentence the curator opens with 注意/需要留意 is a caveat even when not parsed as one.
        marked = [p for p in chosen if CAVEAT_MARK_RE.match(p.text)]
        chosen = [
            Piece(p.source, CAVEAT_MARK_RE.sub("", p.text, count=1), p.short) if p in marked else p
            for p in chosen
        ]
        prefix = c.word("risks") if entry.caveats or marked else c.word("risks_near")
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
        if not chosen and FIX_QUESTION_RE.search(question):
            # "How was it fixed?" on a note without design talk: what the change does answers it.
            chosen = _select(pieces, CHANGE_WORDS, {}, question)
            if chosen:
                return c.quote(c.word("change"), chosen[:2])
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
        # A handle by its shape, right before what people do in a review ("ywang96 在 review 中指出").
        named += [p for p in pieces if PERSON_ACTS_RE.search(p.text) and p not in named]
        if REVIEW_QUESTION_RE.search(question) or (c.lang == "en" and "review" in question.casefold()):
            named.sort(key=lambda p: not REVIEW_QUESTION_RE.search(p.text))
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
        numbers = {r.number for r in refs}
        others = [o for o in others if o.pr is None or o.pr not in numbers]
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
        # Benchmark data is a measured change (8%-22%, 29.86 → 32.61 it/s), not "30s 超时".
        selectors = BENCH_WORDS if BENCHMARK_QUESTION_RE.search(question) else PERF_WORDS
        chosen = _select(pieces, selectors, {}, question)
        if not chosen:
            key = "no_bench" if selectors is BENCH_WORDS else "no_perf"
            return self._none(entry, c, key, question)
        return c.quote(c.word("perf"), chosen[:2])

    def _other(self, entry: Entry, question: str, c: Composer) -> str:
        """The note's pieces ranked by the question's terms and glossary concepts; when nothing in
        the note matches, one honest line saying so — never the summary dressed as an answer."""
        pieces = [*entry_pieces(entry), Piece("title", entry.title)]
        if entry.github_title:
            pieces.append(Piece("github_title", entry.github_title))
        ranked = rank_pieces_detailed(question, [p.text for p in pieces], self.glossary)
        if not self._covers_concepts(entry, question):
            return self._not_covered(entry, question, c)
        if not ranked or ranked[0][0] <= 0 or ranked[0][2] < MIN_MATCH:
            if not question_topic(question, self.glossary):
                # Nothing to look for ("<@bot> ?"): the one-line summary is the useful answer.
                return self._summary(entry, question, c)
            return self._not_covered(entry, question, c)
        best = ranked[0][0]
        chosen: dict[str, Piece] = {}
        for score, i, _ in ranked[:3]:
            if score >= best * 0.8 and pieces[i].text not in chosen:
                chosen[pieces[i].text] = pieces[i]
        return c.quote(c.word("other"), list(chosen.values())[:2])

    def _covers_concepts(self, entry: Entry, question: str) -> bool:
        """When the question names glossary concepts ("speculative decoding", "AMD"), the entry
        must name at least one of them (any of its terms, in either language): words inside the
        concept ("decoding" → 解码) matching elsewhere do not make the note answer it."""
        expansions = self.glossary.expand(question)
        if not expansions:
            return True
        text = normalize_question(" ".join([entry.title, entry.github_title or "", entry.note, *entry.tags]))
        return any(
            phrase_in(normalize_question(term), text)
            for e in expansions
            for term in concept_terms(self.glossary, e.concept)
            if len(term) >= 2
        )

    def _not_covered(self, entry: Entry, question: str, c: Composer) -> str:
        c.found = False
        topic = question_topic(question, self.glossary)
        line = c.word("not_covered").format(topic=topic) if topic else c.word("not_covered_any")
        return c.lines([line])

    # --- facts from the metadata ---------------------------------------------------------------

    def _date(self, entry: Entry, question: str, c: Composer) -> str:
        if entry.date is None:
            return self._none(entry, c, "no_date", question)
        c.sources.append("date")
        label = f" (#{entry.pr})" if entry.pr else ""
        return c.lines([f"{c.word('date')}{entry.date.isoformat()}{label}"])

    def _state(self, entry: Entry, question: str, c: Composer) -> str:
        """What the note says about the PR's state; the date from the metadata when known."""
        chosen = _select(entry_pieces(entry), STATE_WORDS, {}, question)
        date = [f"{c.word('date')}{entry.date.isoformat()}"] if entry.date is not None else []
        if chosen:
            if date:
                c.sources.append("date")
            return c.quote(c.word("state"), chosen[:1], date)
        c.found = False
        if date:
            c.sources.append("date")
        return c.lines([c.word("no_state"), *date])

    def _english(self, entry: Entry, question: str, c: Composer) -> str:
        """The PR's English title (metadata), and the note's why line: the note itself is Chinese."""
        if not entry.github_title:
            if classify_summary(question):
                return self._summary(entry, question, c)
            return self._none(entry, c, "no_english", question)
        c.sources.append("github_title")
        lines = [c.word("english") + entry.github_title]
        why = entry.why or (entry.highlights[0] if entry.highlights else "")
        extra = [c.word("in_short") + why, c.word("in_short") + Piece("why", why).lead] if why else []
        return c.lines(lines, extra, source="why")

    def _labels(self, entry: Entry, question: str, c: Composer) -> str:
        if not entry.tags:
            return self._none(entry, c, "no_labels", question)
        c.sources.append("tags")
        return c.lines([c.word("labels") + ", ".join(entry.tags)])

    # --- the note, by shape ----------------------------------------------------------------------

    def _cause(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = [*entry_pieces(entry), Piece("title", entry.title)]
        chosen = _select(pieces, CAUSE_WORDS, {}, question)
        if not chosen:
            # "事件元数据为什么会丢", "what went wrong in the refactor?": the note may say it
            # without a cause word; rank its pieces by the question's terms (or say it doesn't).
            return self._other(entry, question, c)
        return c.quote(c.word("cause"), chosen[:2])

    def _models(self, entry: Entry, question: str, c: Composer) -> str:
        pieces = [*entry_pieces(entry), Piece("title", entry.title)]
        selectors: list[Selector] = [(_ModelNames(), 3.0), *MODEL_WORDS]
        chosen = _select(pieces, selectors, {}, question)
        if not chosen:
            return self._none(entry, c, "no_models", question)
        return c.quote(c.word("models"), chosen[:2])


_HANDLERS: dict[Intent, Callable[[Answerer, Entry, str, Composer], str]] = {
    "english": Answerer._english,
    "date": Answerer._date,
    "state": Answerer._state,
    "labels": Answerer._labels,
    "cause": Answerer._cause,
    "models": Answerer._models,
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


MIN_MATCH = 1.5  # one Latin word, identifier or glossary term; a lone Chinese bigram is not enough
TOPIC_CHARS = 40


class _ModelNames:
    """A selector pattern for model names by shape: letters and digits joined by - . /."""

    def search(self, string: str, /) -> bool:
        text = string
        return any(
            re.search(r"\d", m.group(0)) and re.search(r"[A-Za-z]{2}", m.group(0))
            for m in MODEL_NAME_RE.finditer(text)
        )


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


def _first_clause(text: str) -> str:
    for sep in ("，", ",", "；", "：", ":", "——"):
        cut = split_top_level(text, [sep])
        if len(cut) > 1 and clean(cut[0]):
            return clean(cut[0])
    return clean(text)


METADATA_INTENTS = frozenset({"date", "state", "english", "labels"})
_PR_REF_RE = re.compile(r"(?<![\w&])#(\d{2,7})\b")


def _names_other_pr(entry: Entry, question: str) -> bool:
    """Whether the question names a PR/issue number other than the entry's own."""
    return any(int(n) != entry.pr for n in _PR_REF_RE.findall(question))


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
