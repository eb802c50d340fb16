"""Optional semantic search: entries and queries as vectors from the team's model server.

Off unless EMBEDDINGS_MODEL is set. The lexical ranking stays the answer; vectors only add to it:

- a query the lexical search answers is re-ranked by reciprocal-rank fusion of both rankings
  (`1 / (RRF_K + rank)` summed), entries the vectors alone find joining after;
- a query it cannot answer is *rescued* by the entries most similar to it;
- either way only entries whose cosine similarity reaches `floor` count, so a question about
  something no entry is about still gets the honest no-match.

The core knows nothing of HTTP or the database: vectors come through `Embeddings` (the model
server adapter: returns None when it cannot answer in time, never raises) and are cached by an
entry's content hash in a `VectorCache` (the store), so an unchanged entry is embedded once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from chatbot.digest import Entry
from chatbot.search.index import Hit, SearchIndex, SearchResult

RRF_K = 60  # the usual constant: ranks beyond the first few weigh about the same
FLOOR = 0.5  # cosine similarity below which an entry is not about the query
BATCH = 64  # entries per embeddings call
TEXT_LIMIT = 2000  # characters of an entry embedded (title, tags, note)


class Embeddings(Protocol):
    """The model server's `/v1/embeddings`: one vector per text, or None (off, down, slow)."""

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]] | None: ...


class VectorCache(Protocol):
    """Vectors kept between runs by (model, entry content hash)."""

    def vectors(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]: ...

    def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None: ...


def entry_text(entry: Entry) -> str:
    """What of an entry is embedded: what it is about, not its links or numbers."""
    parts = [entry.title, entry.github_title or "", " ".join(entry.tags), entry.note]
    return "\n".join(p for p in parts if p)[:TEXT_LIMIT]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SemanticIndex:
    """Unit vectors of a library's entries, filled from the cache and the model server.

    `prepare(entries)` (a background thread in `serve`) embeds what the cache lacks, a batch at a
    time; until every entry has a vector the search stays lexical. `similar(query)` embeds the
    query (remembering the last few) and lists entries at or above the floor, the most similar first.
    """

    def __init__(
        self, embeddings: Embeddings, cache: VectorCache | None = None, floor: float = FLOOR
    ) -> None:
        self.embeddings = embeddings
        self.cache = cache
        self.floor = floor
        self._matrix: tuple[tuple[str, ...], NDArray[np.float32]] | None = None  # entry ids, rows
        self._queries: dict[str, NDArray[np.float32] | None] = {}
        self._lock = threading.Lock()
        self.prepared = threading.Event()  # set once every entry of a library has a vector

    def prepare(self, entries: Sequence[Entry]) -> bool:
        """Vectors for every entry (cached ones first); whether all were had. A failing server
        leaves the index as it was: lexical search goes on."""
        texts = [entry_text(e) for e in entries]
        hashes = [content_hash(t) for t in texts]
        known = self.cache.vectors(self.embeddings.model, hashes) if self.cache else {}
        missing = [(h, t) for h, t in dict(zip(hashes, texts, strict=True)).items() if h not in known]
        if not self._embed_missing(missing, known):
            return False
        rows = _rows([known[h] for h in hashes])
        if rows is None:
            return False
        with self._lock:
            self._matrix = (tuple(e.id for e in entries), rows)
        self.prepared.set()
        return True

    def _embed_missing(self, missing: list[tuple[str, str]], known: dict[str, list[float]]) -> bool:
        """Embed (hash, text) pairs a batch at a time into `known`, keeping each batch in the
        cache as it comes; False at the first batch the server does not answer."""
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            vectors = self.embeddings.embed([t for _, t in batch])
            if vectors is None or len(vectors) != len(batch):
                return False
            fresh = {h: v for (h, _), v in zip(batch, vectors, strict=True)}
            if self.cache:
                self.cache.save_vectors(self.embeddings.model, fresh)
            known.update(fresh)
        return True

    def similar(self, entries: Sequence[Entry], query: str) -> list[tuple[int, float]] | None:
        """(entry position, cosine) at or above the floor, the most similar first; None when the
        vectors are not ready for these entries or the query could not be embedded."""
        with self._lock:
            matrix = self._matrix
        if matrix is None or not _same_entries(matrix[0], entries):
            return None
        vector = self._query_vector(query)
        if vector is None or vector.shape[0] != matrix[1].shape[1]:
            return None
        scores = matrix[1] @ vector
        found = np.flatnonzero(scores >= self.floor)
        order = found[np.argsort(-scores[found], kind="stable")]
        return [(int(i), float(scores[i])) for i in order]

    def _query_vector(self, query: str) -> NDArray[np.float32] | None:
        if query in self._queries:
            return self._queries[query]
        vectors = self.embeddings.embed([query])
        vector = _unit_rows(np.array(vectors, dtype=np.float32))[0] if vectors else None
        if vector is not None:  # a failure is not remembered: the server may be back next time
            if len(self._queries) >= 256:
                self._queries.clear()
            self._queries[query] = vector
        return vector


def _rows(vectors: list[list[float]]) -> NDArray[np.float32] | None:
    """The vectors as unit rows; None for none, or when their sizes differ (the model changed)."""
    if not vectors or len({len(v) for v in vectors}) > 1:
        return None
    return _unit_rows(np.array(vectors, dtype=np.float32).reshape(len(vectors), -1))


def _same_entries(ids: tuple[str, ...], entries: Sequence[Entry]) -> bool:
    """Whether the vectors are those of these entries (a reload swaps in another library)."""
    return len(ids) == len(entries) and (not ids or (ids[0], ids[-1]) == (entries[0].id, entries[-1].id))


def _unit_rows(rows: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    return unit


def fused(lexical: list[Hit], similar: list[tuple[int, float]], entries: Sequence[Entry]) -> list[Hit]:
    """Reciprocal-rank fusion of the lexical hits and the similar entries; with no lexical hit,
    the similar entries alone (the rescue). An entry only the vectors found shows no matched terms."""
    if not lexical:
        return [Hit(entries[i], round(score, 4), []) for i, score in similar]
    position = {e.id: i for i, e in enumerate(entries)}
    semantic_rank = {i: rank for rank, (i, _) in enumerate(similar, start=1)}
    scored: dict[int, tuple[float, Hit]] = {}
    for rank, hit in enumerate(lexical, start=1):
        i = position[hit.entry.id]
        rrf = 1.0 / (RRF_K + rank) + (1.0 / (RRF_K + semantic_rank[i]) if i in semantic_rank else 0.0)
        scored[i] = (rrf, hit)
    for i, rank in semantic_rank.items():
        if i not in scored:
            scored[i] = (1.0 / (RRF_K + len(lexical) + rank), Hit(entries[i], 0.0, []))
    ordered = sorted(scored.items(), key=lambda item: (-item[1][0], item[0]))
    return [hit for _, (_, hit) in ordered]


class SemanticSearch:
    """The lexical index with semantic fusion and rescue: `search` as `SearchIndex.search`."""

    def __init__(self, index: SearchIndex, semantic: SemanticIndex) -> None:
        self.index = index
        self.semantic = semantic

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        similar = self.semantic.similar(self.index.entries, query[:500])
        if not similar:  # off, not ready, down, or nothing similar enough: the lexical answer
            return self.index.search(query, limit, offset)
        hits = fused(self.index.rank(query), similar, self.index.entries)
        start = max(offset, 0)
        return SearchResult(query, hits[start : start + max(limit, 0)], len(hits))
