"""How each entry writes the glossary concepts it names, kept for display.

A hit shows how the entry wrote the concept asked for (`torch.compile`, `编译`): per entry, the
(concept, glossary term, as written) of its fields, heaviest field first. The index keeps one
flat tuple per entry, of the writings its fields' analyses made (no copy of them): per-entry
tuples of (weight, writings) pairs per field cost a third more. Numbering the distinct writings
(a few thousand in a library) would keep less still, but hashing every writing of every note
cost 4% of a build.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

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
