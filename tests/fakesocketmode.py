"""A fake Socket Mode backend on loopback: Slack's side of the WebSocket, for tests of `serve`.

`FakeSocketMode` is a real WebSocket server (the `websockets` library) on 127.0.0.1 and a free
port. `FakeSlack.socket_mode = backend` makes the fake Web API's `apps.connections.open` answer
its `ws://` URL, as Slack answers a `wss://` one. Each connection (a "link") gets `hello` first,
then whatever the test sends; every text frame the bot sends back is recorded with the moment
it arrived, so a test can wait for an envelope's ack against a deadline:

    backend = FakeSocketMode()                    # or the `socket_mode` fixture
    fake_slack.socket_mode = backend
    link = backend.wait_link(1)                   # the bot's first link, once it is open
    sent = backend.send_envelope("slash_commands", command_payload)
    ack = backend.wait_ack(sent)                  # the ack (its payload: the command's answer)
    backend.disconnect(link, "refresh_requested") # Slack's refresh; the link stays open
    backend.cut(link)                             # FIN without a close frame
    backend.disable()                             # Socket Mode turned off: link_disabled, closed
    backend.send_raw(link, b"\\x00\\x01")            # a binary frame; a str is a text frame

Slack's protocol as used here: `{"type": "hello", "num_connections": n, "debug_info": {...},
"connection_info": {"app_id": ...}}`; envelopes `{"envelope_id", "type", "payload",
"accepts_response_payload", "retry_attempt", "retry_reason"}`; acks `{"envelope_id", "payload"?}`;
`{"type": "disconnect", "reason": "warning" | "refresh_requested" | "link_disabled"}`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

# Slack's frames can be large (a message with a pasted log): the fake sends what the test asks.
_MAX_FRAME = 64 * 1024 * 1024


@dataclass(frozen=True)
class Received:
    """A text frame the bot sent on a link, parsed when it is JSON, with its arrival time."""

    link: int
    data: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


class Link:
    """One WebSocket connection the bot opened."""

    def __init__(self, number: int, connection: ServerConnection) -> None:
        self.number = number
        self.connection = connection
        self.opened = time.monotonic()
        self.ended = threading.Event()

    @property
    def open(self) -> bool:
        return not self.ended.is_set()


class FakeSocketMode:
    """A loopback Socket Mode backend; see the module docstring. Thread-safe; close() when done."""

    def __init__(self, *, hello: bool = True) -> None:
        self.hello = hello
        self.disabled = False  # Socket Mode is off: every link gets link_disabled and is closed
        self.hang_up = False  # every new link is closed (1011) right after its hello
        self._lock = threading.Condition()
        self._links: list[Link] = []
        self._received: list[Received] = []
        self._server: Server = serve(
            self._serve, "127.0.0.1", 0, max_size=_MAX_FRAME, compression=None, ping_interval=None
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-socket-mode", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """What `apps.connections.open` answers (a fresh ticket in the query each time)."""
        port = self._server.socket.getsockname()[1]
        return f"ws://127.0.0.1:{port}/link?ticket={uuid.uuid4().hex[:12]}"

    def close(self) -> None:
        self._server.shutdown()
        for link in self.links():
            link.connection.close()

    def __enter__(self) -> FakeSocketMode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the bot did ------------------------------------------------------------------

    def links(self) -> list[Link]:
        """Every link the bot opened, oldest first."""
        with self._lock:
            return list(self._links)

    def received(self, link: int | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self._received if link is None or r.link == link]

    def wait_link(self, count: int, timeout: float = 15.0) -> Link:
        """The count-th link once it is open (AssertionError naming what there is after `timeout`)."""
        return self._wait(lambda: self._links[count - 1] if len(self._links) >= count else None, timeout)

    def opened_within(self, count: int, timeout: float) -> bool:
        """Whether the bot opened `count` links within `timeout` (False when it did not: a storm
        test waits the whole window on purpose)."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self._links) >= count, timeout)

    def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> Received:
        """The ack of `envelope_id`, on whichever link it came."""
        return self._wait(
            lambda: next((r for r in self._received if r.data.get("envelope_id") == envelope_id), None),
            timeout,
        )

    def wait_ended(self, link: Link, timeout: float = 15.0) -> None:
        assert link.ended.wait(timeout), f"link {link.number} still open after {timeout}s"

    def _wait(self, found: Callable[[], Any], timeout: float) -> Any:
        with self._lock:
            if not self._lock.wait_for(found, timeout):
                raise AssertionError(
                    f"not within {timeout}s; links: {len(self._links)}, received: "
                    + ", ".join(json.dumps(r.data)[:80] for r in self._received)
                )
            return found()

    # -- what Slack does -------------------------------------------------------------------

    def send_envelope(
        self,
        kind: str,
        payload: dict[str, Any],
        link: Link | None = None,
        *,
        retry_attempt: int = 0,
        envelope_id: str | None = None,
    ) -> str:
        """An envelope (`slash_commands`, `events_api`, `interactive`) on `link` (default: the
        newest); its envelope id."""
        envelope_id = envelope_id or str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        self.send_raw(link or self.links()[-1], json.dumps(envelope))
        return envelope_id

    def send_raw(self, link: Link, frame: str | bytes) -> None:
        """A text frame (str) or a binary frame (bytes), as is."""
        link.connection.send(frame)

    def disconnect(self, link: Link, reason: str) -> None:
        """Slack's `disconnect` message; the link stays open (Slack closes it ~10 s later)."""
        message = {"type": "disconnect", "reason": reason, "debug_info": {"host": "fake-socket-mode"}}
        self.send_raw(link, json.dumps(message))

    def disable(self) -> None:
        """Socket Mode turned off in the app's settings: each open link, and each the bot opens
        from now on, gets `disconnect` (`link_disabled`) and is closed, as Slack does."""
        self.disabled = True
        for link in self.links():
            if link.open:
                self._refuse(link.connection)

    def _refuse(self, connection: ServerConnection) -> None:
        message = {
            "type": "disconnect",
            "reason": "link_disabled",
            "debug_info": {"host": "fake-socket-mode"},
        }
        try:
            connection.send(json.dumps(message))
            connection.close(1000, "link_disabled")
        except ConnectionClosed:
            pass

    def cut(self, link: Link) -> None:
        """End the link with a FIN and no close frame: what a load balancer or a crash does."""
        link.connection.socket.shutdown(socket.SHUT_RDWR)

    # -- serving ---------------------------------------------------------------------------

    def _serve(self, connection: ServerConnection) -> None:
        with self._lock:
            link = Link(len(self._links) + 1, connection)
            self._links.append(link)
            self._lock.notify_all()
        try:
            if self.hello:
                connection.send(json.dumps(_hello(len(self._links))))
            if self.disabled:
                self._refuse(connection)
            if self.hang_up:
                connection.close(1011, "server error")
            for frame in connection:
                self._record(link, frame)
        except (ConnectionClosed, OSError):
            pass
        finally:
            link.ended.set()
            with self._lock:
                self._lock.notify_all()

    def _record(self, link: Link, frame: str | bytes) -> None:
        try:
            data = json.loads(frame)
        except ValueError:
            data = {"unparsed": frame if isinstance(frame, str) else frame.hex()}
        with self._lock:
            self._received.append(Received(link.number, data if isinstance(data, dict) else {"json": data}))
            self._lock.notify_all()


def _hello(connections: int) -> dict[str, Any]:
    return {
        "type": "hello",
        "num_connections": connections,
        "debug_info": {"host": "fake-socket-mode", "approximate_connection_time": 18060},
        "connection_info": {"app_id": "A0FAKEAPP"},
    }
