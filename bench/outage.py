"""Questions asked during a PostgreSQL outage: how many are answered after it, how fast, how many twice.

A private PostgreSQL (tests/privatepg.py) under the served bot: the PR of the day is posted, the
server is stopped, `--questions` signed thread replies (and as many direct messages) arrive
during a `--outage`-second outage, the server is started again. Counted from the fake Slack:
answers (in the thread / the DM), people told "my database was unavailable", answers posted
twice, and the seconds from the server's restart to the last answer. `--code PATH` runs the bot
of another checkout (say `/work/main`) against the same scenario: the baseline.

    .venv/bin/python bench/outage.py [--questions 5] [--outage 15] [--code /work/main]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/ holds http.py: keep the folder off sys.path so `import http` is the stdlib's.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from tests.fakeslack import FakeSlack  # noqa: E402
from tests.privatepg import PrivatePostgres, postgres_binaries  # noqa: E402
from tests.slackrequests import SIGNING_SECRET, event_body, post  # noqa: E402

CHANNEL = "C0DAILY"
DAY = dt.date(2026, 11, 30)


def scenario(questions: int, outage: float, fake: FakeSlack, server: PrivatePostgres) -> dict[str, Any]:
    """Serve the bot (of whichever checkout is first on sys.path), run one outage, count."""
    from chatbot.settings import Settings
    from chatbot.slack.server import HttpServer, asgi_app
    from chatbot.store import SqlStore
    from chatbot.wiring import build

    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        slack_bot_token="xoxb-bench",
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=fake.api_url,
        digest_dir=ROOT / "digests",
        language="en",
        daily_channels=[CHANNEL],
    )
    store = SqlStore.open(server.url)
    bot = build(settings, store=store)
    http = HttpServer(asgi_app(bot.app, bot.health, ready=bot.readiness), host="127.0.0.1", port=0).start()
    url = f"http://127.0.0.1:{http.port}/slack/events"
    try:
        assert bot.daily is not None
        bot.daily.run(CHANNEL, DAY)
        threads = [f"1700000000.{n:06d}" for n in range(questions)]  # one of the bot's threads each
        for thread in threads:
            bot.threads.register(CHANNEL, thread, "51badd0821")
        server.stop()
        stopped = time.monotonic()
        for n, thread in enumerate(threads):
            reply = {"type": "message", "channel": CHANNEL, "channel_type": "channel", "user": f"U0{n}"}
            reply |= {"text": "what should I focus on?", "ts": f"1800000000.{n:06d}", "thread_ts": thread}
            post(url, event_body(reply), timeout=10)
            dm = {"type": "message", "channel": f"D0{n}", "channel_type": "im", "user": f"U0{n}"}
            post(url, event_body({**dm, "text": "compile", "ts": f"1800000001.{n:06d}"}), timeout=10)
        threading.Event().wait(max(0.0, outage - (time.monotonic() - stopped)))  # the outage's length
        server.start()
        back = time.monotonic()
        places = {(CHANNEL, thread) for thread in threads} | {(f"D0{n}", None) for n in range(questions)}

        def said() -> list[tuple[str, str | None, str]]:
            return [
                (str(c.params["channel"]), c.params.get("thread_ts"), str(c.params.get("text")))
                for c in fake.calls("chat.postMessage")
                if c.status == 200 and (str(c.params["channel"]), c.params.get("thread_ts")) in places
            ]

        seconds: float | None = None
        try:
            fake.wait_for("chat.postMessage", count=len(places) + 1, timeout=60)  # the daily post + these
            seconds = round(time.monotonic() - back, 2)
        except AssertionError:
            pass  # not all answered within a minute: counted below
        bot.wait_idle(10)
        messages = said()
        told = sum("unavailable" in text for _, _, text in messages)
        per_place = [sum((c, t) == place for c, t, _ in messages) for place in places]
        return {
            "asked": len(places),
            "answered": sum(count > 0 for count in per_place) - told,
            "told": told,
            "posted_twice": sum(count > 1 for count in per_place),
            "seconds_after_restart": seconds,
        }
    finally:
        http.stop()
        bot.close()
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--outage", type=float, default=15.0)
    parser.add_argument("--code", type=Path, help="another checkout whose bot to run (the baseline)")
    args = parser.parse_args()
    binaries = postgres_binaries()
    if binaries is None:
        sys.exit("bench/outage.py: no PostgreSQL binaries (initdb, pg_ctl)")
    if args.code:
        sys.path.insert(0, str(args.code.resolve()))
    server = PrivatePostgres(binaries)
    try:
        with FakeSlack() as fake:
            figures = scenario(args.questions, args.outage, fake, server)
    finally:
        server.close()
    print(json.dumps({"code": str(args.code or ROOT), "outage_s": args.outage, **figures}))


if __name__ == "__main__":
    main()
