"""How much of a query an entry must share to be a real match, not padding or a neighbour's answer.

A query is a list of units (search/index.py): concepts, identifiers, words, Chinese runs. Some
are asked (`asked`), some are generic words that only refine (`generic`), some are words of a
neighbouring domain (`near`: `state`, `driver`, `pod`, or a concept named only by such a word,
`kubernetes` for deployment): asked, but no vLLM entry is the answer to them. Units standing for
the same words of the query (two concepts of `preemption`) are one thing asked, counted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

# A query asking fewer things than this is short enough that one near-domain word only refines
# it (`sleep mode server`); from it on, near-domain words may outweigh what vLLM entries share.
MINORITY_FROM = 3
# In a query this short that uses a near-domain word, a word neither the library nor vLLM's
# vocabulary (terms, descriptions) knows is the neighbouring stack's too (`ingress` of `k8s
# ingress timeout`); in a longer one it is more likely a describer's own word (a paraphrase).
SHORT = 4


class Unit(Protocol):
    """What this module reads of a query unit."""

    @property
    def generic(self) -> bool: ...
    @property
    def near(self) -> bool: ...
    @property
    def asked(self) -> bool: ...
    @property
    def plain(self) -> bool: ...
    @property
    def unknown(self) -> bool: ...
    @property
    def keys(self) -> frozenset[str]: ...
    @property
    def scores(self) -> NDArray[np.float64]: ...


def asked_things(units: Sequence[Unit]) -> tuple[list[list[Unit]], int]:
    """The things the query asks of vLLM (units grouped by the words they stand for) and how
    many things it asks of a neighbouring domain (with its unknown words, in a `SHORT` query)."""
    things: dict[frozenset[str] | int, list[Unit]] = {}
    near: set[frozenset[str] | int] = set()
    for n, unit in enumerate(units):
        if not unit.asked:
            continue
        if unit.near:
            near.add(unit.keys or n)
        elif not unit.generic:
            things.setdefault(unit.keys or n, []).append(unit)
    if near and len(things) + len(near) <= SHORT:
        _unknown_are_near(things, near)
    return list(things.values()), len(near)


def _unknown_are_near(
    things: dict[frozenset[str] | int, list[Unit]], near: set[frozenset[str] | int]
) -> None:
    """Move what only unknown words ask from `things` to `near`."""
    for key, same in list(things.items()):
        if all(u.unknown for u in same):
            near.add(key)
            del things[key]


def shared_counts(things: list[list[Unit]], size: int) -> NDArray[np.intp]:
    """Per entry, how many of the things asked it matched (by any unit standing for one)."""
    shared = np.zeros(size, dtype=np.intp)
    for same in things:
        matched = same[0].scores > 0.0
        for unit in same[1:]:
            matched |= unit.scores > 0.0
        shared += matched
    return shared


def not_minority(units: Sequence[Unit], size: int) -> NDArray[np.bool_]:
    """Entries whose share of a query using words of neighbouring domains outweighs those words
    and is at least a third of what it asks.

    A question about a neighbouring stack may name a vLLM concept or two among such words
    (`prometheus node exporter disk alerts`, `kubernetes pod priority preemption`): what vLLM
    entries hold of it is no more than what is foreign to them, and the honest answer is no
    match. A query without such words (a paraphrase in plain words) is left to the other rules.
    """
    things, near = asked_things(units)
    wanted = len(things) + near
    if not near or wanted < MINORITY_FROM:
        return np.ones(size, dtype=np.bool_)
    shared = shared_counts(things, size)
    if wanted == MINORITY_FROM:  # a tie is no minority in three words (`scheduler pod overhead`)
        return shared >= near
    return (shared * 3 >= wanted) & (shared > near)


def not_padding(units: Sequence[Unit], size: int) -> NDArray[np.bool_]:
    """Entries that share more with the query than a minority of its plain words.

    `image preprocessing cache` is not any entry that says `cache`, nor `v1 engine` one that
    says `engine`: an entry that no concept, identifier, number or Chinese run of the query
    matched needs more than half of what the query asks (generic words aside; words of a
    neighbouring domain count: `install CUDA driver` asks three things), or the query asks one
    thing only.
    """
    things, near = asked_things(units)
    wanted = len(things) + near
    keep = np.ones(size, dtype=np.bool_)
    if wanted < 2:
        return keep
    words_only = np.ones(size, dtype=np.bool_)
    for same in things:
        for unit in same:
            if not unit.plain:
                words_only &= ~(unit.scores > 0.0)
    return keep & ~(words_only & (shared_counts(things, size) * 2 <= wanted))


# Per entry, how many of an identifier's concept-named parts it holds; and how many there are.
NamedParts = tuple[NDArray[np.intp], int]


def named_in(concept_units: Sequence[Unit], keys: set[str], size: int) -> NamedParts:
    """The parts of an identifier (its real parts' `keys`) that concepts named (`stream` of
    `DecodeStream`, `mm` of `mm_hash`): each counts once, held by an entry any concept of it
    matched. The rest of the identifier must match with them: `decode` alone is no `DecodeStream`."""
    held = np.zeros(size, dtype=np.intp)
    seen: set[frozenset[str]] = set()
    for unit in concept_units:
        if unit.asked and unit.keys & keys and unit.keys not in seen:
            seen.add(unit.keys)
            matched = np.zeros(size, dtype=np.bool_)
            for same in concept_units:
                if same.keys == unit.keys:
                    matched |= same.scores > 0.0
            held += matched
    return held, len(seen)


def compound_held(counts: NDArray[np.intp], parts: int, named_parts: NamedParts | None) -> NDArray[np.bool_]:
    """Entries holding enough of an identifier: `counts` of its `parts` left after the concepts
    (`named_parts`). At least half of all its parts, and never one part alone of a compound,
    also where a concept names another part and the entry lacks it: `decode` is not
    `DecodeStream`, a note's `page size` is not `vocab_size`; `hash` in an entry on multimodal
    inputs is `mm_hash`."""
    held, named = named_parts if named_parts is not None else (counts, 0)
    total = counts + held if named else counts
    size = parts + named
    result: NDArray[np.bool_] = (counts > 0) & (total >= max(size / 2, min(size, 2)))
    return result
