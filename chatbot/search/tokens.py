"""Text to search tokens, the same way for entries, glossary terms and queries.

Matching only works when every side is cut the same way, so this is the one place that
decides what a token is:

- Latin words: NFKC, casefolded, lightly stemmed (`caching` and `cache` both give `cach`).
- Code identifiers (`asyncio.gather`, `prompt_is_token_ids`, `FlashInfer`, `Qwen3-VL`): the
  whole identifier (`ident`), a joined form without separators (`joined`: `qwen3vl`), and its
  stemmed parts (`part`), so `gather`, `qwen3 vl` and `qwen3vl` all find `Qwen3-VL`'s entry.
- `#12345`, bare numbers of 4+ digits and GitHub pull/issue URLs: `ref` tokens `#12345`.
- Chinese: runs of Han characters cut at particles (的, 了, 吗…) into character bigrams
  (`cjk`; a one-character run stays a unigram). All tokens of one run share a `group`.

The *atomic stream* (words, parts, refs, bigrams in order) is what multi-word glossary terms
are matched against; `ident`/`joined` tokens are extra whole-word keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal, NamedTuple

from chatbot.text import HAN_RUN, han_bigrams, han_class, nfkc
from chatbot.text import stem as stem  # the one stemmer (search and answers); re-exported

Kind = Literal["word", "ident", "joined", "part", "ref", "cjk"]

ATOMIC_KINDS = frozenset({"word", "part", "ref", "cjk"})

_URL_REF = re.compile(r"https?://\S*?/(?:pull|issues)/(\d+)\S*", re.IGNORECASE)
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
# A Latin run: letters/digits joined by identifier punctuation (., _, /, -, ::) but never
# ending in it; a leading `_` or `#` is kept so `_take_removed_event` and `#123` stay whole.
_LATIN = re.compile(r"[#@]?_*[0-9A-Za-z]+(?:(?:::|[._/\-])+[0-9A-Za-z]+)*_*")
_HAN = HAN_RUN
_SCAN = re.compile(f"{_LATIN.pattern}|{_HAN.pattern}")
_SEPARATORS = re.compile(r"(?:::|[._/\-])+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# Particles cut a Chinese run: a bigram across 的 (`存的`) means nothing.
_CJK_BREAKS = re.compile("[的了吗呢吧啊呀和与及或把被是在]+")


class Token(NamedTuple):
    """One search token: `key` is what is matched, `surface` what the text said (for display)."""

    key: str
    surface: str
    kind: Kind
    group: int


def _latin_tokens(raw: str, group: int) -> list[Token]:
    return [Token(key, surface, kind, group) for key, surface, kind in _latin_cut(raw)]


@lru_cache(maxsize=1 << 14)
def _latin_cut(raw: str) -> tuple[tuple[str, str, Kind], ...]:
    """Cached per distinct Latin run: words and identifiers repeat across a library."""
    if _plain_word(raw):  # most runs: no identifier parts, no token made
        return _word_cut(raw)
    return tuple((t.key, t.surface, t.kind) for t in _latin_tokens_uncached(raw, 0))


def _latin_tokens_uncached(raw: str, group: int) -> list[Token]:
    if raw[0] == "@":
        raw = raw[1:]
    if raw.startswith("#") and raw[1:].isdigit():
        return [Token(f"#{int(raw[1:])}", raw, "ref", group)]
    raw = raw.lstrip("#")
    surface = raw.strip("_")
    if not surface:
        return []
    if surface.isdigit():
        return [_number_token(surface, group)]
    parts = _identifier_parts(surface)
    if len(parts) == 1:
        return _word_tokens(surface, group)
    shown = raw if raw != surface and any(c.isalpha() for c in surface) else surface
    return _identifier_tokens(surface.casefold(), shown, parts, group)


def _plain_word(raw: str) -> bool:
    """Letters only, without a camel hump (a lower-case letter before a capital): one part."""
    return raw.isalpha() and (len(raw) < 5 or raw[1:].islower() or raw.isupper())


def _word_tokens(surface: str, group: int) -> list[Token]:
    """A plain word, stemmed; its unstemmed form is a whole-word key too (`flashinfer` meets
    the identifier FlashInfer)."""
    return [Token(key, shown, kind, group) for key, shown, kind in _word_cut(surface)]


def _word_cut(surface: str) -> tuple[tuple[str, str, Kind], ...]:
    """(key, surface, kind) of a plain word's tokens: its stem, and its unstemmed form."""
    lowered = surface.casefold()
    key = stem(lowered)
    if key == lowered:
        return ((key, surface, "word"),)
    return ((key, surface, "word"), (lowered, surface, "joined"))


def _number_token(digits: str, group: int) -> Token:
    """A bare number: 4+ digits is a PR or issue (`#12345`), a shorter one a plain word."""
    key = str(int(digits)) if len(digits) < 20 else digits
    if len(digits) >= 4:
        return Token(f"#{key}", digits, "ref", group)
    return Token(key, digits, "word", group)


def _identifier_parts(surface: str) -> list[str]:
    """Pieces of an identifier: cut at separators, and long camel-case pieces at their humps."""
    parts: list[str] = []
    for piece in _SEPARATORS.split(surface):
        if not piece:
            continue
        camel = _CAMEL.split(piece) if len(piece) >= 5 else [piece]
        if len(camel) > 1 and all(len(c) >= 2 for c in camel):
            parts.extend(camel)
        else:
            parts.append(piece)
    return parts


def _identifier_tokens(lowered: str, shown: str, parts: list[str], group: int) -> list[Token]:
    """The whole identifier, its joined form and its stemmed parts."""
    out = [Token(lowered, shown, "ident", group)]
    joined = "".join(p.casefold() for p in parts)
    if joined != lowered:
        out.append(Token(joined, shown, "joined", group))
    # One-letter and short numeric pieces (`3` of `3.12`, `o` of `MiniCPM-o`) match too much alone.
    for p in parts:
        if p.isdigit() and len(p) >= 4:
            out.append(Token(f"#{int(p)}", p, "ref", group))  # `pull/54537`
        elif len(p) > 1 and not (p.isdigit() and len(p) < 3):
            out.append(Token(stem(p.casefold()), p, "part", group))
    return out


def _han_tokens(run: str, group: int) -> list[Token]:
    return [Token(b, b, "cjk", group) for b in han_bigrams(run)]


def tokenize(text: str) -> list[Token]:
    """All tokens of a text in order; tokens of one identifier or Chinese run share a group."""
    text = nfkc(text)
    text = _URL_REF.sub(lambda m: f" #{m.group(1)} ", text)
    text = _URL.sub(" ", text)
    out: list[Token] = []
    group = 0
    for match in _SCAN.finditer(text):
        raw = match.group()
        if _HAN.fullmatch(raw):
            for run in _CJK_BREAKS.split(raw):
                if run:
                    out.extend(_han_tokens(run, group))
                    group += 1
        else:
            out.extend(_latin_tokens(raw, group))
            group += 1
    return out


_PARTICLES = "的了吗呢吧啊呀和与及或把被是在"


# A Chinese run as `tokenize` cuts it: Han characters up to a particle. Splitting a text on it
# leaves the stretches of Latin text between runs (`segments`), which repeat across a library.
_HAN_RUN = re.compile(f"({han_class(excluding=_PARTICLES)}+)")


def segment_tokens(segment: str) -> tuple[Token, ...]:
    """Latin tokens of a stretch of text without Chinese runs. Not cached itself: what is
    made of them (keys, glossary matches) is, and the cut of each Latin run is."""
    out: list[Token] = []
    for group, raw in enumerate(_LATIN.findall(segment)):
        out.extend(_latin_tokens(raw, group))
    return tuple(out)


def segment_words(segment: str) -> list[tuple[str, str, Kind]]:
    """(key, surface, kind) of `segment_tokens`, without making tokens (each Latin run's cut
    is cached)."""
    return [cut for raw in _LATIN.findall(segment) for cut in _latin_cut(raw)]


def segment_keys(segment: str) -> frozenset[str]:
    """Distinct keys of `segment_tokens`."""
    return frozenset([key for key, _, _ in segment_words(segment)])


def run_keys(run: str) -> frozenset[str]:
    """Distinct keys of one Chinese run: its bigrams, or the lone character."""
    if len(run) == 1:
        return frozenset((run,))
    return frozenset([run[i : i + 2] for i in range(len(run) - 1)])


@dataclass(frozen=True)
class SplitText:
    """A text cut for indexing: the Chinese runs and the Latin stretches between them.

    `segments` has one more item than `han_runs` (segment, run, segment, …, segment); the
    tokens are the same as `tokenize`'s, without one object per Chinese bigram.
    """

    text: str
    segments: list[str]
    han_runs: list[str]

    @property
    def latin(self) -> list[Token | None]:
        """Latin tokens in order, with a `None` where Chinese text intervened."""
        out: list[Token | None] = []
        for i, segment in enumerate(self.segments):
            if i and out and out[-1] is not None:
                out.append(None)
            out.extend(segment_tokens(segment))
        if out and out[-1] is None:
            out.pop()
        return out

    def keys(self) -> set[str]:
        """Every token key of the text: Latin keys and Chinese bigrams."""
        return set().union(*map(segment_keys, self.segments), *map(run_keys, self.han_runs))

    @cached_property
    def han(self) -> str:
        """The Chinese runs, one per line (a phrase check never spans two runs; made once:
        the index keeps it and the glossary looks for terms in it)."""
        return "\n".join(self.han_runs)


def split_text(text: str) -> SplitText:
    """Chinese runs and the Latin stretches between them, for fast indexing of long notes."""
    text = nfkc(text)
    if "://" in text:  # every URL has it, in whatever case its scheme is written
        text = _URL_REF.sub(lambda m: f" #{m.group(1)} ", text)
        text = _URL.sub(" ", text)
    parts = _HAN_RUN.split(text)
    return SplitText(text, parts[0::2], parts[1::2])


def atomic(tokens: list[Token]) -> list[Token]:
    """The ordered stream multi-word terms are matched against (no whole-identifier keys)."""
    return [t for t in tokens if t.kind in ATOMIC_KINDS]


def keys(text: str) -> list[str]:
    """Distinct token keys of a text, in order: a convenience for callers that rank clauses."""
    seen: dict[str, None] = {}
    for token in tokenize(text):
        seen.setdefault(token.key, None)
    return list(seen)


def han_text(text: str) -> str:
    """Only the Chinese characters of a text, for phrase checks of Chinese query runs."""
    return "".join(_HAN.findall(nfkc(text)))


def surface_of(tokens: list[Token]) -> str:
    """Text of consecutive atomic tokens as written: Chinese bigrams re-joined, words spaced."""
    out = ""
    previous: Token | None = None
    for token in tokens:
        if (
            token.kind == "cjk"
            and previous is not None
            and previous.kind == "cjk"
            and previous.group == token.group
        ):
            out += token.surface[-1]
        elif previous is None:
            out = token.surface
        elif token.kind == "cjk" or previous.kind == "cjk":
            out += token.surface
        else:
            out += " " + token.surface
        previous = token
    return out
