"""HTTP mode: uvicorn serving a small Starlette app around the Bolt app.

`inbound` admits a request (413, 401, 400) before Bolt sees it; a request no listener handles gets
200 and one log line (Slack retries anything else). Bolt's own Starlette adapter runs the
synchronous `App.dispatch` on the event loop, which would stall every other request while one
listener works: here it runs in Starlette's thread pool. Probes: docs/slack.md.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn
from slack_bolt import App
from slack_bolt.adapter.starlette.handler import to_starlette_response
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from chatbot.slack import inbound

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
LIVE_PATH = "/livez"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"

log = logging.getLogger(__name__)

Readiness = Callable[[], dict[str, str]]
"""Named checks that are each "ok" or a one-line problem; any problem makes the process unready."""


def asgi_app(
    app: App,
    health: Callable[[], dict[str, object]] | None = None,
    metrics: Callable[[], tuple[bytes, str]] | None = None,
    *,
    signing_secret: str | None = None,
    ready: Readiness | None = None,
) -> Starlette:
    """The ASGI app: Slack's request URL, the probes, and Prometheus metrics when given. The
    signing secret defaults to the one the Bolt app was built with."""
    secret: str = signing_secret or app._signing_secret

    async def slack_events(request: Request) -> Response:
        try:
            body = await _read_capped(request)
            inbound.verify_signature(secret, request.headers, body)
            text = inbound.decode(body)
            payload = inbound.parse_payload(text, request.headers.get("content-type", ""))
        except inbound.Rejected as exc:
            client = request.client.host if request.client else "?"
            log.warning("refused a request from %s: %s (HTTP %d)", client, exc.reason, exc.status)
            return JSONResponse({"error": exc.reason}, status_code=exc.status)
        bolt_request = inbound.bolt_request(text, payload, request.headers, request.query_params)
        bolt_response = await run_in_threadpool(app.dispatch, bolt_request)
        if bolt_response.status == 404:
            # Nothing listens for it; Slack would retry a 404, so acknowledge it.
            log.info("ignored %s: no listener for it", inbound.describe(payload))
            return Response(status_code=200)
        return to_starlette_response(bolt_response)

    async def livez(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def readyz(request: Request) -> Response:
        checks = await run_in_threadpool(ready) if ready else {}
        ok = all(value == "ok" for value in checks.values())
        extra = health() if health and request.url.path == HEALTH_PATH else {}
        return JSONResponse({"ok": ok, **checks, **extra}, status_code=200 if ok else 503)

    routes = [
        Route(EVENTS_PATH, slack_events, methods=["POST"]),
        Route(HEALTH_PATH, readyz, methods=["GET"]),
        Route(LIVE_PATH, livez, methods=["GET"]),
        Route(READY_PATH, readyz, methods=["GET"]),
    ]
    if metrics is not None:
        routes.append(Route(METRICS_PATH, metrics_endpoint(metrics), methods=["GET"]))
    return Starlette(routes=routes)


class Starting:
    """What `serve` listens with from its first moment, while the bot is built (imports, the
    store, the object graph: about a second): `/livez` answers, `/readyz` and `/healthz` say 503
    "starting", and a Slack request waits (up to `wait` seconds, inside Slack's three) for the
    bot's app, which then answers it. `set(app)` hands every request to the bot's app."""

    def __init__(self, wait: float = 2.5) -> None:
        self.wait = wait
        self._app: ASGIApp | None = None
        self._set = threading.Event()

        async def livez(request: Request) -> Response:
            return JSONResponse({"ok": True})

        async def starting(request: Request) -> Response:
            return JSONResponse({"ok": False, "library": "starting"}, status_code=503)

        self._probes = Starlette(
            routes=[
                Route(LIVE_PATH, livez, methods=["GET"]),
                Route(READY_PATH, starting, methods=["GET"]),
                Route(HEALTH_PATH, starting, methods=["GET"]),
                Route(EVENTS_PATH, starting, methods=["POST"]),
            ]
        )

    def set(self, app: ASGIApp) -> None:
        self._app = app
        self._set.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app
        if app is None and scope["type"] == "http" and scope["path"] == EVENTS_PATH:
            await run_in_threadpool(self._set.wait, self.wait)
            app = self._app
        await (app or self._probes)(scope, receive, send)


def metrics_endpoint(exposition: Callable[[], tuple[bytes, str]]) -> Callable[[Request], Any]:
    """GET /metrics: the registry's text exposition (rendered off the event loop)."""

    async def endpoint(request: Request) -> Response:
        body, content_type = await run_in_threadpool(exposition)
        return Response(body, media_type=content_type)

    return endpoint


async def _read_capped(request: Request) -> bytes:
    """The body, refused (413) by its Content-Length or as soon as the stream passes the cap."""
    inbound.declared_length(request.headers)
    body = inbound.CappedBody()
    async for chunk in request.stream():
        body.add(chunk)
    return body.bytes()


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket with TCP_NODELAY.

    Created with an explicit IPPROTO_TCP: asyncio only turns Nagle off on sockets whose proto
    says TCP, and `socket.create_server` leaves proto 0, which cost every response with a body
    a 40 ms delayed-ACK stall (measured with bench/http.py).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


# What stops `serve` gracefully: Ctrl-C, and what an orchestrator sends before it kills.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class HttpServer:
    """uvicorn on a socket bound at construction, so `port` is known (port 0 picks a free one)
    and connections queue in the backlog until serving starts: no waiting for start-up."""

    def __init__(
        self, asgi: ASGIApp, host: str = "0.0.0.0", port: int = 3000, *, sock: socket.socket | None = None
    ) -> None:
        self.socket = sock or listening_socket(host, port)
        # ws="none": nothing here speaks WebSocket. With "auto" uvicorn imported `websockets`
        # on this thread while Socket Mode's client imported it on the start thread: Python's
        # import locks could deadlock between the two.
        config = uvicorn.Config(
            asgi,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
            ws="none",
        )
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    def serve_forever(self) -> int | None:
        """Serve in this thread until SIGINT/SIGTERM (when this is the main thread) or stop();
        the signal that stopped it, if one did. uvicorn shuts down, then raises that signal again
        for the handler it found: a default one would kill the process (SIGTERM: the answers in
        progress never drained) or print a KeyboardInterrupt traceback (Ctrl-C). In the main
        thread the handler it finds only notes the signal, and the caller winds down."""
        if threading.current_thread() is not threading.main_thread():
            self.server.run(sockets=[self.socket])
            return None
        stopped_by: list[int] = []
        noted = {sig: signal.signal(sig, lambda number, _: stopped_by.append(number)) for sig in STOP_SIGNALS}
        try:
            self.server.run(sockets=[self.socket])
        finally:
            for sig, handler in noted.items():
                signal.signal(sig, handler)
        return stopped_by[0] if stopped_by else None

    def start(self) -> HttpServer:
        """Serve on a background thread (tests, benchmarks)."""
        self._thread = threading.Thread(target=self.serve_forever, name="http-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()
