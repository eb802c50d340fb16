"""Which characters are Chinese (Han): the one definition of the range.

CJK Unified Ideographs Extension A (U+3400–4DBF), the Unified Ideographs (U+4E00–9FFF) and the
Compatibility Ideographs (U+F900–FAFF). The Yijing hexagram symbols between Extension A and
the Unified block (U+4DC0–4DFF) are not characters anyone writes in a sentence, so they are
left out (a single `\\u3400-\\u9fff` would take them in).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

HAN_RANGES: tuple[tuple[int, int], ...] = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))


def han_class(excluding: Iterable[str] = ()) -> str:
    """The Han ranges as one regex character class, without the characters `excluding` (the
    `re` module has no set subtraction, so the ranges are cut around them)."""
    cuts = sorted({ord(c) for c in excluding})
    out: list[str] = []
    for lo, hi in HAN_RANGES:
        for cut in [c for c in cuts if lo <= c <= hi]:
            if lo < cut:
                out.append(f"\\u{lo:04x}-\\u{cut - 1:04x}")
            lo = cut + 1
        if lo <= hi:
            out.append(f"\\u{lo:04x}-\\u{hi:04x}")
    return "[" + "".join(out) + "]"


HAN_CHAR = re.compile(han_class())
HAN_RUN = re.compile(han_class() + "+")


def has_han(text: str) -> bool:
    """Whether a text holds any Chinese character (the asker's language, the answer's words)."""
    return HAN_CHAR.search(text) is not None
