"""Follow-up latency over loopback: signed thread replies in, the answer's chat.postMessage out.

Two configurations of the same served app, side by side: dedup and thread registry in a SQLite
file (what `serve` runs with a store: four short transactions per answer — registry lookup,
event mark, message mark) against the in-memory registry and dedup (baseline: the answer work
alone). For each reply: the HTTP ack time, and the time from sending the event until the fake
Slack server received the answer. Replies are sent one at a time (latency, not throughput).

    .venv/bin/python bench/followups.py [--replies 200] [--rounds 3]
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
import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import httpx  # noqa: E402

from chatbot.settings import Settings  # noqa: E402
from chatbot.slack.server import HttpServer, asgi_app  # noqa: E402
from chatbot.store import (  # noqa: E402
    InMemoryThreadRegistry,
    SqlStore,
)
from chatbot.wiring import build  # noqa: E402
from tests.fakeslack import FakeSlack  # noqa: E402
from tests.slackrequests import SIGNING_SECRET, signed_headers  # noqa: E402

CHANNEL = "C0BENCH"
PARENT = "1700000000.000100"
QUESTIONS = ["重点看什么？", "有什么风险？", "怎么测的？", "who should read this?", "how big is the fix?"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def run(kind: str, replies: int, offset: int, db: Path) -> tuple[list[float], list[float]]:
    """(ack ms, answer ms) per reply for one configuration."""
    with FakeSlack() as fake:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            slack_bot_token="xoxb-bench",
            slack_signing_secret=SIGNING_SECRET,
            slack_api_url=fake.api_url,
            digest_dir=ROOT / "digests",
        )
        store = SqlStore.open(f"sqlite:///{db}") if kind == "sqlite" else None
        threads = store or InMemoryThreadRegistry()
        bot = build(settings, threads=threads, store=store)
        entry = bot.library.entries[0]
        threads.register(CHANNEL, PARENT, entry.id)
        server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
        url = f"http://127.0.0.1:{server.port}/slack/events"
        acks: list[float] = []
        answers: list[float] = []
        try:
            with httpx.Client() as client:
                for n in range(replies):
                    ts = f"1800000000.{offset + n:06d}"
                    event = {"type": "message", "channel": CHANNEL, "channel_type": "channel", "user": "U0A"}
                    event |= {"text": QUESTIONS[n % len(QUESTIONS)], "ts": ts, "thread_ts": PARENT}
                    body = json.dumps(
                        {
                            "type": "event_callback",
                            "team_id": "T0",
                            "event_id": f"Ev{kind}{ts}",
                            "event": event,
                        }
                    )
                    headers = {**signed_headers(body), "Content-Type": "application/json"}
                    start = time.perf_counter()
                    response = client.post(url, content=body.encode(), headers=headers)
                    acked = time.perf_counter()
                    assert response.status_code == 200
                    fake.wait_for("chat.postMessage", count=n + 1, timeout=10)
                    done = time.perf_counter()
                    acks.append((acked - start) * 1000)
                    answers.append((done - start) * 1000)
        finally:
            server.stop()
            bot.close()
            if store is not None:
                store.close()
        return acks, answers


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replies", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, tuple[list[float], list[float]]] = {"sqlite": ([], []), "in-memory": ([], [])}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            order = ["sqlite", "in-memory"] if round_ % 2 == 0 else ["in-memory", "sqlite"]
            for kind in order:
                acks, answers = run(kind, args.replies, round_ * args.replies, Path(tmp) / "bench.db")
                results[kind][0].extend(acks)
                results[kind][1].extend(answers)
    print(f"{args.rounds} rounds × {args.replies} thread replies, one at a time, loopback")
    print(f"{'metric':36}{'sqlite store':>14}{'in-memory':>12}{'ratio':>9}")
    for label, which in (("ack", 0), ("event → chat.postMessage", 1)):
        for name, q in (("p50", 0.5), ("p99", 0.99)):
            ours = percentile(results["sqlite"][which], q)
            base = percentile(results["in-memory"][which], q)
            print(f"{label + ' ' + name + ' (ms)':36}{ours:14.2f}{base:12.2f}{ours / base:8.2f}x")
    mean = statistics.mean(results["sqlite"][1])
    print(f"mean event → answer with the SQLite store: {mean:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
