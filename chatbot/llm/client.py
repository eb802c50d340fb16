"""Chat completions from an OpenAI-compatible server, streamed, with a hard deadline.

The official `openai` client (what vLLM documents) is imported on first use, so a bot without
LLM_BASE_URL never loads it. Every failure — connection refused, 4xx/5xx, 429, timeout, an empty or
malformed stream — becomes one `ModelError`; the caller falls back to the extractive answer. The
stream is read on a worker thread so the caller can give up at the deadline even while the server
trickles tokens; the response is closed when the caller stops reading.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from chatbot.llm.breaker import CircuitBreaker

log = logging.getLogger(__name__)

Message = dict[str, str]


MAX_RETRY_AFTER = 600.0  # a server asking for an hour's rest is asked again after ten minutes


class ModelError(RuntimeError):
    """The model gave no usable answer; the message says why in a few words. `retry_after`: the
    seconds the server asked us to wait (429/503 with Retry-After), for the circuit breaker."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(f"{reason}, retry after {retry_after:g} s" if retry_after else reason)
        self.retry_after = retry_after


class StreamCutError(ModelError):
    """The stream was cut at shutdown: not the model's fault (the circuit breaker ignores it)."""

    def __init__(self) -> None:
        super().__init__("cut at shutdown")


_CUT = object()


class StreamCut:
    """Ends every stream being read, at once (SIGTERM): its reader raises StreamCutError, so the
    answer at hand (the extractive one) is posted within the drain time, whatever LLM_TIMEOUT is;
    streams started afterwards end as soon as they start."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readers: set[queue.Queue[object]] = set()
        self.done = False

    def cut(self) -> None:
        with self._lock:
            self.done = True
            for items in self._readers:
                items.put(_CUT)

    def watch(self, items: queue.Queue[object]) -> None:
        with self._lock:
            if self.done:
                items.put(_CUT)
            self._readers.add(items)

    def unwatch(self, items: queue.Queue[object]) -> None:
        with self._lock:
            self._readers.discard(items)


def openai_client(
    base_url: str, api_key: str | None, timeout: float
) -> tuple[Any, tuple[type[BaseException], ...]]:
    """The `openai` client (imported only when a model server is configured; no retries: the
    caller has its deadline and breaker) and what its calls raise on a failure."""
    import openai

    # vLLM ignores the key unless started with --api-key; the client insists on one.
    client = openai.OpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)
    return client, (openai.OpenAIError, ValueError, KeyError, TypeError, AttributeError, OSError)


class ModelClient:
    """One model endpoint: its client, model name and circuit breaker."""

    def __init__(
        self,
        base_url: str,
        model: str | None,
        api_key: str | None = None,
        timeout: float = 20.0,
        breaker: CircuitBreaker | None = None,
        max_tokens: int = 400,
    ) -> None:
        self.base_url = base_url
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.breaker = breaker or CircuitBreaker()
        self._client, self._errors = openai_client(base_url, api_key, timeout)
        self._model = model
        self._model_lock = threading.Lock()

    def model(self) -> str:
        """LLM_MODEL, or the first model the server lists (vLLM serves one)."""
        with self._model_lock:
            if self._model is None:
                try:
                    listed = self._client.models.list()
                    self._model = next(iter(listed)).id
                except Exception as exc:
                    raise ModelError(f"no model: {type(exc).__name__}") from None
            return self._model

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        """Text deltas of one chat completion; raises ModelError on any failure or an empty answer."""
        errors = self._errors
        try:
            response: Any = self._client.chat.completions.create(
                model=self.model(),
                messages=list(messages),
                stream=True,
                temperature=0.2,
                max_tokens=self.max_tokens,
            )
        except errors as exc:
            raise ModelError(_reason(exc), _retry_after(exc)) from None
        ending = _Ending()
        try:
            for chunk in response:
                for choice in chunk.choices or ():
                    delta = ending.read(choice)
                    if delta:
                        yield delta
        except errors as exc:
            raise ModelError(_reason(exc)) from None
        finally:
            response.close()
        ending.check()


class _Ending:
    """How a stream ended. Only a finish_reason of "stop" is a whole answer: a stream that ends
    without one was cut (the connection dropped before [DONE]), "length" stopped mid-sentence at
    max_tokens, and text only in `reasoning_content` or tool calls is no answer to show."""

    def __init__(self) -> None:
        self.produced = False
        self.finish: str | None = None
        self.other = ""

    def read(self, choice: Any) -> str | None:
        """The content delta of one choice, noting its finish_reason and any non-content output."""
        self.finish = getattr(choice, "finish_reason", None) or self.finish
        delta = getattr(choice, "delta", None)
        if delta is None:
            return None
        if getattr(delta, "tool_calls", None):
            self.other = "tool calls"
        elif getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None):
            self.other = self.other or "reasoning"
        content = getattr(delta, "content", None)
        if content:
            self.produced = self.produced or bool(content.strip())
            return str(content)
        return None

    def check(self) -> None:
        if not self.produced:
            raise ModelError(f"no answer, only {self.other}" if self.other else "empty answer")
        if self.finish is None:
            raise ModelError("stream cut off before its end")
        if self.finish != "stop":
            raise ModelError(f"answer cut off (finish_reason {self.finish})")


def _retry_after(exc: BaseException) -> float | None:
    """The Retry-After of a refused call, in seconds (a number; an HTTP date is not worth parsing)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        seconds = float(value) if value else 0.0
    except ValueError:
        return None
    return min(seconds, MAX_RETRY_AFTER) if seconds > 0 else None


def _reason(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__} {status}" if status else type(exc).__name__


_DONE = object()


def stream_within(
    deltas: Callable[[], Iterator[str]],
    deadline: float,
    on_text: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    cut: StreamCut | None = None,
) -> str:
    """Read `deltas()` on a worker thread, calling `on_text(text so far)` as it grows, until the
    stream ends or `deadline` (a `clock()` value) passes. Returns the whole text, or raises
    ModelError (the stream's own, or "timed out"; StreamCutError when `cut` ends it)."""
    items: queue.Queue[object] = queue.Queue()

    def read() -> None:
        try:
            for delta in deltas():
                items.put(delta)
        except ModelError as exc:
            items.put(exc)
        except Exception as exc:  # a bug in a stream is a failed answer, not a dead thread
            items.put(ModelError(type(exc).__name__))
        items.put(_DONE)

    if cut is not None:
        cut.watch(items)
    try:
        threading.Thread(target=read, name="model-stream", daemon=True).start()
        return _read_until_done(items, deadline, on_text, clock)
    finally:
        if cut is not None:
            cut.unwatch(items)


def _read_until_done(
    items: queue.Queue[object], deadline: float, on_text: Callable[[str], None], clock: Callable[[], float]
) -> str:
    text = ""
    while True:
        remaining = deadline - clock()
        if remaining <= 0:
            raise ModelError("timed out")
        try:
            item = items.get(timeout=remaining)
        except queue.Empty:
            raise ModelError("timed out") from None
        if item is _DONE:
            return text
        if item is _CUT:
            raise StreamCutError()
        if isinstance(item, ModelError):
            raise item
        text += str(item)
        on_text(text)


def probe(client: ModelClient, messages: Sequence[Message]) -> str:
    """The whole answer at once (for `vllm-digest ask --llm`), within the client's timeout."""
    return stream_within(lambda: client.stream(messages), time.monotonic() + client.timeout, lambda _: None)


__all__ = ["ModelClient", "ModelError", "probe", "stream_within"]
