"""Is a model's answer grounded in the entries it was given? A check on the facts a reader would act on.

A model can translate and summarise the curator's note, but it must not bring facts of its own: every
PR/issue number, identifier in backticks, number with a unit and person handle in its answer has to
occur in the entries (note, title, metadata) it was shown. Anything else is reported by name, and the
caller falls back to the extractive answer. Numbers are compared by value, not with their unit, so an
answer may translate "8 行" into "8 lines".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chatbot.digest import Entry

# "#53529", "PR 53529", "PR #53529", "pull/53529", "issue 6789", "issues/6789", "[#53529]".
_NUMBER_REF = re.compile(
    r"(?:(?<![\w&])#|\bPRs?\s*#?\s*|\bpull/|\bissues?[/\s]\s*#?\s*|\bissue\s*#\s*)(\d{2,7})\b", re.I
)
_BACKTICKED = re.compile(r"`([^`\n]{1,120})`")
_UNITS = (
    r"%|ms|µs|us|ns|s\b|sec(?:onds?)?\b|x\b|×|倍|行|个?文件|files?\b|lines?\b|tokens?\b|tok/s|"
    r"[KMGT]i?B\b|GPUs?\b|卡|秒|毫秒|分钟|minutes?\b|hours?\b|小时|次|个|层|layers?\b|MB/s|GB/s"
)
_NUMBER_WITH_UNIT = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:{_UNITS})", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])|\d+(?:\.\d+)?")
_HANDLE = re.compile(r"(?<![\w<])@([A-Za-z0-9][\w.\-]{0,38})")


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
    source_numbers = _numbers_in(source)
    problems: list[str] = []
    for match in _NUMBER_REF.finditer(answer):
        if int(match.group(1)) not in numbers:
            problems.append(f"#{match.group(1)}")
    for match in _BACKTICKED.finditer(answer):
        if match.group(1).strip().casefold() not in folded:
            problems.append(f"`{match.group(1)}`")
    for match in _NUMBER_WITH_UNIT.finditer(answer):
        if _canonical(match.group(1)) not in source_numbers:
            problems.append(match.group(0).strip())
    for match in _HANDLE.finditer(answer):
        if match.group(1).casefold() not in folded:
            problems.append(f"@{match.group(1)}")
    return list(dict.fromkeys(problems))
