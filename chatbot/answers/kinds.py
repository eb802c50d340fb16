"""Kinds of question answered by quoting the note: selectors over the curator's words, as rows.

A row (`Quoting`) says which pieces a kind looks at (the note's, with or without the PR title),
the selectors that mark the ones that answer it (patterns with weights), and its words: the
prefix, and the line saying the note has nothing on it. The few kinds with a twist name it in
the row: a bonus (caveats for risks), a narrower row for some questions (benchmark data for
performance), a fallback when nothing matches. `chatbot.answers.answerer.ANSWERS` is the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from chatbot.answers.composer import Composer
from chatbot.answers.pieces import Piece, Selector, entry_pieces, score, select
from chatbot.digest import Entry

if TYPE_CHECKING:
    from chatbot.answers.answerer import Answerer

# How the answerer answers one kind of question: a method of `Answerer` or a `Quoting` row.
Handler = Callable[["Answerer", Entry, str, Composer], str]
# A row's last resort when no piece matches: an answer, or None for the row's "not in the note".
Fallback = Callable[["Answerer", Entry, str, Composer], "str | None"]

# Clause selectors per kind: (pattern, weight). Patterns look at the curator's words.
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
CAVEAT_MARK_RE = re.compile(r"^(?:注意|需要留意的是|需要留意|需留意|留意|提醒)\s*[：:，,]\s*")
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
# Benchmark data is a measured change (8%-22%, 29.86 → 32.61 it/s), not "30s 超时".
BENCHMARK_QUESTION_RE = re.compile(r"benchmark|bench\b|基准|跑分|数据|实测|测试结果|measured", re.I)
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
# A model name has a shape: letters and digits joined by - . / (Qwen2-0.5B, Llama-3.1-8B,
# deepseek-ai/DeepSeek-V3, Mistral-Small-3.2-24B-Instruct-2506), or stands next to 模型/model(s).
MODEL_NAME_RE = re.compile(r"(?<![\w/.-])[A-Za-z][\w.]*(?:[-/][\w.]+)+")
MODEL_WORDS = [
    (re.compile(r"模型|models?\b|checkpoints?|检查点|架构|architectures?", re.I), 1.0),
]


class _ModelNames:
    """A selector pattern for model names by shape: letters and digits joined by - . /."""

    def search(self, string: str, /) -> bool:
        return any(
            re.search(r"\d", m.group(0)) and re.search(r"[A-Za-z]{2}", m.group(0))
            for m in MODEL_NAME_RE.finditer(string)
        )


MODEL_SELECTORS: list[Selector] = [(_ModelNames(), 3.0), *MODEL_WORDS]


@dataclass(frozen=True)
class Quoting:
    """A kind of question answered by quoting the pieces of the note its selectors match, best
    first (a row of the answer table: a new kind of this shape is a row, not a method)."""

    selectors: Sequence[Selector]
    label: str  # the prefix's key in data/answer_words.yaml
    missing: str  # the key of the line saying the note has nothing on it
    title: Literal["no", "first", "last"] = "no"  # the PR title as a candidate piece, and where
    most: int = 2  # pieces quoted at the most
    bonus: Callable[[Entry, Sequence[Piece]], dict[str, float]] | None = None  # per piece source
    adjust: Callable[[str, Entry, list[Piece]], tuple[str, list[Piece]]] | None = None  # label, pieces
    narrower: tuple[re.Pattern[str], Quoting] | None = None  # a question matching it takes that row
    fallback: Fallback | None = None

    def __call__(self, answerer: Answerer, entry: Entry, question: str, c: Composer) -> str:
        if self.narrower is not None and self.narrower[0].search(question):
            return self.narrower[1](answerer, entry, question, c)
        answer = self.quoted(entry, question, c)
        if answer is None and self.fallback is not None:
            answer = self.fallback(answerer, entry, question, c)
        return c.nothing(self.missing) if answer is None else answer

    def quoted(self, entry: Entry, question: str, c: Composer) -> str | None:
        """The answer quoting the matching pieces, or None when no piece matches."""
        pieces = self.pieces(entry)
        bonus = self.bonus(entry, pieces) if self.bonus is not None else {}
        chosen = select(pieces, self.selectors, bonus, question)
        if not chosen:
            return None
        label = self.label
        if self.adjust is not None:
            label, chosen = self.adjust(label, entry, chosen)
        return c.quote(c.word(label), chosen[: self.most])

    def pieces(self, entry: Entry) -> list[Piece]:
        own = entry_pieces(entry)
        if self.title == "no":
            return own
        title = Piece("title", entry.title)
        return [title, *own] if self.title == "first" else [*own, title]


def caveat_bonus(entry: Entry, pieces: Sequence[Piece]) -> dict[str, float]:
    """The curator's caveats are the risks first of all."""
    return {p.source: 5.0 for p in pieces if p.source.startswith("caveats")}


def caveat_marks(label: str, entry: Entry, chosen: list[Piece]) -> tuple[str, list[Piece]]:
    """A sentence the curator opens with 注意/需要留意 is a caveat even when not parsed as one (the
    mark goes); without any caveat, the prefix says these are only things to note."""
    marked = [p for p in chosen if CAVEAT_MARK_RE.match(p.text)]
    chosen = [
        Piece(p.source, CAVEAT_MARK_RE.sub("", p.text, count=1), p.short) if p in marked else p
        for p in chosen
    ]
    return (label if entry.caveats or marked else "risks_near"), chosen


def design_intro_bonus(entry: Entry, pieces: Sequence[Piece]) -> dict[str, float]:
    """Focus points in the sentence a "设计决策：" intro opens are its items."""
    bonus: dict[str, float] = {}
    for match in DESIGN_INTRO_RE.finditer(entry.note):
        end = _sentence_end(entry.note, match.end())
        for p in pieces:
            at = entry.note.find(p.text[:12], match.end())
            if p.source.startswith("highlights") and match.end() <= at < end:
                bonus[p.source] = 2.0
    return bonus


def _sentence_end(text: str, start: int) -> int:
    ends = [i for i in (text.find(ch, start) for ch in "。！？\n") if i >= 0]
    return min(ends) if ends else len(text)


CHANGE = Quoting(CHANGE_WORDS, "change", "no_design")


def change_for_fix(answerer: Answerer, entry: Entry, question: str, c: Composer) -> str | None:
    """ "How was it fixed?" on a note without design talk: what the change does answers it."""
    return CHANGE.quoted(entry, question, c) if FIX_QUESTION_RE.search(question) else None


def title_on_tests(answerer: Answerer, entry: Entry, question: str, c: Composer) -> str | None:
    """No piece of the note on tests: the title may say it ("… and add a regression test")."""
    title = Piece("title", entry.title)
    return c.quote(c.word("tests"), [title]) if score(title.text, TEST_WORDS) else None
