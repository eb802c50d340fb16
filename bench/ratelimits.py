"""One person flooding the bot against Slack's per-channel rate limit, and another person's question.

The served app (signed events over loopback) against the fake Slack limiting `chat.postMessage` to
one call per channel per second (429, `Retry-After: 2`): one user sends N mentions in a channel and
N DMs; then another user mentions the bot in a quiet channel. Reported: answers posted, attempts,
429s, calls sent before a Retry-After was over, and how long the quiet question waited for its
answer.

    .venv/bin/python bench/ratelimits.py [--flood 50]

Run against another checkout of `chatbot/` (the figures before a change) with
`BENCH_CHATBOT=DIR .venv/bin/python bench/ratelimits.py`, DIR holding only a `chatbot`
link to that checkout's package (the fakes stay this checkout's).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
if os.environ.get("BENCH_CHATBOT"):  # the code under measurement from another checkout
    sys.path.insert(0, os.environ["BENCH_CHATBOT"])

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from chatbot.slack.server import HttpServer, asgi_app  # noqa: E402
from chatbot.wiring import build  # noqa: E402
from tests.fakeslack import BOT_USER_ID, FakeSlack  # noqa: E402
from tests.slackrequests import event_body, post, signed_headers  # noqa: E402
from tests.test_followups_http import settings_for  # noqa: E402

POST = "chat.postMessage"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=50, help="mentions and DMs from the flooding user, each")
    args = parser.parse_args()
    with FakeSlack() as fake:
        fake.rate_limit(POST, every=1.0, retry_after=2)
        bot = build(settings_for(fake))
        server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
        url = f"http://127.0.0.1:{server.port}/slack/events"

        def send(inner: dict[str, object]) -> None:
            body = event_body(inner)
            post(url, body, {**signed_headers(body), "Content-Type": "application/json"})

        try:
            for n in range(args.flood):
                text = f"<@{BOT_USER_ID}> compile"
                send(
                    {
                        "type": "app_mention",
                        "channel": "C0FLOOD",
                        "user": "U0FLOOD",
                        "text": text,
                        "ts": f"1.{n:06d}",
                    }
                )
                send(
                    {
                        "type": "message",
                        "channel_type": "im",
                        "channel": "D0FLOOD",
                        "user": "U0FLOOD",
                        "text": "compile",
                        "ts": f"2.{n:06d}",
                    }
                )
            asked = time.monotonic()
            send(
                {
                    "type": "app_mention",
                    "channel": "C0QUIET",
                    "user": "U0QUIET",
                    "text": f"<@{BOT_USER_ID}> compile",
                    "ts": "3.000001",
                }
            )
            answered = fake.wait_for(
                POST, timeout=600, where=lambda c: c.params["channel"] == "C0QUIET" and c.status == 200
            )
            bot.wait_idle(timeout=600)
        finally:
            server.stop()
            bot.close()
        calls = fake.calls(POST)
        report = {
            "flood": f"{args.flood} mentions + {args.flood} DMs",
            "answers posted": sum(1 for c in calls if c.status == 200),
            "attempts": len(calls),
            "429s": sum(1 for c in calls if c.status == 429),
            "calls before Retry-After was over": len(fake.early_calls(POST)),
            "quiet question waited (s)": round(answered.at - asked, 2),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
