"""Topic search over the library (placeholder: substring match; the real index replaces it).

Public contract used by the Slack adapter, the CLI and the answerer:
`SearchIndex.build(entries)`, `.search(query, limit, offset) -> SearchResult`, `.topics()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from chatbot.model import Entry


@dataclass(frozen=True)
class Hit:
    """One ranked entry with the query terms that matched it (for display)."""

    entry: Entry
    score: float
    matched: list[str]


@dataclass(frozen=True)
class SearchResult:
    """A page of ranked hits; `suggestions` are topics to offer when nothing matched."""

    query: str
    hits: list[Hit]
    total: int
    suggestions: list[str] = field(default_factory=list)


class SearchIndex:
    """Placeholder index: case-insensitive substring match on title, tags and note."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)

    @classmethod
    def build(cls, entries: Sequence[Entry]) -> SearchIndex:
        return cls(entries)

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        words = [w for w in query.casefold().split() if w]
        hits: list[Hit] = []
        for entry in self.entries:
            text = " ".join([entry.title, *entry.tags, entry.note]).casefold()
            matched = [w for w in words if w in text]
            if words and matched:
                hits.append(Hit(entry, float(len(matched)), matched))
        hits.sort(key=lambda h: -h.score)
        suggestions = [] if hits else [t for t, _ in self.topics()[:5]]
        return SearchResult(query, hits[offset : offset + limit], len(hits), suggestions)

    def topics(self) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for entry in self.entries:
            for tag in entry.tags:
                counts[tag] = counts.get(tag, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
