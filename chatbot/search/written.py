"""How each entry writes the glossary concepts it names, kept for display.

A hit shows how the entry wrote the concept asked for (`torch.compile`, `编译`): per entry, the
(concept, glossary term, as written) of its fields, heaviest field first. Notes write the same
few thousand ways again and again, so the index keeps each distinct triple once and, per
entry, numbers into that list (4 bytes a writing): per-entry tuples of tuples were the biggest
thing the index kept (9.7 MiB at 10k entries).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

Writing = tuple[str, str, str]  # (concept, glossary term, the text as the field wrote it)


@dataclass(eq=True)
class Writings:
    """Per entry (in the order added), its writings in field order."""

    triples: list[Writing] = field(default_factory=list)  # the distinct writings, first seen first
    _flat: array[int] = field(default_factory=lambda: array("I"))  # every entry's, one after another
    _starts: array[int] = field(default_factory=lambda: array("I", [0]))  # entry i's: _starts[i:i+2]
    # Writing → its number in `triples`; only a build adds, so `finish` drops it.
    _numbers: dict[Writing, int] = field(default_factory=dict, compare=False, repr=False)

    def add(self, fields: Iterable[Iterable[Writing]]) -> None:
        """The next entry's writings, field by field, in order (display keeps the first of
        repeats). One hash lookup per writing at C level while all are known (most entries:
        a library writes a few thousand ways), though a note names dozens."""
        flat, numbers = self._flat, self._numbers
        done = len(flat)
        try:
            flat.extend(map(numbers.__getitem__, chain.from_iterable(fields)))
        except KeyError:  # some are new: number them, first seen first
            del flat[done:]
            writings = list(chain.from_iterable(fields))
            new = [w for w in dict.fromkeys(writings) if w not in numbers]
            numbers.update(zip(new, range(len(self.triples), len(self.triples) + len(new)), strict=True))
            self.triples.extend(new)
            flat.extend(map(numbers.__getitem__, writings))
        self._starts.append(len(flat))

    def finish(self) -> None:
        """Drop what only adding needs."""
        self._numbers = {}

    def of(self, index: int) -> list[Writing]:
        """Entry `index`'s writings, heaviest field first."""
        triples = self.triples
        return [triples[n] for n in self._flat[self._starts[index] : self._starts[index + 1]]]

    def __len__(self) -> int:
        return len(self._starts) - 1
