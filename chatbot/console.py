"""`vllm-digest console`: a chat in the terminal that runs the same Bolt app as Slack.

Each line becomes a signed Slack request (slash command, button press, thread message) that the
real `App.dispatch` handles, with the real handlers. What the app sends back — the ack body,
Web API calls, response-URL posts — reaches a small loopback stand-in for Slack (`LocalSlack`),
which renders the Block Kit as terminal text. No Slack workspace and no settings are needed.

    /vllm-digest compile     a slash command (a line without "/" is a topic too)
    1                        press button [1]
    > what are the risks?    reply in the thread of the last message posted to the channel
    quit

When stdin is not a terminal, lines are read as a script; each line's work finishes (answers,
lazy listeners) before the next line is read.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlencode, urlsplit

from slack_sdk.signature import SignatureVerifier

from chatbot.bot import Bot
from chatbot.builders import build_store
from chatbot.settings import Settings
from chatbot.slack import action_ids as ids
from chatbot.slack import inbound
from chatbot.slack.mrkdwn import escape
from chatbot.wiring import build

CHANNEL = "C0CONSOLE"
USER = "U0CONSOLE"
BOT_USER = "U0BOT"

PROMPT_HELP = (
    "Type /vllm-digest <topic|help|today|latest|topics>, a button's number to press it, "
    "'> question' to reply in the last thread, or 'quit'."
)


@dataclass
class Pressable:
    """A button on screen and where its message lives."""

    button: dict[str, Any]
    channel: str
    message_ts: str | None


class Screen:
    """Renders messages as numbered, readable text; thread-safe (answers arrive from threads)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.buttons: dict[int, Pressable] = {}
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self.last_thread: str | None = None

    def write(self, text: str) -> None:
        with self._lock:
            self.out.write(text + "\n")
            self.out.flush()

    def show(
        self, message: dict[str, Any], label: str, channel: str = CHANNEL, ts: str | None = None
    ) -> None:
        with self._lock:
            lines = [f"── {label} " + "─" * max(0, 60 - len(label))]
            blocks = message.get("blocks") or []
            if not blocks:
                lines.append(readable(str(message.get("text", ""))))
            for block in blocks:
                lines.extend(self._block(block, channel, ts))
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()

    def _block(self, block: dict[str, Any], channel: str, ts: str | None) -> list[str]:
        kind = block.get("type")
        if kind == "header":
            return [f"■ {readable(block['text']['text']).upper()}"]
        if kind == "section":
            return [readable(block["text"]["text"])]
        if kind == "context":
            return ["  · " + " ".join(readable(e.get("text", "")) for e in block["elements"])]
        if kind == "divider":
            return ["  " + "·" * 40]
        if kind == "actions":
            shown = []
            for element in block["elements"]:
                number = next(self._numbers)
                self.buttons[number] = Pressable(element, channel, ts)
                label = readable(element["text"]["text"])
                shown.append(f"[{number}] {label}" + (f" ↗ {element['url']}" if element.get("url") else ""))
            return ["  " + "   ".join(shown)]
        return [f"({kind})"]


_LINK = re.compile(r"<([^<>|]+)\|([^<>]*)>")
_BARE = re.compile(r"<([^<>|]+)>")


def readable(text: str) -> str:
    """mrkdwn as terminal text: links as "label (url)", mentions kept, entities decoded."""
    text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})", text)
    text = _BARE.sub(lambda m: m.group(1), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class LocalSlack:
    """The Web API and response URLs on loopback, rendering to the screen what the bot sends."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self._lock = threading.Lock()
        self._last_ts = 0.0
        local = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8") if length else ""
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    params = json.loads(raw or "{}")
                else:
                    params = dict(parse_qsl(raw))
                    for name in ("blocks", "metadata"):
                        if isinstance(params.get(name), str):
                            params[name] = json.loads(params[name])
                params.update(dict(parse_qsl(urlsplit(self.path).query)))
                answer = local.handle(urlsplit(self.path).path, params)
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self._responses = itertools.count(1)
        self._messages: dict[str, list[dict[str, Any]]] = {}

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def response_url(self) -> str:
        return f"{self.url}/response/{next(self._responses)}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _ts(self) -> str:
        with self._lock:
            self._last_ts = max(time.time(), self._last_ts + 0.000001)
            return f"{self._last_ts:.6f}"

    def handle(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        """One call from the app: a response-URL post, or a Web API method."""
        if path.startswith("/response/"):
            self.screen.show(params, "only visible to you")
            return {"ok": True}
        method = path.removeprefix("/api/")
        if method == "chat.postMessage":
            return self._post_message(params)
        if method in ("chat.postEphemeral", "chat.update"):
            self.screen.show(params, "only visible to you" if method == "chat.postEphemeral" else "updated")
            return {"ok": True, "ts": params.get("ts") or self._ts(), "message_ts": self._ts()}
        answer = self._answers(params).get(method)
        return {"ok": True, **answer} if answer is not None else {"ok": False, "error": "unknown_method"}

    def _answers(self, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """What the other methods answer, by method."""
        stored = self._stored(params)
        return {
            "auth.test": {
                "user_id": BOT_USER,
                "bot_id": "B0BOT",
                "team_id": "T0CONSOLE",
                "user": "vllm-digest",
            },
            # The console's one person is in every channel, and every channel is public.
            "conversations.members": {"members": [USER, BOT_USER], "response_metadata": {"next_cursor": ""}},
            "conversations.info": {
                "channel": {"id": params.get("channel"), "is_channel": True, "is_private": False}
            },
            "conversations.history": {
                "messages": [m for m in reversed(stored) if m.get("thread_ts", m["ts"]) == m["ts"]],
                "has_more": False,
            },
            "conversations.replies": {
                "messages": [m for m in stored if params.get("ts") in (m["ts"], m.get("thread_ts"))],
                "has_more": False,
            },
            # No locale: DIGEST_LANGUAGE=auto answers in the default language.
            "users.info": {"user": {"id": params.get("user"), "name": "you"}},
        }

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = self._ts()
        thread = params.get("thread_ts")
        kept = {k: params[k] for k in ("text", "blocks", "metadata", "thread_ts") if params.get(k)}
        self.keep(str(params.get("channel")), {"user": BOT_USER, "bot_id": "B0BOT", "ts": ts, **kept})
        label = f"vllm-digest in thread {thread}" if thread else f"vllm-digest in #{params.get('channel')}"
        self.screen.show(params, label, str(params.get("channel")), ts)
        if not thread:
            self.screen.last_thread = ts
        return {"ok": True, "channel": params.get("channel"), "ts": ts}

    def _stored(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._messages.get(str(params.get("channel")), []))

    def keep(self, channel: str, message: dict[str, Any]) -> None:
        """Remember a message so history and replies can return it (with its metadata)."""
        with self._lock:
            self._messages.setdefault(channel, []).append({"type": "message", **message})


class Console:
    """Turns typed lines into signed Slack requests for the bot's app."""

    def __init__(self, bot: Bot, local: LocalSlack, screen: Screen) -> None:
        self.bot = bot
        self.local = local
        self.screen = screen
        self.verifier = SignatureVerifier(bot.signing_secret)

    def dispatch(self, body: str, content_type: str) -> tuple[int, str]:
        ts = str(int(time.time()))
        headers: dict[str, str | Sequence[str]] = {
            "content-type": content_type,
            "x-slack-request-timestamp": ts,
            "x-slack-signature": str(self.verifier.generate_signature(timestamp=ts, body=body)),
        }
        request = inbound.bolt_request(body, inbound.parse_payload(body, content_type), headers)
        response = self.bot.app.dispatch(request)
        return response.status, response.body

    def command(self, text: str) -> None:
        form = {
            "command": ids.COMMAND,
            "text": escape(text),  # as Slack sends what people type: `&`, `<`, `>` as entities
            "channel_id": CHANNEL,
            "user_id": USER,
            "team_id": "T0CONSOLE",
            "response_url": self.local.response_url(),
            "trigger_id": f"console.{secrets.token_hex(6)}",
        }
        status, body = self.dispatch(urlencode(form), "application/x-www-form-urlencoded")
        if status != 200:
            self.screen.write(f"(the app answered HTTP {status})")
        elif body:
            self.screen.show(json.loads(body), "only visible to you")

    def press(self, number: int) -> None:
        pressable = self.screen.buttons.get(number)
        if pressable is None:
            self.screen.write(f"(no button [{number}])")
            return
        button = pressable.button
        if button.get("url"):
            self.screen.write(f"(opens {button['url']})")
        payload = {
            "type": "block_actions",
            "user": {"id": USER, "username": "you"},
            "team": {"id": "T0CONSOLE"},
            "channel": {"id": pressable.channel},
            "container": {
                "type": "message",
                "channel_id": pressable.channel,
                "message_ts": pressable.message_ts,
            },
            "response_url": self.local.response_url(),
            "trigger_id": f"console.{secrets.token_hex(6)}",
            "actions": [
                {
                    "type": "button",
                    "action_id": button["action_id"],
                    "block_id": "b",
                    "value": button.get("value"),
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }
        self.dispatch(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    def reply(self, text: str) -> None:
        thread = self.screen.last_thread
        if thread is None:
            self.screen.write("(no thread yet: share an entry to the channel first)")
            return
        event = {
            "type": "message",
            "channel": CHANNEL,
            "channel_type": "channel",
            "user": USER,
            "text": escape(text),
            "ts": self.local._ts(),
            "thread_ts": thread,
        }
        self.local.keep(
            CHANNEL, {k: v for k, v in event.items() if k not in ("type", "channel", "channel_type")}
        )
        body = {
            "type": "event_callback",
            "team_id": "T0CONSOLE",
            "event_id": f"Ev{time.time_ns()}",
            "event": event,
        }
        self.dispatch(json.dumps(body), "application/json")

    def handle(self, line: str) -> bool:
        """One typed line; False to stop."""
        line = line.strip()
        if not line:
            return True
        if line in ("quit", "exit", ":q"):
            return False
        if line.isdigit():
            self.press(int(line))
        elif line.startswith(">"):
            self.reply(line[1:].strip())
        elif line.startswith(ids.COMMAND):
            self.command(line[len(ids.COMMAND) :].strip())
        elif line.startswith("/"):
            self.screen.write(f"(unknown command; try {ids.COMMAND} help)")
        else:
            self.command(line)
        self.bot.wait_idle()
        return True


def run_console(settings: Settings, stdin: TextIO, stdout: TextIO) -> int:
    """Run the console on stdin/stdout until EOF or quit."""
    screen = Screen(stdout)
    local = LocalSlack(screen)
    local_settings = settings.model_copy(
        update={"slack_api_url": local.url + "/api/", "slack_signing_secret": secrets.token_hex(16)}
    )
    # The console keeps threads and handled events in DATABASE_URL (a SQLite file by default),
    # like `serve` does, so `today` shows the real daily pick.
    bot = build(local_settings, local=True, store=build_store(local_settings))
    console = Console(bot, local, screen)
    interactive = stdin.isatty()
    try:
        screen.write(
            f"vllm-digest console: {len(bot.library)} entries from {settings.digest_dir}. {PROMPT_HELP}"
        )
        for line in _lines(stdin, stdout, interactive):
            if not interactive:
                screen.write(f"» {line.rstrip()}")
            if not console.handle(line):
                break
    finally:
        bot.close()
        local.close()
    return 0


def _lines(stdin: TextIO, stdout: TextIO, interactive: bool) -> Iterable[str]:
    if not interactive:
        yield from stdin
        return
    while True:
        try:
            yield input("you> ")
        except (EOFError, KeyboardInterrupt):
            stdout.write("\n")
            return
