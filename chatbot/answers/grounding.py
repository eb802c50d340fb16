"""Is a model's answer grounded in the entries it was given? A check on the facts a reader would act on.

A model can translate and summarise the curator's note, but it must not bring facts of its own: every
PR/issue number, identifier in backticks, number with a unit and person handle in its answer has to
occur in the entries (note, title, metadata) it was shown. Anything else is reported by name, and the
caller falls back to the extractive answer. Numbers are compared by value, not with their unit, so an
answer may translate "8 行" into "8 lines", but within the unit's kind: "80 ms" is not backed by
"8 ms", nor "30 files" by "3 个文件", nor "8 ms" by "8 files" (a value the entries give without a
unit backs any); "8.0x" is "8x". A link the entries don't hold is a fact too (a reader clicks it),
and so is any address, bare domains included (`slack-login-verify.com`: Slack clients make it a
link): every one must occur in the entries. `review` adds the language: an answer not in the asker's language is no answer to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from chatbot.digest import Entry
from chatbot.text import HAN_CHAR
from chatbot.text.links import DOMAIN_LIKE

# "#53529", "PR 53529", "PR #53529", "pull/53529", "issue 6789", "issues/6789", "[#53529]".
_NUMBER_REF = re.compile(
    r"(?:(?<![\w&])#|\bPRs?\s*#?\s*|\bpull/|\bissues?[/\s]\s*#?\s*|\bissue\s*#\s*)(\d{2,7})\b", re.I
)
_BACKTICKED = re.compile(r"`([^`\n]{1,120})`")
_UNITS = (
    r"%|ms|µs|us|ns|s\b|sec(?:onds?)?\b|x\b|×|倍|行|个?文件|files?\b|lines?\b|tokens?\b|tok/s|"
    r"[KMGT]i?B\b|GPUs?\b|卡|秒|毫秒|分钟|minutes?\b|hours?\b|小时|次|个|层|layers?\b|MB/s|GB/s"
)
_NUMBER_WITH_UNIT = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\s*({_UNITS})", re.I)
# A unit's kind, so a translated unit still matches ("8 毫秒" backs "8 ms") and another does not.
_UNIT_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), kind)
    for pattern, kind in (
        (r"^(ms|毫秒)$", "ms"),
        (r"^(µs|us)$", "us"),
        (r"^ns$", "ns"),
        (r"^(s|sec|seconds?|秒)$", "s"),
        (r"^(minutes?|分钟)$", "min"),
        (r"^(hours?|小时)$", "h"),
        (r"^(x|×|倍)$", "x"),
        (r"^(行|lines?)$", "line"),
        (r"^(个?文件|files?)$", "file"),
        (r"^tokens?$", "token"),
        (r"^(GPUs?|卡)$", "gpu"),
        (r"^(层|layers?)$", "layer"),
        (r"^%$", "%"),
    )
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])|\d+(?:\.\d+)?")
_HANDLE = re.compile(r"(?<![\w<])@([A-Za-z0-9][\w.\-]{0,38})")
_URL = re.compile(r"https?://[^\s<>|\"'`]+", re.I)
_URL_TAIL = ".,;:!?)]}>。，；：！？）】」』"
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+\-]*")
_NOT_PROSE = re.compile(r"`[^`]*`|https?://\S+|#\d+", re.I)
# Han characters' share of the answer's words (a Latin word or a Han character each count one):
# a Chinese answer names English code terms ("PD disaggregation 下 prefix caching 失效" is 3 of 7),
# an English one may quote a Chinese title; below / above these it is the other language.
MIN_HAN_SHARE_ZH = 0.2
MAX_HAN_SHARE_EN = 0.6
LANGUAGE_NAMES = {"zh": "Chinese", "en": "English"}


def source_text(entry: Entry) -> str:
    """Everything the model was shown about an entry, as one text to look facts up in."""
    parts = [
        entry.title,
        entry.note,
        entry.github_title or "",
        entry.author or "",
        entry.url or "",
        str(entry.pr or ""),
        entry.date.isoformat() if entry.date else "",
        " ".join(entry.tags),
        " ".join(entry.people),
        " ".join(entry.identifiers),
        " ".join(f"#{r.number} {r.url}" for r in [*entry.refs, *entry.related]),
    ]
    return "\n".join(parts)


def _numbers_in(text: str) -> set[str]:
    return {_canonical(n) for n in _NUMBER.findall(text)}


def unit_kind(unit: str) -> str:
    """The kind of a unit as written ("毫秒" and "ms" are one); a unit of no listed kind is itself."""
    unit = unit.strip()
    return next((kind for pattern, kind in _UNIT_KINDS if pattern.match(unit)), unit.casefold())


class SourceNumbers:
    """The numbers of the entries: with the kinds of unit each is given in, and those given bare."""

    def __init__(self, source: str) -> None:
        self.with_units: dict[str, set[str]] = {}
        for match in _NUMBER_WITH_UNIT.finditer(source):
            self.with_units.setdefault(_canonical(match.group(1)), set()).add(unit_kind(match.group(2)))
        self.bare = _numbers_in(_NUMBER_WITH_UNIT.sub(" ", source))

    def backs(self, value: str, unit: str) -> bool:
        """Whether the entries give `value` in this unit's kind, or give it without a unit."""
        number = _canonical(value)
        return number in self.bare or unit_kind(unit) in self.with_units.get(number, set())


def _canonical(number: str) -> str:
    return number.rstrip("0").rstrip(".") if "." in number else number


def known_numbers(entries: Iterable[Entry]) -> set[int]:
    """PR/issue numbers an answer about these entries may name."""
    found: set[int] = set()
    for entry in entries:
        if entry.pr:
            found.add(entry.pr)
        found.update(r.number for r in [*entry.refs, *entry.related])
        found.update(int(m) for m in _NUMBER_REF.findall(entry.note))
    return found


def ungrounded(answer: str, entries: Sequence[Entry]) -> list[str]:
    """The facts of `answer` that none of `entries` holds, each as it appears in the answer."""
    source = "\n".join(source_text(e) for e in entries)
    folded = source.casefold()
    numbers = known_numbers(entries)
    source_numbers = SourceNumbers(source)
    checks: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str], Callable[[re.Match[str]], bool]]] = [
        (_NUMBER_REF, lambda m: f"#{m.group(1)}", lambda m: int(m.group(1)) in numbers),
        (_BACKTICKED, lambda m: f"`{m.group(1)}`", lambda m: m.group(1).strip().casefold() in folded),
        (
            _NUMBER_WITH_UNIT,
            lambda m: m.group(0).strip(),
            lambda m: source_numbers.backs(m.group(1), m.group(2)),
        ),
        (_HANDLE, lambda m: f"@{m.group(1)}", lambda m: m.group(1).casefold() in folded),
        (_URL, _url, lambda m: _url(m).casefold() in folded),
        (DOMAIN_LIKE, lambda m: m.group(0), lambda m: m.group(0).casefold() in folded),
    ]
    problems = [show(m) for pattern, show, known in checks for m in pattern.finditer(answer) if not known(m)]
    return list(dict.fromkeys(problems))


def _url(match: re.Match[str]) -> str:
    return match.group(0).rstrip(_URL_TAIL)


def han_share(text: str) -> float | None:
    """Han characters among the answer's words (code, links and PR numbers aside); None: no words."""
    prose = _NOT_PROSE.sub(" ", text)
    han = len(HAN_CHAR.findall(prose))
    latin = len(_LATIN_WORD.findall(HAN_CHAR.sub(" ", prose)))
    return han / (han + latin) if han + latin else None


def wrong_language(answer: str, lang: str) -> str | None:
    """Why the answer is not in `lang` ("zh"/"en"), or None when it is (or has no words to tell)."""
    share = han_share(answer)
    if share is None:
        return None
    if lang == "zh" and share < MIN_HAN_SHARE_ZH:
        return f"answered in English, asked in {LANGUAGE_NAMES[lang]}"
    if lang == "en" and share > MAX_HAN_SHARE_EN:
        return f"answered in Chinese, asked in {LANGUAGE_NAMES[lang]}"
    return None


def review(answer: str, entries: Sequence[Entry], lang: str) -> tuple[str, list[str]]:
    """Can this model answer be shown? ("", []) when yes; else ("language", [why]) or
    ("ungrounded", [the facts the entries don't hold]). An answer without a word (blank, "…", an
    emoji) is no answer."""
    if han_share(answer) is None:
        return "empty", ["no words in the answer"]
    language = wrong_language(answer, lang)
    if language:
        return "language", [language]
    missing = ungrounded(answer, entries)
    return ("ungrounded", missing) if missing else ("", [])
