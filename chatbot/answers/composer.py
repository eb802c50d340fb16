"""Building an answer's text within its budget: the interface words, quoted pieces, PR link.

The interface words (a prefix per kind of answer, its "not in the note" line) are data, in
`data/answer_words.yaml`, in both languages; the quotes stay the curator's own words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

from chatbot.answers.pieces import Piece
from chatbot.digest import Entry
from chatbot.yamlfast import load_yaml

Lang = Literal["zh", "en"]
SHORT_NOTE = 200  # on a note this short, one whole relevant sentence may be quoted
BULLET = "• "
Quoted = list[tuple[Piece, str]]  # pieces and the form of each that is quoted (full text or lead)


@lru_cache(maxsize=1)
def answer_words() -> dict[str, dict[Lang, str]]:
    """The interface words by key and language (the data file, read once)."""
    text = resources.files("chatbot.answers").joinpath("data/answer_words.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    return {str(key): {"zh": str(v["zh"]), "en": str(v["en"])} for key, v in data["words"].items()}


@dataclass
class Composer:
    """Builds the answer text within the budget: prefix, quoted pieces, extra lines, PR link."""

    entry: Entry
    lang: Lang
    limit: int
    sources: list[str] = field(default_factory=list)
    found: bool = True

    def word(self, key: str) -> str:
        return answer_words()[key][self.lang]

    @property
    def link(self) -> str:
        return self.entry.url or ""

    @property
    def room(self) -> int:
        """Space for the quoted words. On a short note the link would take half the budget or more, so
        it goes after the quote without counting against it (issue 17)."""
        reserve = len(self.link) + 1 if self.link else 0
        return self.limit - reserve if reserve * 2 < self.limit else self.limit

    def nothing(self, key: str) -> str:
        """One honest line and the PR link: other entries "on the same topic" are not an answer."""
        self.found = False
        return self.lines([self.word(key)])

    def finish(self, body: str) -> str:
        """Body plus the PR link line, always: an answer, or an honest "not in the note", names
        the PR it speaks for (`room` keeps the quote short enough on a long note)."""
        body = body.strip()
        if self.link:
            return f"{body}\n{self.link}" if body else self.link
        return body

    def quote(self, prefix: str, pieces: Sequence[Piece], tail: Sequence[str] = ()) -> str:
        """The longest variant of the pieces that fits: full, first full + leads, leads, fewer."""
        room = self._quote_room(prefix, pieces)
        chosen, tail = self._fitting(prefix, pieces, tail, room)
        self.sources.extend(p.source for p, _ in chosen)
        texts = [t for _, t in chosen]
        body = self._render(prefix, texts, tail)
        if len(body) > room:
            body = self._render(prefix, texts, ())
        if len(body) > room:
            body = body[: max(room - 1, 1)] + "…"
        return self.finish(body)

    def _quote_room(self, prefix: str, pieces: Sequence[Piece]) -> int:
        """The room, or on a short note enough for the whole first piece: a short note's answer
        can be the whole relevant sentence."""
        if not pieces or len(self.entry.note) > SHORT_NOTE:
            return self.room
        whole = len(self._render(prefix, [pieces[0].text], ()))
        return max(self.room, min(whole, len(self.entry.note) - 1))

    def _fitting(
        self, prefix: str, pieces: Sequence[Piece], tail: Sequence[str], room: int
    ) -> tuple[Quoted, Sequence[str]]:
        """The first variant that fits with the tail lines; else the first lead, without them."""
        for variant in _variants(pieces):
            if len(self._render(prefix, [t for _, t in variant], tail)) <= room:
                return variant, tail
        return [(p, p.lead) for p in pieces[:1]], ()

    @staticmethod
    def _render(prefix: str, texts: Sequence[str], tail: Sequence[str]) -> str:
        if len(texts) == 1:
            body = f"{prefix}{texts[0]}"
        else:
            bullets = "\n".join(BULLET + t for t in texts)
            body = f"{prefix.rstrip()}\n{bullets}" if prefix.strip() else bullets
        return "\n".join([body, *tail]).strip() if tail else body.strip()

    def lines(
        self, lines: Sequence[str], alternatives: Sequence[str] = (), source: str = "related_entries"
    ) -> str:
        """Plain lines (no quotes), then the first of the alternative extra lines that fits."""
        out = list(lines)
        for line in alternatives:
            if len("\n".join([*out, line])) <= self.room:
                out.append(line)
                self.sources.append(source)
                break
        return self.finish("\n".join(out))


def _variants(pieces: Sequence[Piece]) -> list[Quoted]:
    """Ways to quote the pieces, longest first: all in full; the first in full and the leads of
    the next ones, or the first n in full; the leads of the first n."""
    full = [(p, p.text) for p in pieces]
    leads = [(p, p.lead) for p in pieces]
    variants: list[Quoted] = [full]
    for n in range(len(pieces), 0, -1):
        variants.append([*full[:1], *leads[1:n]])
        variants.append(full[:n])
    variants.extend(leads[:n] for n in range(len(pieces), 0, -1))
    return variants
