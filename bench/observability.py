"""What counting costs on the slash command's path: answers with metrics and usage rows against
the same answers without them, side by side in one run.

Baseline: `Answers` over the live index (what the command handler calls). Observed: the same
`Answers` with the wiring's `UsageRecorder` (`usage=`), writing to a SQLite file through its
one-thread writer (the row is written off the path; the metrics update is on it). Both with the
answer cache off (every command searches) and on (a repeated topic: the observed side records
the summary kept with the cached answer). Figures: per-command median and p99 in microseconds, and the ratio.

    .venv/bin/python bench/observability.py [--commands 2000] [--rounds 3]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

from chatbot.digest import Library  # noqa: E402
from chatbot.live import LiveIndex  # noqa: E402
from chatbot.observability import Metrics  # noqa: E402
from chatbot.slack.handlers.command import Answers, Request  # noqa: E402
from chatbot.store import SqlStore  # noqa: E402
from chatbot.usage import UsageStore  # noqa: E402
from chatbot.usage.recorder import UsageRecorder  # noqa: E402

QUERIES = [
    "compile",
    "投机解码",
    "kv offload",
    "flashinfr",
    "prefix cache",
    "quantum teleport",
    "DSv4",
    "多模态",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def timed(answers: Answers, commands: int) -> list[float]:
    """Microseconds per command, as CommandHandler runs it: cached() first, then answer()."""
    out = []
    for n in range(commands):
        request = Request("search", QUERIES[n % len(QUERIES)])
        started = time.perf_counter()
        if answers.cached(request) is None:
            answers.answer(request)
        out.append((time.perf_counter() - started) * 1e6)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    live = LiveIndex(Library.load(ROOT / "digests"))
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore.open(f"sqlite:///{Path(tmp) / 'bench.db'}")
        writer = ThreadPoolExecutor(max_workers=1)
        recorder = UsageRecorder(Metrics(), UsageStore(store.engine), writer=writer)
        print(
            f"{'answer cache':<14}{'baseline p50':>14}{'observed p50':>14}{'ratio':>8}{'baseline p99':>14}{'observed p99':>14}{'ratio':>8}"
        )
        for cache in (0, 512):
            base = Answers(index=live, latest=live.latest, today=live.newest, language="zh", cache_size=cache)
            observed = Answers(
                index=live,
                latest=live.latest,
                today=live.newest,
                language="zh",
                cache_size=cache,
                usage=recorder,
            )
            b: list[float] = []
            o: list[float] = []
            for _ in range(args.rounds):  # interleaved, so machine load hits both alike
                b += timed(base, args.commands)
                o += timed(observed, args.commands)
            p50 = (percentile(b, 0.5), percentile(o, 0.5))
            p99 = (percentile(b, 0.99), percentile(o, 0.99))
            print(
                f"{'on' if cache else 'off':<14}{p50[0]:>12.1f}µs{p50[1]:>12.1f}µs{p50[1] / p50[0]:>8.2f}"
                f"{p99[0]:>12.1f}µs{p99[1]:>12.1f}µs{p99[1] / p99[0]:>8.2f}"
            )
        writer.shutdown(wait=True)
        store.close()


if __name__ == "__main__":
    main()
