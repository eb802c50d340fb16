"""Work done once per answer: pure functions of a text asked the same thing several times while
one follow-up is answered, remembered for that answer only.

The note analysis, the answer's candidates and its scorer each cut the same note into sentences,
read the same sentences for a reading cue and expand the same subject through the glossary: on
the first answer about an entry, most of those calls repeated one made a moment before
(bench/scale.py's follow-up answer row). Nothing is kept once the answer is given, so no answer
is faster for an entry or question another answer saw; outside an answer nothing is remembered.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

_T = TypeVar("_T")
_MEMO: ContextVar[dict[tuple[str, Hashable], object] | None] = ContextVar("once_per_answer", default=None)


@contextmanager
def one_answer() -> Iterator[None]:
    """Remember `once` results until the block ends (an answer inside another shares its memo);
    per thread, as each thread answers on its own."""
    token = _MEMO.set({}) if _MEMO.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _MEMO.reset(token)


def once(kind: str, key: Hashable, compute: Callable[[], _T]) -> _T:
    """`compute()`, remembered under (kind, key) within the current answer; computed each time
    outside one. `compute` must be a pure function of the key, and its value never changed by
    whoever gets it."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    if (kind, key) in memo:
        return memo[kind, key]  # type: ignore[return-value]
    value = memo[kind, key] = compute()
    return value
