"""Socket Mode clients against what Slack does, on the fake backend (tests/fakesocketmode.py).

Run: .venv/bin/python bench/socketmode.py [builtin] [websocket-client] [ours]
Each client serves a Bolt app whose slash command acks at once (the transport is measured, not
the bot) and meets, on a fresh backend: a `refresh_requested` refresh (the slowest of three
acks: on the old link before and after the notice, on the new link), a link cut without a close
frame (seconds until the next link opens, and CPU seconds spent meanwhile), `link_disabled`
(links opened in the next 8 s), an envelope no listener handles (acked?), a 2 MiB frame and
then a command (seconds to each ack). Waits are capped: ">N" means not within N seconds.
`builtin` is slack_sdk's own client (what Bolt's SocketModeHandler uses), `websocket-client`
slack_sdk's client on that library (installed only for this comparison), `ours`
chatbot/slack/socket_mode.py on `websockets`. Bolt's aiohttp and websockets adapters need an
AsyncApp (every listener async) and are not compared.

On this machine (2 cores shared with other jobs), commit 'socket: docs …' (slack_sdk 3.48.0,
websocket-client 1.9.2, websockets 17.4):

                                          builtin        websocket-client              ours
    refresh: slowest ack, s                  3.06                     >20              0.01
    cut: next link after        >20 s, 5.88 s CPU      0.50 s, 0.01 s CPU  0.67 s, 0.01 s CPU
    link_disabled: links in 8 s                57                      15                 0
    unhandled envelope acked                   no                      no               yes
    2 MiB frame / next command ack, s  >20 / 0.01             1.98 / 0.01       0.17 / 0.01

websocket-client's refresh never acks on the old link after the notice (it closes it at once,
the ack is lost: "Connection is already closed"); the built-in client never acks the 2 MiB frame
(a RecursionError in its frame reader, then a new link). Neither acks an envelope no listener handles: that is Bolt's 404, which the adapters
drop.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from tests.fakeslack import FakeSlack
from tests.fakesocketmode import FakeSocketMode, Link

APP_TOKEN = "xapp-1-bench"
CAP = 20.0


def bolt_app(fake: FakeSlack) -> App:
    app = App(
        client=WebClient(token="xoxb-bench", base_url=fake.api_url),
        signing_secret="bench",
        token_verification_enabled=False,
    )

    @app.command("/vllm-digest")
    def answer(ack: Callable[..., None], command: dict[str, Any]) -> None:
        ack(f"answer to {command['text']}")

    @app.event("message")
    def thread_reply(ack: Callable[[], None]) -> None:
        ack()

    return app


def start_builtin(app: App, fake: FakeSlack) -> Callable[[], None]:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    handler = SocketModeHandler(app, APP_TOKEN, web_client=WebClient(base_url=fake.api_url))
    handler.connect()  # type: ignore[no-untyped-call]
    return handler.close  # type: ignore[no-any-return]


def start_websocket_client(app: App, fake: FakeSlack) -> Callable[[], None]:
    from slack_bolt.adapter.socket_mode.websocket_client import SocketModeHandler

    handler = SocketModeHandler(app, APP_TOKEN, web_client=WebClient(base_url=fake.api_url))
    handler.connect()  # type: ignore[no-untyped-call]
    return handler.close  # type: ignore[no-any-return]


def start_ours(app: App, fake: FakeSlack) -> Callable[[], None]:
    from chatbot.slack.socket_mode import SocketModeClient

    pool = ThreadPoolExecutor(16)
    client = SocketModeClient(app, WebClient(base_url=fake.api_url), APP_TOKEN, pool)
    client.start()

    def close() -> None:
        client.close()
        pool.shutdown(wait=False)

    return close


CLIENTS = {"builtin": start_builtin, "websocket-client": start_websocket_client, "ours": start_ours}


def command(backend: FakeSocketMode, link: Link | None = None, timeout: float = CAP) -> float:
    """Seconds from sending a command to its ack (CAP + 1 when none came)."""
    payload = {
        "command": "/vllm-digest",
        "text": "compile",
        "user_id": "U1",
        "channel_id": "C1",
        "team_id": "T1",
    }
    sent = time.monotonic()
    envelope = backend.send_envelope("slash_commands", payload, link)
    try:
        return backend.wait_ack(envelope, timeout=timeout).at - sent
    except AssertionError:
        return timeout + 1


def seconds(value: float, cap: float = CAP) -> str:
    return f">{cap:.0f}" if value > cap else f"{value:.2f}"


def fresh(
    start: Callable[[App, FakeSlack], Callable[[], None]],
) -> tuple[FakeSlack, FakeSocketMode, Callable[[], None]]:
    fake, backend = FakeSlack(), FakeSocketMode()
    fake.socket_mode = backend
    stop = start(bolt_app(fake), fake)
    backend.wait_link(1)
    command(backend)  # warm
    return fake, backend, stop


def refresh(backend: FakeSocketMode) -> str:
    first = backend.wait_link(1)
    before = command(backend, first)
    backend.disconnect(first, "refresh_requested")
    old = command(backend, first)
    if not backend.opened_within(2, CAP):
        return f"{seconds(max(before, old))} (no new link)"
    return seconds(max(before, old, command(backend, backend.wait_link(2))))


def cut(backend: FakeSocketMode) -> str:
    cpu, wall = time.process_time(), time.monotonic()
    backend.cut(backend.wait_link(1))
    reopened = backend.opened_within(2, CAP)
    took = time.monotonic() - wall
    return f"{seconds(took if reopened else CAP + 1)} s, {time.process_time() - cpu:.2f} s CPU"


def disabled(backend: FakeSocketMode) -> str:
    backend.disable()
    backend.opened_within(100, 8.0)
    return str(len(backend.links()) - 1)


def unhandled(backend: FakeSocketMode) -> str:
    payload = {"type": "event_callback", "team_id": "T1", "event": {"type": "tokens_revoked", "tokens": {}}}
    envelope = backend.send_envelope("events_api", payload)
    try:
        backend.wait_ack(envelope, timeout=2.0)
    except AssertionError:
        return "no"
    return "yes"


def large(backend: FakeSocketMode) -> str:
    event = {
        "type": "message",
        "channel": "C1",
        "user": "U2",
        "text": "x" * (2 << 20),
        "ts": "1.2",
        "thread_ts": "1.1",
    }
    payload = {"type": "event_callback", "team_id": "T1", "event": event}
    sent = time.monotonic()
    envelope = backend.send_envelope("events_api", payload)
    try:
        frame = backend.wait_ack(envelope, timeout=CAP).at - sent
    except AssertionError:
        frame = CAP + 1
    return f"{seconds(frame)} / {seconds(command(backend))}"


SCENARIOS: dict[str, Callable[[FakeSocketMode], str]] = {
    "refresh: slowest ack, s": refresh,
    "cut: next link after": cut,
    "link_disabled: links in 8 s": disabled,
    "unhandled envelope acked": unhandled,
    "2 MiB frame / next command ack, s": large,
}


def main(names: list[str]) -> None:
    logging.basicConfig(level=logging.CRITICAL)
    print(f"{'':34}" + "".join(f"{name:>24}" for name in names))
    rows: dict[str, list[str]] = {scenario: [] for scenario in SCENARIOS}
    for name in names:
        for scenario, run in SCENARIOS.items():
            try:
                fake, backend, stop = fresh(CLIENTS[name])
            except ImportError as exc:  # websocket-client is not a dependency of the bot
                rows[scenario].append(f"({exc.name} missing)")
                continue
            try:
                rows[scenario].append(run(backend))
            finally:
                stop()
                backend.close()
                fake.close()
    for scenario, cells in rows.items():
        print(f"{scenario:34}" + "".join(f"{cell:>24}" for cell in cells))


if __name__ == "__main__":
    main(sys.argv[1:] or list(CLIENTS))
