"""How a hit shows what matched: the terms as the entry wrote them, a few, without repeats.

A hit shows how the entry wrote the concept asked for (`torch.compile`, `编译`): per entry, the
(concept, glossary term, as written) of its fields, heaviest field first (`Writings`). The index
keeps one flat tuple per entry, of the writings its fields' analyses made (no copy of them):
per-entry tuples of (weight, writings) pairs per field cost a third more. Numbering the distinct
writings (a few thousand in a library) would keep less still, but hashing every writing of every
note cost 4% of a build.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain

from chatbot.search.tokens import han_text

Writing = tuple[str, str, str]  # (concept, glossary term, the text as the field wrote it)


@dataclass(eq=True)
class Writings:
    """Per entry (in the order added), its writings in field order."""

    _per_entry: list[tuple[Writing, ...]] = field(default_factory=list)

    def add(self, fields: Iterable[Iterable[Writing]]) -> None:
        """The next entry's writings, field by field (display keeps the first of repeats)."""
        self._per_entry.append(tuple(chain.from_iterable(fields)))

    def of(self, index: int) -> tuple[Writing, ...]:
        """Entry `index`'s writings, heaviest field first."""
        return self._per_entry[index]

    def __len__(self) -> int:
        return len(self._per_entry)


def dedupe_surfaces(surfaces: Iterable[str]) -> list[str]:
    """Display terms in order, without one contained in an earlier one or containing it."""
    kept: list[str] = []
    kept_keys: list[str] = []
    seen: set[str] = set()
    for s in surfaces:
        if s in seen:  # an entry writes a term many times; its first copy decided already
            continue
        seen.add(s)
        folded = _display_key(s)
        # A plain loop, not `any` over a generator: this runs for every term of every hit.
        for key in kept_keys:
            if _contains(key, folded) or _contains(folded, key):
                break
        else:
            kept.append(s)
            kept_keys.append(folded)
    return kept


@lru_cache(maxsize=1 << 14)
def _display_key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _contains(longer: str, shorter: str) -> bool:
    """`minicpm` in `minicpmo`, `编译` in `可编译`; but a short Latin word (`ci`) is not inside any word."""
    if shorter == longer:
        return True
    return shorter in longer and (len(shorter) >= 4 or is_han(shorter))


@lru_cache(maxsize=1 << 14)
def is_han(text: str) -> bool:
    """Cached: display terms recur, and every hit asks this of each of them, several times."""
    return bool(han_text(text))


def display(surfaces: list[str], query_terms: list[str]) -> list[str]:
    """Up to two display terms: the one closest to what was asked, and one in the other script."""
    if not surfaces:
        return []
    asked = [t.casefold() for t in query_terms]
    first = next((s for s in surfaces if any(a in s.casefold() for a in asked)), surfaces[0])
    other = next((s for s in surfaces if is_han(s) != is_han(first)), None)
    return [first, other] if other else [first]
