"""The index's inverted tables: per key, the entries holding it and the level of the heaviest
field each holds it in, as numpy arrays sliced per key at query time.

Kept compact for bench/scale.py "peak RSS 10k/100k" (10k: 133 MiB; one sort of unpacked arrays 160): raw
postings are packed into 64-bit values as the build goes and sorted, deduped and split in
place at its end (see `Postings`), so no step holds a second copy of the table.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain, repeat
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from chatbot.search.fields import WEIGHT_OF_LEVEL

K = TypeVar("K", str, tuple[str, str])


class Postings(Generic[K]):
    """Per key, the entries holding it with the weight of the heaviest field it occurs in.

    Built as flat arrays: the key numbers of each field as its pieces of text give them
    (repeats included), and per field its entry, level and key count (no object, no dict per
    entry or posting). Every `chunk` raw postings they are packed (`_pack`) into 64-bit
    (key, entry, 15 - level) values and the raw arrays start over. `finish` sorts the packed
    values in place, keeps each (key, entry) once at its heaviest level and splits them into
    entries and levels (5 bytes a posting kept), sliced per key at query time: no step holds
    a second copy of the table."""

    chunk = 1 << 16  # raw postings packed at a time: big enough that numpy's calls are few

    def __init__(self) -> None:
        self.weights = np.array(WEIGHT_OF_LEVEL, dtype=np.float64)
        self._ids: dict[K, int] = {}  # interned keys: a key's number is the count of keys before it
        self._keys = array("I")
        self._counts = array("I")
        self._entries = array("I")
        self._levels = array("B")
        self._packed = array("Q")  # packed postings of the entries so far, each (key, entry) once
        self._starts = np.zeros(1, dtype=np.intp)
        self._found = np.zeros(0, dtype=np.uint32)
        self._found_levels = np.zeros(0, dtype=np.uint8)

    def numbers(self, keys: frozenset[K]) -> array[int]:
        """The keys' numbers, a new key numbered by the count of keys before it: one C-level
        `setdefault` per key, its default the dict's size at that moment (`map` takes each
        size just before the call that may add the key), not a set difference, an update and
        a lookup."""
        ids = self._ids
        return array("I", map(ids.setdefault, keys, map(len, repeat(ids))))

    def number(self, key: K) -> array[int]:
        """One key's number (a PR number field holds one key: no set made for it)."""
        ids = self._ids
        number = ids.get(key)
        if number is None:
            number = ids[key] = len(ids)
        return array("I", (number,))

    def add_fields(self, index: int, levels: Sequence[int], fields: Sequence[Sequence[array[int]]]) -> None:
        """Post the fields of entry `index`, each the key numbers of its pieces at its level, at
        once: one copy of all their buffers, a few C-level extends, no Python call per field
        beyond counting its keys. Fields come heaviest first, so an entry's first posting of a
        key has the right level."""
        self._keys.frombytes(b"".join(chain.from_iterable(fields)))
        self._counts.extend([sum(map(len, pieces)) for pieces in fields])
        self._entries.extend(repeat(index, len(levels)))
        self._levels.extend(levels)
        if len(self._keys) >= self.chunk:
            self._pack()

    def _pack(self) -> None:
        """Pack the raw postings since the last pack into 64-bit (key, entry, 15 - level)
        values (sorting them here too, to drop repeats early, cost 3% of a build: a second sort
        of every posting for 15% fewer of them)."""
        if not self._entries:
            return
        if self._entries[-1] >= 1 << 28:
            raise ValueError("an index holds fewer than 2**28 entries")
        counts = np.frombuffer(self._counts, dtype=np.uint32)
        per_field = np.frombuffer(self._entries, dtype=np.uint32) << np.uint32(4)
        per_field |= np.uint32(15) - np.frombuffer(self._levels, dtype=np.uint8)
        packed = np.frombuffer(self._keys, dtype=np.uint32).astype(np.uint64)
        packed <<= np.uint64(32)
        packed |= np.repeat(per_field, counts)  # 4 bytes a posting, widened in the ufunc's buffer
        del per_field, counts
        self._keys, self._counts, self._entries, self._levels = array("I"), array("I"), array("I"), array("B")
        self._packed.frombytes(packed.tobytes())

    def finish(self) -> None:
        """Sort the packed postings in place (by key, entries ascending, the heaviest level of
        a (key, entry) first), keep the first of each (key, entry) and split them into the
        entries and levels kept, a slice at a time: each posting's entry and level (its low 32
        bits) are written over the front of the packed buffer itself, which then shrinks to
        them before the levels are taken out. No second table-sized array is ever held (at
        100k entries the table is ~100 MB packed), nor the levels beside the full buffer."""
        self._pack()
        buffer, self._packed = self._packed, array("Q")
        packed = np.frombuffer(buffer, dtype=np.uint64)
        packed.sort()
        packed = packed[: self._dedupe(packed)]
        # Key k's postings start at the first value of at least k << 32.
        bounds = np.arange(len(self._ids) + 1, dtype=np.uint64) << np.uint64(32)
        self._starts = np.searchsorted(packed, bounds).astype(np.intp, copy=False)
        del bounds
        found = np.frombuffer(buffer, dtype=np.uint32)  # posting i's (entry, level) goes to its 4i..4i+3
        step, part, count = self.chunk, packed[:0], len(packed)
        for lo in range(0, count, step):
            # Values lo.. are read before the slice writes bytes 4lo..4(lo+step), values below
            # lo: a step never longer than lo (the first slice is computed before it is written).
            part = packed[lo : lo + step]
            found[lo : lo + len(part)] = part & np.uint64(0xFFFFFFFF)  # entry << 4 | 15 - level
        del packed, found, part
        del buffer[(count + 1) // 2 :]  # the entries' half stays; realloc gives the rest back
        self._found = np.frombuffer(buffer, dtype=np.uint32, count=count)
        self._found_levels = np.empty(count, dtype=np.uint8)
        for lo in range(0, count, step):
            low = self._found[lo : lo + step]
            self._found_levels[lo : lo + step] = np.uint32(15) - (low & np.uint32(0xF))
            low >>= np.uint32(4)

    def _dedupe(self, packed: NDArray[np.uint64]) -> int:
        """Keep the first of each (key, entry) of the sorted values (its heaviest level) at the
        front, in place, a slice at a time; return how many."""
        kept, step = 0, self.chunk
        for lo in range(0, len(packed), step):
            part = packed[lo : lo + step + 1]  # the next slice's first value: is it new?
            new = (part[1:] ^ part[:-1]) > np.uint64(15)
            values = part[1:][new]
            if lo == 0:
                values = np.concatenate([part[:1], values])
            packed[kept : kept + len(values)] = values
            kept += len(values)
        return kept

    def number_of(self, key: K) -> int | None:
        """The key's number, None for a key never posted."""
        return self._ids.get(key)

    def get(self, key: K) -> tuple[NDArray[np.uint32], NDArray[np.float64]]:
        """The entries holding `key` (ascending) and each one's field weight."""
        number = self.number_of(key)
        if number is None:
            return self._found[:0], self.weights[:0]
        lo, hi = self._starts[number], self._starts[number + 1]
        return self._found[lo:hi], self.weights[self._found_levels[lo:hi]]

    def raise_to(self, vector: NDArray[np.float64], key: K, factor: float = 1.0) -> None:
        """Raise each entry's score in `vector` to its weight for `key` times `factor` (an
        entry is listed once per key, so the indices are distinct)."""
        found, weights = self.get(key)
        vector[found] = np.maximum(vector[found], weights * factor)

    def __contains__(self, key: K) -> bool:
        return key in self._ids
