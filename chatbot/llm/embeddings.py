"""Vectors from the model server's `/v1/embeddings` (EMBEDDINGS_MODEL on LLM_BASE_URL).

Search must never wait on it: every call has a strict timeout (EMBEDDINGS_TIMEOUT, well under a
second by default) and no retries, and a circuit breaker stops calling a server that failed a few
times in a row. Any failure is None to the caller, which then answers from the lexical search.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from chatbot.llm.breaker import CircuitBreaker
from chatbot.llm.client import openai_client

log = logging.getLogger(__name__)


class EmbeddingsClient:
    """One embeddings endpoint: the `openai` client, the model name and a circuit breaker."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 0.5,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.model = model
        self.breaker = breaker or CircuitBreaker()
        self._client, self._errors = openai_client(base_url, api_key, timeout)

    def embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        """One vector per text, in order; None when the breaker is open or the call fails."""
        if not texts or not self.breaker.allow():
            return None
        try:
            response: Any = self._client.embeddings.create(model=self.model, input=list(texts))
            vectors = [list(item.embedding) for item in sorted(response.data, key=lambda d: d.index)]
        except self._errors as exc:
            self.breaker.failure()
            log.warning("embeddings unavailable (%s): searching without vectors", type(exc).__name__)
            return None
        if len(vectors) != len(texts):
            self.breaker.failure()
            return None
        self.breaker.success()
        return vectors
