"""The cache of entry vectors for the optional semantic search (`chatbot.search.semantic.VectorCache`),
keyed by (embedding model, content hash): replicas share it, and an entry is embedded again only
when its text or the model changes. Vectors are float32, little-endian."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sqlalchemy import Engine, select

from chatbot.store.engine import insert_ignore
from chatbot.store.schema import entry_vectors
from chatbot.store.sql import utc_now

_CHUNK = 500  # hashes per lookup (bound parameters stay well under every database's limit)
FLOAT32 = np.dtype("<f4")


class VectorStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def vectors(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        """The kept vectors of these hashes (those there are)."""
        found: dict[str, list[float]] = {}
        wanted = list(dict.fromkeys(hashes))
        table = entry_vectors.c
        with self.engine.begin() as conn:
            for start in range(0, len(wanted), _CHUNK):
                query = select(table.content_hash, table.vector).where(
                    table.model == model, table.content_hash.in_(wanted[start : start + _CHUNK])
                )
                found.update((h, np.frombuffer(v, FLOAT32).tolist()) for h, v in conn.execute(query))
        return found

    def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Keep new vectors; one already kept (another replica's, even at the same moment) stays."""
        if not vectors:
            return
        now = utc_now()
        rows = [
            {
                "model": model,
                "content_hash": h,
                "dims": len(v),
                "vector": np.asarray(v, FLOAT32).tobytes(),
                "created_at": now,
            }
            for h, v in vectors.items()
        ]
        with self.engine.begin() as conn:
            conn.execute(insert_ignore(conn, entry_vectors), rows)
