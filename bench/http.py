"""Signed slash commands over loopback: our server against a bare Bolt app that only acks.

Both run on the same stack (uvicorn + Starlette, Bolt dispatch in the thread pool), each in its
own process; the load comes from this process: a thread pool of keep-alive HTTP clients sending
signed `/vllm-digest <topic>` commands. Prints p50/p99 latency and throughput side by side and
as ratios (ours/bare). Goals: p99 < 100 ms, throughput >= 80 % of the bare app's.

Also the server process's CPU time per request (Linux: /proc/<pid>/stat), which is what the
throughput ratio follows on a busy machine where wall-clock rates swing from round to round.

    .venv/bin/python bench/http.py [--requests 2000] [--concurrency 16] [--rounds 5] [--digests DIR]

`--digests` serves another digest folder (default: the repository's `digests/`), e.g. a bench
library of `bench/corpus.py`: a bigger library has more hits per topic, and their display
terms, rendering and JSON then weigh more than on the repository's few entries.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named http.py: keep its folder off sys.path so `import http.client` is the stdlib's.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import http.client  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import urlencode  # noqa: E402

from slack_sdk.signature import SignatureVerifier  # noqa: E402

SECRET = "bench-signing-secret"
TRIGGERS = itertools.count()


def serve(kind: str, api_url: str, ports: mp.Queue, digests: Path = ROOT / "digests") -> None:  # type: ignore[type-arg]
    """Child process: build the server of `kind` on a free port and serve until terminated."""
    from slack_bolt import Ack, App
    from slack_sdk import WebClient

    from chatbot.settings import Settings
    from chatbot.slack.server import HttpServer, asgi_app
    from chatbot.wiring import build

    if kind == "ours":
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            slack_bot_token="xoxb-bench",
            slack_signing_secret=SECRET,
            slack_api_url=api_url,
            digest_dir=digests,
        )
        app = build(settings).app
    else:
        app = App(
            client=WebClient(token="xoxb-bench", base_url=api_url),
            signing_secret=SECRET,
            process_before_response=True,
        )

        @app.command("/vllm-digest")
        def only_ack(ack: Ack) -> None:
            ack()

    server = HttpServer(asgi_app(app), host="127.0.0.1", port=0)
    ports.put(server.port)
    server.serve_forever()


def signed_request(text: str, response_url: str) -> tuple[bytes, dict[str, str]]:
    body = urlencode(
        {
            "command": "/vllm-digest",
            "text": text,
            "team_id": "T1",
            "channel_id": "C1",
            "user_id": "U1",
            "response_url": response_url,
            "trigger_id": f"t.{next(TRIGGERS)}",  # each command its own, as Slack does (replays are dropped)
        }
    )
    ts = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": str(signature),
    }
    return body.encode(), headers


def load(port: int, texts: Sequence[str], concurrency: int, response_url: str) -> tuple[list[float], float]:
    """Send one signed command per text from `concurrency` keep-alive clients; latencies and wall time."""
    prepared = [signed_request(text, response_url) for text in texts]
    per_client = [prepared[i::concurrency] for i in range(concurrency)]

    def client(batch: list[tuple[bytes, dict[str, str]]]) -> list[float]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        latencies = []
        for body, headers in batch:
            start = time.perf_counter()
            connection.request("POST", "/slack/events", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            latencies.append(time.perf_counter() - start)
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}")
        connection.close()
        return latencies

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(client, per_client))
    wall = time.perf_counter() - started
    return [lat for batch in results for lat in batch], wall


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (0 where /proc is missing)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_servers(
    api_url: str, kinds: Sequence[str], digests: Path = ROOT / "digests"
) -> dict[str, tuple[Any, int]]:
    ctx = mp.get_context("spawn")
    ports: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    servers = {}
    for kind in kinds:
        process = ctx.Process(target=serve, args=(kind, api_url, ports, digests), daemon=True)
        process.start()
        servers[kind] = (process, ports.get(timeout=120))
    return servers


def measure_rounds(
    fake: Any,
    rounds: int,
    requests: int,
    concurrency: int,
    kinds: Sequence[str] = ("bare", "ours"),
    digests: Path = ROOT / "digests",
) -> list[dict[str, dict[str, float]]]:
    """Per round and server: p50/p99/mean latency (ms) and throughput, every command text distinct
    (a topic never asked before in this run), so no answer cache does the work."""
    from bench.corpus import distinct_queries

    texts = iter(distinct_queries((rounds * len(kinds) + 1) * requests))
    servers = start_servers(fake.api_url, kinds, digests)
    results: list[dict[str, dict[str, float]]] = []
    try:
        for _, port in servers.values():  # warm up imports and code paths, with topics of their own
            load(port, [next(texts) for _ in range(50)], concurrency, fake.response_url("warmup"))
        order = list(servers)
        for number in range(rounds):
            results.append({})
            # Rotate the order so that no server always runs first (the machine drifts).
            for kind in order[number % len(order) :] + order[: number % len(order)]:
                batch = [next(texts) for _ in range(requests)]
                process, port = servers[kind]
                cpu = cpu_seconds(process.pid)
                latencies, wall = load(port, batch, concurrency, fake.response_url(kind))
                results[-1][kind] = {
                    "cpu_us": (cpu_seconds(process.pid) - cpu) / len(latencies) * 1e6,
                    "p50": percentile(latencies, 0.50) * 1000,
                    "p99": percentile(latencies, 0.99) * 1000,
                    "mean": statistics.fmean(latencies) * 1000,
                    "rps": len(latencies) / wall,
                }
    finally:
        for process, _ in servers.values():
            process.terminate()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5, help="alternate the servers this many times")
    parser.add_argument("--json", action="store_true", help="one JSON line of medians (for bench/scale.py)")
    parser.add_argument(
        "--digests", type=Path, default=ROOT / "digests", help="the digest folder ours serves"
    )
    args = parser.parse_args()

    from tests.fakeslack import FakeSlack

    with FakeSlack() as fake:
        rounds = measure_rounds(fake, args.rounds, args.requests, args.concurrency, digests=args.digests)
        late = len(fake.calls("response"))

    # Figures: medians over rounds; ratios: medians of the per-round ratios (same minute, same load).
    def median(kind: str, key: str) -> float:
        return statistics.median(r[kind][key] for r in rounds)

    def ratio(key: str) -> float:
        return statistics.median(
            r["ours"][key] / r["bare"][key] if r["bare"][key] else math.nan for r in rounds
        )

    if args.json:
        keys = ("p50", "p99", "mean", "rps", "cpu_us")
        summary = {kind: {k: median(kind, k) for k in keys} for kind in ("ours", "bare")}
        print(json.dumps({**summary, "ratio": {k: ratio(k) for k in keys}}))
        return 0
    print(
        f"{args.requests} signed slash commands × {args.rounds} rounds (medians), every text a topic not "
        f"asked before; {args.concurrency} concurrent keep-alive clients, loopback; ours serves {args.digests}"
    )
    print(f"{'':20}{'ours':>9}{'bare ack':>10}{'ours/bare':>11}")
    rows = (
        ("p50", "p50 (ms)"),
        ("p99", "p99 (ms)"),
        ("mean", "mean (ms)"),
        ("rps", "throughput (/s)"),
        ("cpu_us", "server CPU (µs/req)"),
    )
    for key, label in rows:
        print(f"{label:20}{median('ours', key):9.1f}{median('bare', key):10.1f}{ratio(key):11.2f}")
    print(f"late answers through response URLs: {late} (0: every answer went back in the ack)")
    ok = median("ours", "p99") < 100 and ratio("rps") >= 0.8
    print(f"goals (p99 < 100 ms, throughput >= 80 % of bare): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
