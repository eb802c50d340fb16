"""A fake OpenAI-compatible model server on loopback (what vLLM serves at /v1), scripted per call.

    with FakeModel() as model:                 # base_url = model.base_url ("http://127.0.0.1:N/v1")
        model.script(Reply("In short: …"))     # the next chat completion streams this text
        model.script(Reply(status=500))        # the one after fails with 500
        model.script(Reply("…", hold=True))    # waits until model.release() before answering
        request = model.wait_for_request()     # the JSON body the bot sent (messages, stream, …)

Unscripted calls answer "OK." Chat completions stream as server-sent events when the request asks
for `stream`, else one JSON body; `GET /v1/models` lists one model. `malformed=True` sends a stream
whose chunks are not JSON; `chunks` splits the text into that many deltas. The last chunk carries
`finish` as its finish_reason (vLLM: "stop", or "length" at max_tokens; None sends none); `cut`
drops the connection after that many deltas (no finish, no [DONE]); `field` names the delta field
the text goes in ("content", "reasoning_content", or "tool_calls" for a tool call); `headers`
are sent with a failure status (Retry-After). `obey=True` plays a model that follows instructions
injected into the question: it answers with whatever the question tells it to say (the text after
`say:`, up to the end of the question), else the question itself.

`POST /v1/embeddings` answers one vector per input text from `embed` (a function of the text;
the default hashes its words into 64 dimensions, so texts sharing words are close), as floats or,
when the client asks for `encoding_format: base64` (the `openai` client does), as base64 float32;
scripted replies apply to it too (`Reply(status=500)`, `Reply(hold=True)` for a slow server).
"""

from __future__ import annotations

import base64
import json
import re
import struct
import threading
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake/vllm-test-model"


@dataclass(frozen=True)
class Reply:
    text: str = "OK."
    status: int = 200
    chunks: int = 3
    hold: bool = False
    malformed: bool = False
    finish: str | None = "stop"
    cut: int | None = None
    field: str = "content"
    headers: tuple[tuple[str, str], ...] = ()
    obey: bool = False


def obeyed(body: dict[str, Any]) -> str:
    """What an obedient model says to this request: the question's `say:` text, else the question."""
    prompt = str((body.get("messages") or [{}])[-1].get("content") or "")
    question = prompt.rsplit("<question>", 1)[-1].split("</question>", 1)[0].strip()
    head, marker, said = question.rpartition("say:")
    return said.strip() if marker else question or head


def hashed_words(text: str) -> list[float]:
    """A vector of a text's words (Latin words, Chinese characters) hashed into 64 dimensions."""
    vector = [0.0] * 64
    for word in re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text.casefold()):
        vector[zlib.crc32(word.encode()) % 64] += 1.0
    return vector


class FakeModel:
    def __init__(self, embed: Callable[[str], list[float]] = hashed_words) -> None:
        self.embed = embed
        self._replies: deque[Reply] = deque()
        self._requests: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._cond:
                    fake._requests.append(body)
                    reply = fake._replies.popleft() if fake._replies else Reply()
                    fake._cond.notify_all()
                if reply.hold:
                    fake._release.wait(timeout=30)
                if reply.obey:
                    reply = Reply(obeyed(body), chunks=reply.chunks)
                if reply.status != 200:
                    error = {"error": {"message": "scripted failure", "code": reply.status}}
                    self._json(reply.status, error, reply.headers)
                    return
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._json(200, _embeddings(body, fake.embed))
                    return
                if body.get("stream"):
                    self._stream(reply)
                else:
                    message = {"role": "assistant", "content": reply.text}
                    self._json(200, _completion({"index": 0, "message": message, "finish_reason": "stop"}))

            def _json(
                self, status: int, payload: dict[str, Any], headers: tuple[tuple[str, str], ...] = ()
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                size = max(1, -(-len(reply.text) // max(1, reply.chunks)))
                pieces = [reply.text[i : i + size] for i in range(0, len(reply.text), size)]
                if reply.cut is not None:
                    pieces = pieces[: reply.cut]
                for piece in pieces:
                    if reply.malformed:
                        data = b"data: {not json\n\n"
                    else:
                        data = _event(_delta(reply.field, piece), None)
                    self.wfile.write(data)
                    self.wfile.flush()
                if reply.cut is not None:
                    self.close_connection = True
                    return
                if reply.finish is not None:
                    self.wfile.write(_event({}, reply.finish))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        with self._cond:
            self._replies.extend(replies)

    def release(self) -> None:
        """Let held replies answer."""
        self._release.set()

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._cond:
            return list(self._requests)

    def wait_for_request(self, count: int = 1, timeout: float = 10.0) -> dict[str, Any]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= count, timeout):
                raise AssertionError(f"the model server got {len(self._requests)} requests, expected {count}")
            return self._requests[count - 1]

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()


def _completion(choice: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [choice],
    }


def _delta(field: str, text: str) -> dict[str, Any]:
    if field == "tool_calls":
        call = {"index": 0, "id": "call_0", "type": "function"}
        return {"tool_calls": [{**call, "function": {"name": "lookup", "arguments": text}}]}
    return {field: text}


def _event(delta: dict[str, Any], finish: str | None) -> bytes:
    chunk = _completion({"index": 0, "delta": delta, "finish_reason": finish})
    chunk["object"] = "chat.completion.chunk"
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _embeddings(body: dict[str, Any], embed: Callable[[str], list[float]]) -> dict[str, Any]:
    texts = body.get("input") or []
    texts = [texts] if isinstance(texts, str) else texts
    data = []
    for index, text in enumerate(texts):
        vector = embed(str(text))
        if body.get("encoding_format") == "base64":
            packed: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        else:
            packed = vector
        data.append({"object": "embedding", "index": index, "embedding": packed})
    usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
    return {"object": "list", "model": body.get("model", MODEL), "data": data, "usage": usage}
