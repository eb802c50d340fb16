"""What a question asks for by its shape — hardware, a version, a number, a flag, a reference, a
person — and whether a clause holds one (`data/answer_slots.yaml`).

A typed question is answered only by a clause holding what it asks for, and honestly denied when
no clause or metadata fact does: "在哪张卡上跑的" is not answered by the note's best sentence about
the benchmark when the note names no card. The kind of question still ranks the holders; the
slot says which may answer, one rule for every phrasing of the type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from chatbot.answers.candidates import Candidate
from chatbot.digest import Entry, full_names
from chatbot.yamlfast import load_yaml

REF_NUMBER_RE = re.compile(r"\d{2,7}")


@dataclass(frozen=True)
class Slot:
    """One type of answer: how a question asks for it, how a clause holds it."""

    name: str
    asks: re.Pattern[str]
    holds: re.Pattern[str]


@lru_cache(maxsize=1)
def _slots_file() -> dict[str, Any]:
    """`data/answer_slots.yaml`, read once: its slots and its measures."""
    text = resources.files("chatbot.answers").joinpath("data/answer_slots.yaml").read_text(encoding="utf-8")
    return dict(load_yaml(text))


@lru_cache(maxsize=1)
def slots() -> tuple[Slot, ...]:
    """The data file, compiled once; a malformed pattern fails loudly with the slot's name."""
    out = []
    for name, row in _slots_file()["slots"].items():
        try:
            out.append(Slot(str(name), re.compile(str(row["asks"])), re.compile(str(row["holds"]))))
        except (re.error, KeyError) as exc:
            raise ValueError(f"answer_slots.yaml: slot {name!r}: {exc}") from exc
    return tuple(out)


@lru_cache(maxsize=1)
def measures() -> tuple[Slot, ...]:
    """What a how-much question may measure (throughput, latency, memory…), each as a slot."""
    rows = _slots_file().get("measures") or {}
    return tuple(
        Slot(str(n), re.compile(str(r["asks"])), re.compile(str(r["holds"]))) for n, r in rows.items()
    )


def asked_measures(question: str) -> tuple[Slot, ...]:
    """The measures a how-much question names ("吞吐提升多少" → throughput)."""
    return tuple(m for m in measures() if m.asks.search(question))


def _slot(name: str) -> Slot:
    return _by_name()[name]


@lru_cache(maxsize=1)
def _by_name() -> dict[str, Slot]:
    return {s.name: s for s in slots()}


@lru_cache(maxsize=1024)
def asked_slots(question: str) -> tuple[str, ...]:
    """The slots a question asks for ("在啥硬件上测的" → hardware), in file order."""
    return tuple(s.name for s in slots() if s.asks.search(question))


def named_slots(question: str) -> tuple[str, ...]:
    """The slots whose value the question itself names ("does this work on amd" → hardware)."""
    return tuple(s.name for s in slots() if s.name in NAMED and s.holds.search(question))


NAMED = frozenset({"hardware"})  # a value named in a yes/no question another value may answer


def asking_words(slot_names: Iterable[str], question: str) -> str:
    """The words of the question that ask for the slots, folded ("要改启动参数吗" → "启动参数")."""
    return " ".join(m.group(0).casefold() for n in slot_names for m in _slot(n).asks.finditer(question))


def without_asks(slot_names: Iterable[str], text: str) -> str:
    """The text without the words that ask for the slots ("提速多少" → "")."""
    for name in slot_names:
        text = _slot(name).asks.sub(" ", text)
    return text


def slot_matches(slot: str, text: str) -> list[re.Match[str]]:
    """Where a text names values of a slot."""
    return list(_slot(slot).holds.finditer(text))


def slot_values(slot: str, text: str) -> frozenset[str]:
    """The values of a slot a text names, folded ("TPU v4" → {"tpu"})."""
    return frozenset(m.group(0).casefold() for m in _slot(slot).holds.finditer(text))


def holds(slot: str, candidate: Candidate, entry: Entry, *, besides_author: bool = False) -> bool:
    """Whether a candidate holds a value of the slot: a metadata fact only a person (its author,
    unless `besides_author`: "who reviewed it") or a reference (the related PRs); a reference
    never the entry's own PR; a number never a reference's."""
    if candidate.fact:
        return (slot == "person" and "author" in candidate.parts and not besides_author) or (
            slot == "ref" and "refs" in candidate.parts
        )
    if slot == "person":
        return bool(_slot(slot).holds.search(candidate.text)) or _names_person(
            candidate.text, entry, besides_author
        )
    if slot == "ref":
        return any(_other_pr(m.group(0), entry) for m in _slot(slot).holds.finditer(candidate.text))
    return bool(_slot(slot).holds.search(_measured(slot, candidate.text)))


def _measured(slot: str, text: str) -> str:
    """The text a slot looks in: for a number, without references and hardware ("issue 15901"
    and "8×H200" are not how much)."""
    if slot != "quantity":
        return text
    return _slot("hardware").holds.sub(" ", _slot("ref").holds.sub(" ", text))


SEPARATOR_RE = re.compile(r"[,;，；。(（]\s*|\s+(?:and|with|at|on|for)\s+")


def holding_span(slot_names: Iterable[str], text: str) -> str:
    """The stretch of a sentence around the first value of the slots, between the separators
    before and after it ("…, a 1.62× speedup at 10 concurrency (1.71× single) on one RTX 4090"
    → "on one RTX 4090"); empty when the text holds none (a person or reference as written)."""
    found = [m for n in slot_names if n not in ("person", "ref") for m in [_slot(n).holds.search(text)] if m]
    if not found:
        return ""
    first = min(found, key=lambda m: m.start())
    before = [m.end() for m in SEPARATOR_RE.finditer(text, 0, first.start())]
    after = SEPARATOR_RE.search(text, first.end())
    return text[before[-1] if before else 0 : after.start() if after else len(text)].strip()


def holding_part(slot_names: Iterable[str], text: str, entry: Entry) -> bool:
    """Whether a piece of a clause (its short form) still holds one of the slots."""
    return any(holds(s, Candidate(("note",), text, "note"), entry) for s in slot_names)


def _other_pr(ref: str, entry: Entry) -> bool:
    number = REF_NUMBER_RE.findall(ref)
    return bool(number) and number[-1] != str(entry.pr or "")


def _names_person(text: str, entry: Entry, besides_author: bool) -> bool:
    """Whether the text names one of the entry's people (or its author), by handle or full name."""
    folded = text.casefold()
    people = {*entry.people, *([entry.author] if entry.author else [])}
    if besides_author:
        people.discard(entry.author or "")
    return any(
        handle.casefold() in folded or any(name in text for name in full_names(handle)) for handle in people
    )
