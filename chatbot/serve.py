"""`vllm-digest serve`: listen at once, build and start the bot on a background thread, serve HTTP
or Socket Mode until a signal; and the one line any command shows for a database failure. Imports
are per step, like the rest of the command line."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from chatbot.settings import Settings, SettingsError


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """Socket Mode when SLACK_APP_TOKEN is set, else HTTP on --port / PORT. Listens at once and
    builds the bot on a background thread: `/livez` answers from the start, `/readyz` 503 until
    the bot can answer. The main thread serves HTTP (uvicorn's signal handling needs it)."""
    import threading

    from chatbot.slack.server import HttpServer, Starting

    sock = _serve_socket(args, settings)
    if sock is None:
        return 2
    starting = Starting()
    server = HttpServer(starting, sock=sock)
    started: dict[str, Any] = {}
    threading.Thread(
        target=_start_bot, args=(settings, server, starting, started), name="start", daemon=True
    ).start()
    stopped_by = server.serve_forever()
    if stopped_by is not None:
        name = signal.Signals(stopped_by).name
        print(f"vllm-digest: {name}: stopping, finishing the answers in progress", file=sys.stderr)
    if "socket_mode" in started:
        started["socket_mode"].close()
    if "bot" in started:
        started["bot"].close()
    return int(started.get("exit", 0))


def _start_bot(settings: Settings, server: Any, starting: Any, started: dict[str, Any]) -> None:
    """Build the bot, hand it the requests, connect, load; a failure is one line and the exit code."""
    from chatbot.heap import build_long_lived

    try:
        # Imports and the bot are long-lived: no cyclic GC pass over them while they are made
        # (a tenth of the build's CPU), frozen out of later collections once made.
        bot = build_long_lived(lambda: _serve_bot(settings))
        if isinstance(bot, int):
            started["exit"] = bot
            return
        started["bot"] = bot
        _serve_bot_traffic(bot, settings, server, starting, started)
    except Exception as exc:  # as `main` would: one line for the database, else the traceback
        line = database_error(exc, settings)
        if line is None:
            import traceback

            traceback.print_exc()
        else:
            print(f"vllm-digest: {line}", file=sys.stderr)
        started["exit"] = 1
    finally:
        if "exit" in started:
            server.server.should_exit = True


def _serve_bot_traffic(
    bot: Any, settings: Settings, server: Any, starting: Any, started: dict[str, Any]
) -> None:
    """Requests go to the bot's app ("still loading" until the digests are); then Slack's link."""
    from chatbot.slack.server import asgi_app

    # With METRICS_PORT the scrape has a port of its own, and the public Slack port does not
    # answer /metrics (what the bot counts is nobody's business on the internet).
    exposition = None if settings.metrics_port else bot.metrics.exposition
    starting.set(asgi_app(bot.app, bot.health, exposition, ready=bot.readiness))
    if settings.metrics_port:
        from prometheus_client import start_http_server

        start_http_server(settings.metrics_port, addr=settings.host, registry=bot.metrics.registry)
        print(
            f"vllm-digest: GET /metrics on port {settings.metrics_port} (HOST {settings.host})",
            file=sys.stderr,
        )
    if settings.slack_app_token:
        socket_mode = _serve_socket_mode(bot, settings, server.port)
        if socket_mode is None:
            started["exit"] = 1
            return
        started["socket_mode"] = socket_mode
    else:
        listen = f"port {server.port}, POST /slack/events, GET /livez, /readyz (HOST {settings.host})"
        print(f"vllm-digest: HTTP on {listen}", file=sys.stderr)
    bot.start()


def _serve_socket(args: argparse.Namespace, settings: Settings) -> Any:
    """The socket, bound before anything starts so a taken port fails at once; None (one line)."""
    from chatbot.slack.server import listening_socket

    port = args.port if args.port is not None else settings.port  # 0: any free port
    try:
        return listening_socket(settings.host, port)
    except OSError as exc:
        what = f"--port {port}" if args.port is not None else f"setting PORT: {port}"
        print(
            f"vllm-digest: {what}: cannot listen on HOST {settings.host} ({exc.strerror or exc})",
            file=sys.stderr,
        )
        return None


def _serve_bot(settings: Settings) -> Any:
    """The bot, digests not loaded yet; an exit code (one line) for a bad setting or no Slack."""
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackApiError, SlackClientError

    from chatbot.builders import build_store
    from chatbot.observability import configure_logging
    from chatbot.snapshot import Snapshots
    from chatbot.wiring import build, slack_credentials

    configure_logging(settings.log_format)
    snapshots = Snapshots(settings.cache_dir, settings.digest_dir) if settings.cache_dir else None
    try:
        # Missing credentials are a setting's one line before the database is made or migrated.
        slack_credentials(settings, local=False)
        return build(settings, store=build_store(settings), snapshots=snapshots, load=False)
    except SettingsError as exc:
        print(f"vllm-digest: {exc}", file=sys.stderr)
        return 2
    except (BoltError, SlackApiError, SlackClientError, OSError) as exc:
        refused = _token_refusal(exc)
        if refused is not None:
            print(
                f"vllm-digest: setting SLACK_BOT_TOKEN: Slack refused the token ({refused})", file=sys.stderr
            )
            return 2
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"vllm-digest: cannot reach Slack at {settings.slack_api_url}: {first_line}", file=sys.stderr)
        return 1


def _token_refusal(error: BaseException) -> str | None:
    """Slack's error code when its auth.test refused the token (invalid_auth, token_revoked, …): a
    setting to fix, not a network to wait for. Bolt raises its own error from Slack's."""
    from slack_sdk.errors import SlackApiError

    cause = error if isinstance(error, SlackApiError) else error.__cause__ or error.__context__
    if not isinstance(cause, SlackApiError) or cause.response is None:
        return None
    if cause.response.status_code != 200:
        return None
    code = cause.response.get("error")
    return str(code) if code else None


def _serve_socket_mode(bot: Any, settings: Settings, port: int) -> Any:
    """Socket Mode: the HTTP port serves the probes only, the link is a readiness check; None
    (one line) when no link opens."""
    from chatbot.executors import TrackedExecutor
    from chatbot.slack.retries import web_client
    from chatbot.slack.socket_mode import SocketModeClient, SocketModeError

    assert settings.slack_app_token is not None
    dispatch = TrackedExecutor(16, "socket-mode-dispatch")
    bot.executors.append(dispatch)
    client = SocketModeClient(
        bot.app, web_client(settings, settings.slack_app_token), settings.slack_app_token, dispatch
    )
    try:
        client.start()
    except SocketModeError as exc:
        print(f"vllm-digest: Socket Mode: {exc}", file=sys.stderr)
        return None
    bot.ready_checks["socket_mode"] = client.state
    print(
        f"vllm-digest: Socket Mode; GET /livez, /readyz on port {port} (HOST {settings.host})",
        file=sys.stderr,
    )
    return client


def database_error(exc: Exception, settings: Settings) -> str | None:
    """One line for any database failure (any SQLAlchemy or driver error class), else None."""
    if "chatbot.store.engine" not in sys.modules:
        return None
    from chatbot.store.engine import StoreUnavailable, store_errors, unavailable

    if isinstance(exc, StoreUnavailable):
        return str(exc)
    module = type(exc).__module__.split(".")[0]
    if isinstance(exc, store_errors()) and module in ("sqlalchemy", "sqlite3", "psycopg"):
        return str(unavailable(settings.database_url, exc))
    return None
