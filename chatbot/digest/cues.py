"""Reading cues: a sentence anywhere in a note that tells whom to read or skip the PR.

A verdict may also be marked rather than said in a sentence: an emoji before its words
(`✅ 建议看`, `💤 可跳过`, Slack's shortcode for one: `:zzz: 可跳过`) makes
them the verdict wherever they stand, at a line's start or after the audience it closes.

Reviewers rarely write a bare `Must read.`: they say `Read this if you own the scheduler.`,
`You can skip this unless you run TPUs.`, `If you serve LoRA, this is a must-read.`,
`做 spec decode 的同学值得读，其余人可以跳过`, `只有用 Granite 的人需要看`. The verdict is the cue's
own words; the sentence names its readers. Verdict words come from the note vocabulary; what
is read here is the sentence's shape around them (who, a modal, a condition).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chatbot.digest.clauses import clean, split_top_level
from chatbot.digest.note_labels import vocabulary
from chatbot.text import EMOJI_SHORTCODE, has_han, once

# What may follow an English cue: the sentence's end or a condition naming its readers.
_EN_AFTER = r"(?=\s*(?:[.!;,:]|$)|\s+(?:if|unless|when|for|to|once|before|only if|as long as|but)\b)"
# An imperative to read or skip, with what to read: `Read this if …`, `Only skim it.`, `Skip.`
_EN_IMPERATIVE_RE = re.compile(
    r"(?i)^(?:(?:only|just|definitely|def|defo|probably|prob|do|please|pls|still)\s+)?"
    r"(?:read|skim|skip|ignore|study|bookmark)"
    r"(?:\s+(?:this(?: one)?|it|the (?:pr|diff|code|description|thread|discussion|rest)))?"
    r"(?:\s+(?:closely|carefully|first|now|in full|end to end|as well|too|later))?" + _EN_AFTER
)
# Words that may come before a verdict word in a cue addressed to readers: `You can skip this`,
# `Most people can skip it`, `A must-read`, `Not worth your time`, `Safe to skip`.
_EN_LEAD_RE = re.compile(
    r"(?i)^(?:(?:a|an|not|probably|definitely|honestly|really|safely|mostly|easily|totally|arguably|imo|"
    r"tbh|ngl|fwiw|def|defo|prob|u|you|i|i'd|we|most people|most readers|most folks|everyone else|others|the rest|this is|"
    r"this one is|it's|that's|safe to|fine to|ok to|okay to|can|could|should|may|might|would|will|just)"
    r"[\s,]+){1,4}"
)
_EN_OBJECT_RE = re.compile(r"(?i)\s+(?:this(?: one)?|it)\b")
_EN_AFTER_RE = re.compile(_EN_AFTER)
# A few words and a colon before the cue: `My take: worth reading.`
_SHORT_HEAD_RE = re.compile(r"^(?:[A-Za-z'’]+[ \t]+){0,2}[A-Za-z'’]+[ \t]*:[ \t]+")
_CONDITION_FIRST_RE = re.compile(r"(?i)^(?:if|unless|when|for)\s[^,，]{1,80}[,，]\s*")

# A Chinese clause that ends telling its readers to read or skip: who (`…的人`, `同学`, `其余人`,
# `…的话`, `这篇`, `x86`), maybe `才`/`都`, a modal (`可以`, `需要`, `值得`), the reading verb.
_ZH_CUE_RE = re.compile(
    r"(?:人|同学|用户|读者|开发者|团队|维护者|大家|话|的|篇|条|[A-Za-z0-9])[ \t]*(?:才|都|也|就|则)?[ \t]*"
    r"(?:(?:值得|要|需要|可以|可|建议|应该|务必|必须|不用|不必|无需|不需要|没必要|直接)[ \t]*)*"
    r"(?:(?:细|精|略|泛|选|必|一)?(?:读|看)(?:一读|一看|一下|看|读)?|跳过|略过|忽略|不看)(?:也行|即可|就行)?$"
)
# The last character of every `_ZH_CUE_RE` match (读, 看, 一下, 跳过, 略过, 忽略, 也行, 即可): a
# clause ending otherwise is spared the pattern, which is tried at each of its characters (the
# note analysis on a first answer, bench/scale.py's follow-up answer row).
_ZH_CUE_ENDS = frozenset("读看下过略行可")

# How little to read: `只看 diff 就够`, `扫一眼标题就行`, `看看描述即可`.
_ZH_ENOUGH_RE = re.compile(
    r"(?:只|就|随便)?[ \t]*(?:看|扫|读)(?:一眼|一下|看)?[ \t]*[^，,。；;]{0,16}?[ \t]*(?:就够了?|就行了?|即可|足够了?)$"
)

# The last character of every `_ZH_ENOUGH_RE` match (就够, 就行, 即可, 足够, each with 了 or not).
_ZH_ENOUGH_ENDS = frozenset("够了行可")
_ZH_ANY_CUE_ENDS = _ZH_CUE_ENDS | _ZH_ENOUGH_ENDS

_ZH_OPINION_RE = re.compile(r"(?:个人|我|我们)?(?:觉得|认为|感觉|看来)[，,]?[ \t]*")


@dataclass(frozen=True)
class Cue:
    """A reading cue: the verdict's words, whether the sentence names readers, and whether the
    cue is the whole sentence (else the rest is still the note's content)."""

    verdict: str
    for_readers: bool
    whole: bool


def reading_cue(sentence: str) -> Cue | None:
    """The reading cue a sentence states, in English or Chinese, or None (once per sentence within
    an answer: the note analysis and the answer's candidates both ask)."""
    return once("reading_cue", sentence, lambda: _reading_cue(sentence))


def _reading_cue(sentence: str) -> Cue | None:
    text = clean(sentence).rstrip("。.!！")
    if not text:
        return None
    if has_han(text):
        return _chinese_cue(text)
    for lead, for_readers in ((_SHORT_HEAD_RE, False), (_CONDITION_FIRST_RE, True)):
        head = lead.match(text)  # `My take: worth reading.`, `If you own the scheduler, read this.`
        if head is not None:
            rest = text[head.end() :]
            said = _english_cue(rest) or _said(rest)
            return Cue(said, for_readers, True) if said else None
    said = _english_cue(text)
    return Cue(said, len(said) < len(text), True) if said else None


def _said(text: str) -> str | None:
    """A verdict phrase that is the whole clause (`this is a must-read`, `worth a look`)."""
    match = vocabulary().verdict_re.search(text)
    return text if match is not None and _EN_LEAD_RE.sub("", text[: match.start()]) == "" else None


def _english_cue(text: str) -> str | None:
    """`Read this`, `You can skip this`, `Not worth your time`: the cue's words, when what follows
    them is the sentence's end or a condition."""
    imperative = _EN_IMPERATIVE_RE.match(text)
    if imperative is not None:
        return imperative.group(0)
    lead = _EN_LEAD_RE.match(text)
    start = lead.end() if lead is not None else 0
    said = vocabulary().verdict_re.match(text, start)
    if said is None or lead is None:
        return None  # a verdict word opening the sentence is read by the note's own rules
    end = said.end()
    obj = _EN_OBJECT_RE.match(text, end)
    end = obj.end() if obj is not None else end
    return text[:end] if _EN_AFTER_RE.match(text, end) else None


def _cued(piece: str) -> bool:
    """Whether a Chinese clause reads as a cue or a how-little-to-read; each pattern is tried
    only on a clause ending as its matches end (bench/scale.py's follow-up answer row)."""
    end = piece[-1:]
    return (end in _ZH_CUE_ENDS and _ZH_CUE_RE.search(piece) is not None) or (
        end in _ZH_ENOUGH_ENDS and _ZH_ENOUGH_RE.search(piece) is not None
    )


def _chinese_cue(text: str) -> Cue | None:
    """`做 spec decode 的同学值得读，其余人可以跳过`: the run of clauses that are cues, from the
    first; `个人觉得值得一看`: an opinion's verdict."""
    opinion = _ZH_OPINION_RE.match(text)
    if opinion is not None and vocabulary().verdict_re.fullmatch(text, opinion.end()):
        return Cue(text[opinion.end() :], False, True)
    if not _ZH_ANY_CUE_ENDS.intersection(text):
        return None  # no clause can end as a cue: most sentences of a note
    pieces = [clean(p).rstrip("，,；;") for p in split_top_level(text, ["，", ",", "；", ";"])]
    cued = [i for i, piece in enumerate(pieces) if _cued(piece)]
    if not cued:
        return None
    first = cued[0]
    last = first
    while last + 1 in cued:
        last += 1
    verdict = "，".join(pieces[first : last + 1])
    return Cue(verdict, True, len(verdict) * 5 >= len(text) * 3)


# A verdict with its readers in brackets: `必读（跑 Mixtral 的同学）`, `Must read (ROCm folks)`.
_BRACKETED_RE = re.compile(r"[ \t]*([^（(\n]{1,16}?)[ \t]*[（(]([^）)\n]{1,60})[）)][ \t]*[。.]?")


def verdict_for_readers(text: str) -> tuple[str, str, str] | None:
    """(verdict, readers, the rest) when a text opens with a verdict and its readers in brackets."""
    match = _BRACKETED_RE.match(text)
    if match is None or not vocabulary().verdict_re.fullmatch(match.group(1).strip()):
        return None
    return match.group(1).strip(), match.group(2).strip(), text[match.end() :]


# An emoji (a pictograph: ✅ 💤 🔥 👉 ⚠, a variation selector after it; or Slack's `:zzz:`) before a verdict's
# words: the mark makes them a verdict wherever they stand. The words end at punctuation, a
# space, a bracket (their readers) or the line's end; never at a colon (`📌 推荐：` is a label).
_MARK = "[\u2190-\u21ff\u2300-\u23ff\u25a0-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]\ufe0f?"
_MARK_RE = re.compile(f"{_MARK}[ \t]*")  # one class: `re` skips to it (an alternation it cannot)
_SHORTCODE_MARK_RE = re.compile(f"{EMOJI_SHORTCODE.pattern}[ \t]*")
_MARKED_END_RE = re.compile(r"[ \t]*(?:[，,。.!！;；—)）(（]|\s|$)")
_AFTER_RE = re.compile(r"[ \t]*[，,;；—]?[ \t]*")
_LIST_HEAD_RE = re.compile(r"[ \t]*(?:[-*•·][ \t]*)?")
_READERS_RE = re.compile(r"[ \t]*[（(]([^）)\n]{1,60})[）)]")


@dataclass(frozen=True)
class MarkedVerdict:
    """A verdict marked by an emoji: its words, the readers bracketed after them, and the text
    with the mark, the words and the readers taken out."""

    verdict: str
    readers: str | None
    rest: str


def marked_verdict(text: str) -> MarkedVerdict | None:
    """The first verdict an emoji marks in the text (`✅ 建议看（做 LoRA 路由的同学）`), or None."""
    verdict_re = vocabulary().verdict_re
    for mark in _marks(text):
        said = verdict_re.match(text, mark.end())
        if said is None or not _MARKED_END_RE.match(text, said.end()) or _labelled(text, said.end()):
            continue
        readers = _READERS_RE.match(text, said.end())
        after = readers.end() if readers else said.end()
        punctuation = _AFTER_RE.match(text, after)  # (matches always: it may be empty)
        end = punctuation.end() if punctuation else after
        rest = text[: _line_head(text, mark.start())] + text[end:]
        return MarkedVerdict(said.group(0), readers.group(1).strip() if readers else None, rest)
    return None


def _marks(text: str) -> list[re.Match[str]]:
    """The emoji and (in a text with colons) Slack shortcodes of a text, in order."""
    marks = list(_MARK_RE.finditer(text))
    if ":" in text:
        marks = sorted([*marks, *_SHORTCODE_MARK_RE.finditer(text)], key=lambda m: m.start())
    return marks


def _line_head(text: str, start: int) -> int:
    """Where the marked verdict's text starts: its line's start when only a list marker comes
    before it (`• 💤 可跳过，…`: the rest of the line is no list item), else the mark."""
    line_start = text.rfind("\n", 0, start) + 1
    return line_start if _LIST_HEAD_RE.fullmatch(text, line_start, start) else start


def _labelled(text: str, end: int) -> bool:
    """`📌 推荐：…`: the verdict's word is a label whose value follows its colon."""
    return text[end : end + 1] in (":", "：")
