"""HTTP mode: uvicorn serving a small Starlette app around the Bolt app.

`POST /slack/events` takes slash commands, events and interactivity (Bolt checks the v0
signature and the timestamp); `GET /healthz` answers probes. Bolt's own Starlette adapter runs
the synchronous `App.dispatch` on the event loop, which would stall every other request while
one listener works; here dispatch runs in Starlette's thread pool instead.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn
from slack_bolt import App
from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"


def asgi_app(
    app: App,
    health: Callable[[], dict[str, object]] | None = None,
    metrics: Callable[[], tuple[bytes, str]] | None = None,
) -> Starlette:
    """The ASGI app: Slack's request URL, a health check, and Prometheus metrics when given."""

    async def slack_events(request: Request) -> Response:
        body = await request.body()
        bolt_response = await run_in_threadpool(app.dispatch, to_bolt_request(request, body))
        return to_starlette_response(bolt_response)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True, **(health() if health else {})})

    routes = [
        Route(EVENTS_PATH, slack_events, methods=["POST"]),
        Route(HEALTH_PATH, healthz, methods=["GET"]),
    ]
    if metrics is not None:
        routes.append(Route(METRICS_PATH, metrics_endpoint(metrics), methods=["GET"]))
    return Starlette(routes=routes)


def metrics_endpoint(exposition: Callable[[], tuple[bytes, str]]) -> Callable[[Request], Any]:
    """GET /metrics: the registry's text exposition (rendered off the event loop)."""

    async def endpoint(request: Request) -> Response:
        body, content_type = await run_in_threadpool(exposition)
        return Response(body, media_type=content_type)

    return endpoint


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


class HttpServer:
    """uvicorn on a socket bound at construction, so `port` is known (port 0 picks a free one)
    and connections queue in the backlog until serving starts: no waiting for start-up."""

    def __init__(self, asgi: Starlette, host: str = "0.0.0.0", port: int = 3000) -> None:
        self.socket = listening_socket(host, port)
        config = uvicorn.Config(
            asgi, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=5
        )
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    def serve_forever(self) -> None:
        """Serve in this thread until SIGINT/SIGTERM (when this is the main thread) or stop()."""
        self.server.run(sockets=[self.socket])

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
