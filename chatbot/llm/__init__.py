"""The optional model server adapter: an OpenAI-compatible endpoint (e.g. vLLM) via the `openai` client.

Loaded only when LLM_BASE_URL is set; may import the core (prompts, grounding), never Slack or the store.
"""

from chatbot.llm.breaker import CircuitBreaker
from chatbot.llm.client import ModelClient, ModelError, StreamCut, StreamCutError, stream_within
from chatbot.llm.embeddings import EmbeddingsClient

__all__ = [
    "CircuitBreaker",
    "EmbeddingsClient",
    "ModelClient",
    "ModelError",
    "StreamCut",
    "StreamCutError",
    "stream_within",
]
