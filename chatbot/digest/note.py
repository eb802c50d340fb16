"""Anatomy of a review note: verdict, why-read line, focus points, audience, caveats, refs.

Notes follow the curator's habits (一是…二是…, (1)(2)(3), 重点关注三点：…, 对…有借鉴意义,
注意：…). Everything extracted is the curator's own words, cut at the note's own punctuation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chatbot.digest.clauses import clauses, clean, sentences, split_top_level
from chatbot.digest.model import Ref, pull_url

VERDICT_RE = re.compile(
    r"^(值得精读|值得一读|值得细读|值得关注|推荐阅读|推荐精读|必读|可略读|可跳过|选读|泛读)"
)

# Lead-ins that announce an enumeration of focus points.
ENUM_INTRO_RE = re.compile(
    r"(重点关注|建议重点学习|重点学习|尤其是|值得借鉴的设计决策包括|值得借鉴的|值得学习的|亮点包括|看点)[^：:]*[：:]"
)
# Item markers: 一是/二是…, (1)/(2)…, ①②…
_CN_NUM = "一二三四五六七八九十"
MARKER_RE = re.compile(rf"(?:[{_CN_NUM}]是|[（(]\d+[)）]|[①②③④⑤⑥⑦⑧⑨⑩])\s*")
AUDIENCE_RE = re.compile(
    r"^(?:对|可作为|适合|推荐给)[^。]+?(?:借鉴意义|参考价值|参考实现|参考|帮助|必读|阅读|价值)$"
)
CAVEAT_LEAD_RE = re.compile(
    r"^(?:注意[：:，,]?|需要注意[：:，,]?|风险[：:]|提醒[：:]|对\s*reviewer\s*而言[，,]?|另可留意|另需留意|"
    r"阅读时可重点关注|阅读时可留意|待确认[：:]?|遗留问题[：:]?)"
)
CAVEAT_ANYWHERE_RE = re.compile(r"(可能被重新审视|尚未调查|尚不清楚|仍需确认|有待|是否有必要|是否可接受)")

WARNING_CLAUSE_RE = re.compile(r"^(?:提醒|警示|注意)")
REF_RE = re.compile(r"(?<![\w/&])#(\d{2,7})\b")
BACKTICK_RE = re.compile(r"`([^`\n]+)`")
# Bare code names: dotted (asyncio.gather, object.__new__) or with an underscore (prompt_is_token_ids).
CODE_RE = re.compile(
    r"(?<![\w`./-])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|_*[A-Za-z0-9]+_[A-Za-z0-9_]*)"
)
_PERSON_PATTERNS = (
    re.compile(r"@([A-Za-z0-9][A-Za-z0-9-]{1,38})"),
    re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*\[bot\])"),
    re.compile(r"(?<![\w`])([a-z0-9][a-z0-9-]{2,38})\s*(?:提出|指出|认为|建议|补充|发现)"),
    re.compile(r"(?<![\w`])([a-z0-9][a-z0-9-]{2,38})\s*对[^。；，]{1,40}的(?:解释|分析|说明|回复|意见)"),
    re.compile(
        r"(?<![\w`])([a-z0-9][a-z0-9-]{2,38})\s*的[^，。；\s]{0,6}(?:分析|解释|评论|意见|建议|审查|review)"
    ),
)
HEAD_SEPARATORS = ("——", "：", ":", "，", ",", "；")


@dataclass
class NoteParts:
    """What the note analysis found; every string is a piece of the note."""

    verdict: str | None = None
    why: str | None = None
    highlights: list[str] = field(default_factory=list)
    audience: str | None = None
    caveats: list[str] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)

    def entry_fields(self) -> dict[str, object]:
        """The parts as keyword arguments of `Entry`."""
        return {
            "verdict": self.verdict,
            "why": self.why,
            "highlights": self.highlights,
            "audience": self.audience,
            "caveats": self.caveats,
            "refs": self.refs,
            "people": self.people,
            "identifiers": self.identifiers,
        }


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def find_refs(text: str, repo: str) -> list[Ref]:
    """`#N` and GitHub pull/issue URLs of the entry's repository, in order of appearance."""
    found = [(m.start(), m.group(1)) for m in REF_RE.finditer(text)]
    url_re = re.compile(rf"https://github\.com/{re.escape(repo)}/(?:pull|issues)/(\d+)", re.IGNORECASE)
    found += [(m.start(), m.group(1)) for m in url_re.finditer(text)]
    numbers = _dedupe([n for _, n in sorted(found)])
    return [Ref(number=int(n), url=pull_url(repo, int(n))) for n in numbers]


def find_identifiers(text: str) -> list[str]:
    """Code names: everything in backticks, then bare dotted or snake_case names."""
    found = [m.strip() for m in BACKTICK_RE.findall(text)]
    without_code = BACKTICK_RE.sub(" ", text)
    for m in CODE_RE.findall(without_code):
        if not re.fullmatch(r"v?\d[\d.]*", m):
            found.append(m)
    return _dedupe([f for f in found if f])


def find_people(text: str) -> list[str]:
    found: list[str] = []
    for pattern in _PERSON_PATTERNS:
        found.extend(pattern.findall(BACKTICK_RE.sub(" ", text)))
    return _dedupe([p for p in found if p.lower() not in {"reviewer", "author", "the"}])


def _split_markers(body: str) -> list[str]:
    """Items of a marked enumeration (一是…二是…, (1)…(2)…)."""
    parts = MARKER_RE.split(body)
    return [clean(p) for p in parts[1:] if clean(p)]


def _split_list(body: str) -> list[str]:
    """Items of an unmarked list: `A、B，以及 C`."""
    pieces = split_top_level(body, ["、", "；", ";", "，以及", "以及", ", and "])
    items = [clean(re.sub(r"(?:，?以及|, and )$", "", clean(p))) for p in pieces]
    return [re.sub(r"^(?:以及|及|和)\s*", "", item) for item in items if item]


def _head(item: str) -> str:
    """The first words of a focus point, up to its own dash or comma."""
    head = item
    for sep in HEAD_SEPARATORS:
        cut = split_top_level(head, [sep])
        if len(cut) > 1:
            head = clean(cut[0])
    return head


def _is_audience(text: str) -> bool:
    return bool(AUDIENCE_RE.match(text))


def _is_caveat(text: str) -> bool:
    return bool(CAVEAT_LEAD_RE.match(text) or CAVEAT_ANYWHERE_RE.search(text))


def _caveat_text(text: str) -> str:
    """A caveat without its `注意：` label; other lead-ins carry meaning and stay."""
    return clean(re.sub(r"^(?:注意|需要注意|风险|提醒|待确认|遗留问题)\s*[：:，,]\s*", "", text))


def analyse_note(note: str, repo: str, title: str = "") -> NoteParts:
    """Cut a note into its parts; pieces that fit no part stay only in the note."""
    parts = NoteParts()
    text = note.strip()
    parts.refs = find_refs(text, repo)
    parts.people = find_people(text)
    parts.identifiers = find_identifiers(f"{title}\n{text}")

    body_sentences: list[str] = []
    enum_intro: str | None = None
    for index, sentence in enumerate(sentences(text)):
        if index == 0:
            match = VERDICT_RE.match(sentence)
            if match:
                parts.verdict = match.group(1)
                sentence = clean(sentence[match.end() :])
                if not sentence:
                    continue
        if _is_caveat(sentence) and not MARKER_RE.search(sentence):
            parts.caveats.append(_caveat_text(sentence))
            continue
        if _is_audience(sentence):
            parts.audience = parts.audience or sentence
            continue
        # A trailing `，对…有直接参考价值` clause is the audience of a longer sentence.
        tail = split_top_level(sentence, ["，", ","])
        if len(tail) > 1 and _is_audience(clean(tail[-1])):
            parts.audience = parts.audience or clean(tail[-1])
            sentence = clean("".join(tail[:-1]))
        items, intro = _enumeration(sentence)
        if items:
            parts.highlights.extend(items)
            if intro and not ENUM_INTRO_RE.match(intro + "："):
                body_sentences.append(intro)
            elif intro and enum_intro is None:
                enum_intro = intro
            continue
        body_sentences.append(sentence)

    if not parts.highlights:
        parts.highlights = list(body_sentences)
    # A focus point that ends with a warning (`…，提醒跨版本验证的必要性`) also names a caveat.
    for item in parts.highlights:
        parts.caveats.extend(c for c in clauses(item) if WARNING_CLAUSE_RE.match(c))
    if body_sentences:
        parts.why = body_sentences[0]
    elif parts.highlights:
        lead = enum_intro or "重点"
        parts.why = f"{lead}：" + "；".join(_head(h) for h in parts.highlights)
    parts.highlights = _dedupe(parts.highlights)
    parts.caveats = _dedupe(parts.caveats)
    return parts


def _enumeration(sentence: str) -> tuple[list[str], str | None]:
    """Focus points in a sentence, with the lead-in before them (if any)."""
    if len(MARKER_RE.findall(sentence)) >= 2:
        first = MARKER_RE.search(sentence)
        assert first is not None
        intro = clean(sentence[: first.start()]) or None
        return _split_markers(sentence[first.start() :]), intro
    halves = split_top_level(sentence, ["：", ":"])
    if len(halves) >= 2:
        intro = clean(halves[0])
        items = _split_list("".join(halves[1:]))
        if len(items) >= 2:
            return items, intro
    return [], None
