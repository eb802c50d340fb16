"""Socket Mode end to end: the real `vllm-digest serve` process against a fake Socket Mode backend
(tests/fakesocketmode.py: a WebSocket server on loopback) and the fake Web API, whose
`apps.connections.open` hands out the backend's URL. Each test does what Slack does every few
hours (refreshes a link, drops one without a close frame, turns Socket Mode off, refuses the
token, sends envelopes nobody listens to, a frame of megabytes) and asserts the acks' timing and
contents, the readiness probe and the log lines. Nothing sleeps to synchronise: every wait is on
a condition with a deadline.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from tests.fakeslack import FakeSlack
from tests.fakesocketmode import FakeSocketMode, Link
from tests.slackrequests import command_body, wait_ready

ROOT = Path(__file__).resolve().parent.parent
ACK_WITHIN = 1.0  # seconds; Slack's deadline is 3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Serving:
    """`vllm-digest serve` in Socket Mode, its probes on 127.0.0.1 (HOST), its log in a file."""

    def __init__(self, fake: FakeSlack, backend: FakeSocketMode, folder: Path) -> None:
        self.fake, self.backend = fake, backend
        self.port = free_port()
        self.log = folder / "serve.log"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SLACK_")},
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_APP_TOKEN": "xapp-1-test",
            "SLACK_API_URL": fake.api_url,
            "HOST": "127.0.0.1",
            "DATABASE_URL": f"sqlite:///{folder / 'bot.db'}",
            "PYTHONPATH": str(ROOT),
        }
        with self.log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "chatbot.cli", "serve", "--port", str(self.port)],
                env=env,
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def lines(self, containing: str) -> list[str]:
        return [line for line in self.text().splitlines() if containing in line]

    def readyz(self) -> httpx.Response:
        return httpx.get(f"{self.base}/readyz", timeout=5)

    def cpu_seconds(self) -> float:
        """User + system CPU time the process has used so far (from /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll another process's state (its probe, its log) against a deadline."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.01)  # another process: nothing to wait on
    return value


@pytest.fixture
def backend(fake_slack: FakeSlack) -> Iterator[FakeSocketMode]:
    with FakeSocketMode() as fake_backend:
        fake_slack.socket_mode = fake_backend
        yield fake_backend


@pytest.fixture
def serving(fake_slack: FakeSlack, backend: FakeSocketMode, tmp_path: Path) -> Iterator[Serving]:
    """A ready bot on its first link."""
    served = Serving(fake_slack, backend, tmp_path)
    try:
        ready = wait_ready(served.base, timeout=120)
        assert ready.json()["socket_mode"] == "ok", ready.json()
        backend.wait_link(1)
        yield served
    finally:
        served.stop()


def command(text: str, fake: FakeSlack) -> dict[str, Any]:
    """A slash command's payload as Socket Mode carries it (the form's fields as an object)."""
    return dict(parse_qsl(command_body(text, fake.response_url())))


def ask(serving: Serving, link: Link | None = None, text: str = "compile") -> dict[str, Any]:
    """Send `/vllm-digest <text>` on `link` and return the ack's payload, asserting it came in time."""
    sent = time.monotonic()
    envelope = serving.backend.send_envelope("slash_commands", command(text, serving.fake), link)
    ack = serving.backend.wait_ack(envelope, timeout=ACK_WITHIN)
    assert ack.at - sent < ACK_WITHIN
    payload: dict[str, Any] = ack.data["payload"]
    assert payload["response_type"] == "ephemeral" and text in json.dumps(payload).lower()
    return payload


@pytest.mark.parametrize("reason", ["warning", "refresh_requested"])
def test_a_refresh_keeps_every_ack_within_a_second_on_both_links(serving: Serving, reason: str) -> None:
    backend = serving.backend
    first = backend.wait_link(1)
    ask(serving, first)
    backend.disconnect(first, reason)
    # Slack keeps the old link open a while and may still deliver on it.
    ask(serving, first)
    second = backend.wait_link(2, timeout=5)
    ask(serving, second)
    backend.wait_ended(first, timeout=10)  # the bot retires the old link itself
    ask(serving, second)
    assert len(backend.links()) == 2
    assert serving.readyz().json()["socket_mode"] == "ok"
    assert serving.lines(f"Slack is closing link 1 ({reason})")
    assert serving.stop() == 0  # SIGTERM: the link closed, the answers drained
    assert "Traceback" not in serving.text() and serving.lines("SIGTERM: stopping")


def test_a_link_cut_without_a_close_frame_is_replaced_within_15_s_unready_meanwhile_no_spinning(
    serving: Serving,
) -> None:
    backend = serving.backend
    first = backend.wait_link(1)
    cpu_before, wall_before = serving.cpu_seconds(), time.monotonic()
    backend.cut(first)
    cut_at = time.monotonic()
    unready = until(
        lambda: (r := serving.readyz()).status_code == 503 and r, 1.0, "/readyz 503 after the cut"
    )
    assert time.monotonic() - cut_at < 1.0
    assert unready.json()["ok"] is False and unready.json()["socket_mode"] != "ok"
    second = backend.wait_link(2, timeout=15)
    assert second.opened - cut_at < 15
    wait_ready(serving.base, timeout=5)
    cpu = serving.cpu_seconds() - cpu_before
    wall = time.monotonic() - wall_before
    assert cpu < 0.5 * wall + 0.3, f"{cpu:.2f} s of CPU in {wall:.2f} s: spinning"
    ask(serving, second)
    assert serving.lines("link 1 closed (without a close frame), reconnecting")
    assert serving.lines("link 2 open, connected again")


def test_links_that_die_young_are_retried_with_a_growing_backoff_not_a_storm(serving: Serving) -> None:
    backend = serving.backend
    backend.hang_up = True
    backend.cut(backend.wait_link(1))
    backend.wait_link(3, timeout=10)
    # Backoff 0.5–1 s, 1–2 s, 2–4 s, 4–8 s: a fifth link is at least 7.5 s after the cut.
    assert not backend.opened_within(5, timeout=5.0), f"{len(backend.links())} links"
    assert serving.readyz().status_code == 503
    assert len(serving.lines("reconnecting")) <= len(backend.links()) <= 4  # a line per link, not per try


def test_link_disabled_is_one_error_line_unready_and_no_storm(serving: Serving) -> None:
    backend = serving.backend
    backend.disable()
    unready = until(lambda: (r := serving.readyz()).status_code == 503 and r, 1.0, "/readyz 503")
    assert "link_disabled" in unready.json()["socket_mode"]
    # The next try is minutes away: watch a few seconds for a storm of reconnects.
    assert not backend.opened_within(2, timeout=4.0), f"{len(backend.links())} links"
    assert len(serving.fake.calls("apps.connections.open")) == 1
    errors = serving.lines(" ERROR ")
    assert len(errors) == 1, errors
    assert "link_disabled" in errors[0] and "turn it on under Settings → Socket Mode" in errors[0]
    assert serving.readyz().status_code == 503


def test_a_token_refused_at_start_is_one_line_and_exit_1(
    fake_slack: FakeSlack, backend: FakeSocketMode, tmp_path: Path
) -> None:
    fake_slack.fail("apps.connections.open", error="invalid_auth")
    served = Serving(fake_slack, backend, tmp_path)
    assert served.process.wait(timeout=120) == 1
    log = served.text()
    assert "Traceback" not in log, log
    named = served.lines("SLACK_APP_TOKEN")
    assert named == ["vllm-digest: Socket Mode: setting SLACK_APP_TOKEN: Slack refused it (invalid_auth)"], (
        log
    )
    assert backend.links() == []


def test_a_token_refused_at_reconnect_is_one_line_then_the_link_comes_back(serving: Serving) -> None:
    backend, fake = serving.backend, serving.fake
    fake.fail("apps.connections.open", error="token_revoked", times=2)
    backend.cut(backend.wait_link(1))
    fake.wait_for("apps.connections.open", count=3, timeout=15)  # the first start, two refusals
    second = backend.wait_link(2, timeout=15)
    wait_ready(serving.base, timeout=5)
    ask(serving, second)
    refused = serving.lines("SLACK_APP_TOKEN")
    assert len(refused) == 1, refused
    assert " ERROR " in refused[0] and "Slack refused it (token_revoked)" in refused[0]
    assert "Traceback" not in serving.text()
    assert serving.lines("link 2 open, connected again")


def test_envelopes_nobody_listens_to_are_acknowledged_with_one_line(serving: Serving) -> None:
    backend = serving.backend
    unheard = {
        "type": "event_callback",
        "team_id": "T0000001",
        "event_id": "Ev0PINNED",
        "event": {"type": "pin_added", "channel_id": "C0CHAN", "user": "U0ASKER"},
    }
    retired = {
        "type": "block_actions",
        "team": {"id": "T0000001"},
        "user": {"id": "U0ASKER"},
        "container": {"type": "message", "channel_id": "C0CHAN", "message_ts": "1700000000.000100"},
        "actions": [{"type": "button", "action_id": "retired_button", "block_id": "b1", "value": "x"}],
    }
    for kind, payload in (("events_api", unheard), ("interactive", retired)):
        envelope = backend.send_envelope(kind, payload)
        ack = backend.wait_ack(envelope, timeout=ACK_WITHIN)
        assert ack.data == {"envelope_id": envelope}
    until(lambda: serving.lines("ignored block_actions retired_button: no listener for it"), 2.0, "log line")
    assert serving.lines("ignored event_callback pin_added: no listener for it")
    ask(serving)


def test_a_2_mib_frame_then_a_command_are_acknowledged_in_time(serving: Serving) -> None:
    backend = serving.backend
    pasted = "RuntimeError: CUDA out of memory\n" * (2 * 1024 * 1024 // 33 + 1)
    reply = {
        "type": "event_callback",
        "team_id": "T0000001",
        "event_id": "Ev0PASTED",
        "event": {
            "type": "message",
            "channel": "C0OTHER",
            "user": "U0PASTER",
            "text": pasted,
            "ts": "1700000001.000200",
            "thread_ts": "1700000000.000100",
        },
    }
    sent = time.monotonic()
    envelope = backend.send_envelope("events_api", reply)
    assert backend.wait_ack(envelope, timeout=3.0).at - sent < 3.0
    ask(serving)
    assert "CUDA out of memory" not in serving.text() and "RecursionError" not in serving.text()


def test_frames_that_are_not_envelopes_are_one_line_each_and_the_link_stays_in_sync(serving: Serving) -> None:
    backend = serving.backend
    link = backend.wait_link(1)
    backend.send_raw(link, '{"envelope_id": "secret-payload", not json')
    backend.send_raw(link, b"\x00secret-binary\xff")
    ask(serving, link)
    until(lambda: serving.lines("binary frame"), 2.0, "the binary frame's line")
    assert len(serving.lines("ignored a text frame of 42 bytes on link 1: not a JSON object")) == 1
    assert len(serving.lines("ignored a binary frame of 15 bytes on link 1")) == 1
    log = serving.text()
    assert "secret" not in log and "Traceback" not in log, log
    assert len(backend.links()) == 1


def test_the_probe_server_listens_where_host_says(capsys: pytest.CaptureFixture[str]) -> None:
    """HOST (default every interface) is where `serve` listens: the probes and /metrics in Socket
    Mode, Slack's requests too in HTTP mode; an address it cannot take is one line."""
    from argparse import Namespace

    from chatbot.serve import _serve_socket
    from chatbot.settings import Settings

    assert Settings(_env_file=None).host == "0.0.0.0"  # type: ignore[call-arg]
    local = _serve_socket(Namespace(port=0), Settings(_env_file=None, host="127.0.0.1"))  # type: ignore[call-arg]
    try:
        assert local.getsockname()[0] == "127.0.0.1"
    finally:
        local.close()
    elsewhere = Settings(_env_file=None, host="192.0.2.1")  # type: ignore[call-arg]
    assert _serve_socket(Namespace(port=0), elsewhere) is None
    assert capsys.readouterr().err.startswith("vllm-digest: --port 0: cannot listen on HOST 192.0.2.1 (")


def test_after_link_disabled_rare_tries_bring_the_link_back_once_socket_mode_is_on(
    fake_slack: FakeSlack, backend: FakeSocketMode, caplog: pytest.LogCaptureFixture
) -> None:
    """The bot's own app in-process, the retry interval shortened from 5 minutes: tries while
    Socket Mode is off add no log line; the first after it is turned on again is a live link."""
    from concurrent.futures import ThreadPoolExecutor

    from slack_sdk import WebClient

    from chatbot.slack.socket_mode import SocketModeClient
    from chatbot.wiring import build
    from tests.test_slack_http import settings_for

    bot = build(settings_for(fake_slack))
    pool = ThreadPoolExecutor(4)
    client = SocketModeClient(
        bot.app, WebClient(base_url=fake_slack.api_url), "xapp-1-test", pool, disabled_wait=0.5
    )
    try:
        client.start()
        assert client.state() == "ok"
        backend.disable()
        until(lambda: client.state() != "ok", 1.0, "unready after link_disabled")
        # Two more tries, each refused the same way: the third link is counted when it opens,
        # before its hello and refusal reach the bot, so the state is read once it has ended.
        backend.wait_ended(backend.wait_link(3, timeout=10))
        until(lambda: "link_disabled" in client.state(), 5.0, "link_disabled after the third refusal")
        backend.disabled = False
        until(lambda: client.state() == "ok", 5.0, "ready once Socket Mode is on again")
        live = backend.links()[-1]
        assert live.open and len(backend.links()) >= 3
        envelope = backend.send_envelope("slash_commands", command("compile", fake_slack), live)
        assert "compile" in json.dumps(backend.wait_ack(envelope, timeout=ACK_WITHIN).data["payload"]).lower()
    finally:
        client.close()
        pool.shutdown()
        bot.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "link_disabled" in errors[0], errors
