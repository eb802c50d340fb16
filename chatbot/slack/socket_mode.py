"""Socket Mode: Slack's commands, events and interactivity over a WebSocket instead of HTTP.

Our own client rather than slack_sdk's, which did none of the refresh, backoff and link_disabled
handling (docs/slack.md: Socket Mode). One thread keeps one live link; each link's reader hands
envelopes to the dispatch pool, so a refresh or a slow close never holds an ack. The WebSocket is
the `websockets` library's (framing, close handshake, keepalive pings).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any
from urllib.parse import urlsplit

import orjson
from slack_bolt import App, BoltRequest, BoltResponse
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web import WebClient
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.protocol import State
from websockets.sync.client import ClientConnection, connect

from chatbot.slack import inbound

log = logging.getLogger(__name__)

# A frame this large closes the link (1009); Slack's largest envelopes (a message with a pasted
# log, its blocks and attachments) are a few MiB.
MAX_FRAME_BYTES = 64 * 1024 * 1024
# Slack keeps a refreshed link open about 10 s: envelopes in flight on it get this long to be
# acknowledged there before it is closed.
RETIRE_WAIT = 3.0
# A link that lived this long was healthy: the next reconnect starts the backoff afresh.
HEALTHY_LINK_SECONDS = 30.0
# apps.connections.open errors that say nothing about the token (every other one does).
_SLACK_TROUBLE = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
DISABLED = (
    "Socket Mode is turned off in the app's settings (link_disabled): turn it on under "
    "Settings → Socket Mode, or unset SLACK_APP_TOKEN and serve HTTP"
)


class SocketModeError(Exception):
    """A link could not be opened; the message is one line naming the cause."""


class _Link:
    """One WebSocket connection and the envelopes it delivered that are not acknowledged yet."""

    def __init__(self, number: int, ws: ClientConnection) -> None:
        self.number = number
        self.ws = ws
        self.opened = time.monotonic()
        self._pending = 0
        self._idle = threading.Condition()

    def alive(self) -> bool:
        return self.ws.state is State.OPEN

    def begin(self) -> None:
        with self._idle:
            self._pending += 1

    def done(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)


class SocketModeClient:
    """Keeps a live Socket Mode link and dispatches its envelopes to the Bolt app (see the
    module docstring). `start()` opens the first link or raises SocketModeError; `state()` is
    the readiness check: "ok" while a link is open, else the one-line reason."""

    def __init__(
        self,
        app: App,
        web: WebClient,
        app_token: str,
        dispatch: Executor,
        *,
        max_backoff: float = 60.0,
        disabled_wait: float = 300.0,
    ) -> None:
        self._app = app
        self._web = web
        self._app_token = app_token
        self._dispatch = dispatch
        self._max_backoff = max_backoff
        self._disabled_wait = disabled_wait
        self._lock = threading.Condition()
        self._current: _Link | None = None
        self._problem: str | None = "connecting"
        self._refresh = False
        self._failures = 0
        self._next_try = 0.0
        self._links = 0
        self._stopping = False

    # -- the outside -----------------------------------------------------------------------

    def start(self) -> None:
        """Open the first link (SocketModeError with one line when Slack refuses it), then keep
        one open on a background thread."""
        self._adopt(self._open())
        threading.Thread(target=self._keep, name="socket-mode", daemon=True).start()

    def state(self) -> str:
        """ "ok" while a link is open, else why not (the readiness check of Socket Mode)."""
        with self._lock:
            if self._current is not None and self._current.alive():
                return "ok"
            return self._problem or "link closed, reconnecting"

    def close(self, drain: float = 5.0) -> None:
        """Stop reconnecting, let the envelopes in flight be acknowledged (up to `drain`
        seconds), then close the link."""
        with self._lock:
            self._stopping = True
            link, self._current = self._current, None
            self._lock.notify_all()
        if link is not None:
            link.wait_idle(drain)
            link.ws.close()

    # -- keeping a link --------------------------------------------------------------------

    def _keep(self) -> None:
        while self._wait_for_work():
            try:
                link = self._open()
            except SocketModeError as exc:
                self._failed(str(exc))
                continue
            self._adopt(link)

    def _wait_for_work(self) -> bool:
        """Until a new link is wanted (the live one ended, or Slack asked for a refresh) and the
        backoff is over; False once closing. Woken by the readers (a link has ended once its
        reader says so, which sets the backoff first), never polling fast."""
        with self._lock:
            while not self._stopping:
                wanted = self._refresh or self._current is None
                delay = self._next_try - time.monotonic()
                if wanted and delay <= 0:
                    return True
                self._lock.wait(delay if wanted else None)
            return False

    def _open(self) -> _Link:
        """A new link that said hello (SocketModeError otherwise)."""
        url = self._new_url()
        try:
            ws = connect(
                url,
                open_timeout=10,
                close_timeout=2,
                max_size=MAX_FRAME_BYTES,
                compression=None,
                ping_interval=10,
                legacy=True,  # a connection we close (not one that reconnects by itself)
            )
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise SocketModeError(f"cannot open a link to {urlsplit(url).netloc}: {exc}") from None
        try:
            first = _parsed(ws.recv(timeout=10))
        except (TimeoutError, ConnectionClosed):
            first = None
        if first is None or first.get("type") != "hello":
            ws.close()
            if first is not None and first.get("reason") == "link_disabled":
                raise SocketModeError(DISABLED)
            raise SocketModeError("a new link did not start with hello within 10 s")
        with self._lock:
            self._links += 1
            return _Link(self._links, ws)

    def _new_url(self) -> str:
        """A link URL from `apps.connections.open`; a refused token is named as the setting."""
        try:
            response = self._web.apps_connections_open(app_token=self._app_token)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc)
            if error in _SLACK_TROUBLE or exc.response.status_code >= 500:
                raise SocketModeError(f"Slack did not give a Socket Mode link ({error})") from None
            raise SocketModeError(f"setting SLACK_APP_TOKEN: Slack refused it ({error})") from None
        except (SlackClientError, OSError) as exc:
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise SocketModeError(f"cannot reach Slack for a Socket Mode link: {first_line}") from None
        return str(response["url"])

    def _adopt(self, link: _Link) -> None:
        """Make `link` the live one, read it, and retire the one it replaces."""
        with self._lock:
            if self._stopping:
                link.ws.close()
                return
            old, self._current = self._current, link
            self._refresh = False
            back = self._problem not in (None, "connecting", DISABLED)
            if self._problem != DISABLED:  # cleared by the next envelope: no line per retry
                self._problem = None
        if back:
            log.info("Socket Mode: link %d open, connected again", link.number)
        else:
            log.info("Socket Mode: link %d open", link.number)
        threading.Thread(
            target=self._read, args=(link,), name=f"socket-mode-{link.number}", daemon=True
        ).start()
        if old is not None:
            threading.Thread(target=self._retire, args=(old,), name="socket-mode-retire", daemon=True).start()

    def _retire(self, link: _Link) -> None:
        """Close a replaced link once its envelopes are acknowledged (on its own thread: a
        close handshake never holds a reader or an ack)."""
        link.wait_idle(RETIRE_WAIT)
        link.ws.close()

    def _failed(self, problem: str) -> None:
        """A try that failed: the next after a jittered backoff; one line when the cause changed."""
        with self._lock:
            changed = problem != self._problem
            self._problem = problem
            wait = self._disabled_wait if problem == DISABLED else self._backoff()
            self._next_try = time.monotonic() + wait
        if changed:
            log.error("Socket Mode: %s; trying again in %.0f s and then with a backoff", problem, wait)

    def _backoff(self) -> float:
        """Seconds before the next try: doubling per failure up to the cap, jittered down to half
        (replicas that lost their links together do not come back together). Lock held."""
        self._failures += 1
        return min(self._max_backoff, 2.0 ** (self._failures - 1)) * random.uniform(0.5, 1.0)

    # -- reading a link --------------------------------------------------------------------

    def _read(self, link: _Link) -> None:
        try:
            for frame in link.ws:
                self._on_frame(link, frame)
        except ConnectionClosed:
            pass
        self._ended(link)

    def _ended(self, link: _Link) -> None:
        """A link closed: when it was the live one, say so and have the next one opened."""
        with self._lock:
            if link is not self._current or self._stopping:
                return
            self._current = None
            self._lock.notify_all()
            if time.monotonic() - link.opened >= HEALTHY_LINK_SECONDS:
                self._failures = 0
            if self._problem == DISABLED:  # the next try is already minutes away
                return
            self._problem = "link closed, reconnecting"
            self._next_try = time.monotonic() + self._backoff()
        close = link.ws.protocol.close_rcvd
        how = f"code {close.code}" if close is not None else "without a close frame"
        log.warning("Socket Mode: link %d closed (%s), reconnecting", link.number, how)

    def _on_frame(self, link: _Link, frame: str | bytes) -> None:
        """One frame: a disconnect notice, or an envelope for the dispatch pool; anything else is
        one line (no payload: it can carry a user's message)."""
        if isinstance(frame, bytes):
            log.warning("Socket Mode: ignored a binary frame of %d bytes on link %d", len(frame), link.number)
            return
        message = _parsed(frame)
        if message is None:
            log.warning(
                "Socket Mode: ignored a text frame of %d bytes on link %d: not a JSON object",
                len(frame),
                link.number,
            )
            return
        kind = message.get("type")
        if kind == "disconnect":
            self._disconnect(link, str(message.get("reason")))
        elif isinstance(message.get("envelope_id"), str) and message["envelope_id"]:
            link.begin()
            try:
                self._dispatch.submit(self._handle, link, message)
            except RuntimeError:  # the pool is shut down: closing; Slack sends it again
                link.done()
        elif kind != "hello":
            log.warning("Socket Mode: ignored a %r message without an envelope_id", str(kind)[:40])

    def _disconnect(self, link: _Link, reason: str) -> None:
        """Slack is closing `link`: open the next one now, or, for link_disabled, only rarely."""
        if reason == "link_disabled":
            with self._lock:
                changed, self._problem = self._problem != DISABLED, DISABLED
                self._next_try = time.monotonic() + self._disabled_wait
            if changed:
                log.error("Socket Mode: %s; trying again every %.0f s", DISABLED, self._disabled_wait)
            link.ws.close()
            return
        log.info("Socket Mode: Slack is closing link %d (%s), opening the next", link.number, reason)
        with self._lock:
            if link is self._current:
                self._refresh = True
                self._lock.notify_all()

    # -- envelopes -------------------------------------------------------------------------

    def _handle(self, link: _Link, envelope: dict[str, Any]) -> None:
        """Dispatch one envelope to the Bolt app and acknowledge it (with the ack's body)."""
        try:
            self._answer(link, envelope)
        except Exception:
            log.exception("Socket Mode: envelope %s failed; Slack sends it again", envelope["envelope_id"])
        finally:
            link.done()

    def _answer(self, link: _Link, envelope: dict[str, Any]) -> None:
        envelope_id: str = envelope["envelope_id"]
        payload = envelope.get("payload")
        if not isinstance(payload, dict):
            log.warning("Socket Mode: refused envelope %s: its payload is not an object", envelope_id)
            self._ack(link, envelope_id)
            return
        try:
            inbound.check_shape(payload)
        except inbound.Rejected as exc:  # what HTTP mode refuses with 400; nothing can answer it
            log.warning("Socket Mode: refused envelope %s: %s", envelope_id, exc.reason)
            self._ack(link, envelope_id)
            return
        with self._lock:
            if self._problem == DISABLED and link is self._current:
                self._problem = None  # envelopes arrive: Socket Mode is on again
        response = self._app.dispatch(_bolt_request(envelope, payload))
        if response.status == 404:
            log.info("ignored %s: no listener for it", inbound.describe(payload))
            self._ack(link, envelope_id)
        elif response.status == 200:
            self._ack(link, envelope_id, _ack_payload(response))
        else:
            log.warning(
                "Socket Mode: %s not acknowledged (status %d)", inbound.describe(payload), response.status
            )

    def _ack(self, link: _Link, envelope_id: str, payload: str | None = None) -> None:
        """The ack on the envelope's link, or on the live one when that link has closed since."""
        frame = '{"envelope_id":' + json.dumps(envelope_id)
        frame += (',"payload":' + payload + "}") if payload else "}"
        for target in (link, self._current):
            if target is None:
                continue
            try:
                target.ws.send(frame)
                return
            except ConnectionClosed:
                continue
        log.warning("Socket Mode: could not acknowledge envelope %s: no open link", envelope_id)


def _parsed(frame: str | bytes) -> dict[str, Any] | None:
    """A text frame's JSON object, or None."""
    if isinstance(frame, bytes):
        return None
    try:
        data = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _bolt_request(envelope: dict[str, Any], payload: dict[str, Any]) -> BoltRequest:
    """As Bolt's own Socket Mode adapter builds it: the payload, and Slack's retry count as the
    header HTTP mode carries it."""
    headers: dict[str, str | Sequence[str]] = {}
    if isinstance(envelope.get("retry_attempt"), int):
        headers["x-slack-retry-num"] = str(envelope["retry_attempt"])
    if envelope.get("retry_reason"):
        headers["x-slack-retry-reason"] = str(envelope["retry_reason"])
    return BoltRequest(mode="socket_mode", body=payload, headers=headers or None)


def _ack_payload(response: BoltResponse) -> str | None:
    """The ack's payload as JSON text: Bolt's JSON body as is, other text as `{"text": …}`."""
    body = response.body
    if not body:
        return None
    content_type = (response.headers.get("content-type") or [""])[0]
    if content_type.startswith("application/json"):
        return body
    return json.dumps({"text": body})
