"""Search quality and warm latency: our index vs SQLite FTS5 (trigram) vs rapidfuzz.

What a user waits for at scale (parsing included, first-time queries, peak RSS) is measured by
`bench/scale.py`; this bench builds from ready `Entry` objects and pools warm repeats, so its
build time and latencies are the index's alone, and its MRR@3 compares ranking quality.

    .venv/bin/python bench/search.py [--entries 10000] [--cold-runs 10]
    .venv/bin/python bench/search.py --pools [--misses] [--no-sealed] [--ours-only]

`--pools` prints quality only, per set: the bundled digest with tests/relevance_queries.yaml and
every set of eval/training and eval/sealed (eval/README.md) with its queries.yaml — MRR@3 on the
non-paraphrase queries, MRR@3 on the paraphrases, and how many off-topic queries got an answer, for
our index, SQLite FTS5 and rapidfuzz on the same entries. Sealed sets print these figures only,
never a query; `--misses` lists the queries ours misses, for the bundled digest and training sets.

The corpus is synthetic and deterministic (seeded): 10,000 entries built from the bundled
digest's sentences, titles and identifiers and from glossary terms in both languages. Printed:
build time, p50/p99 query latency with ratios against our index, the index's memory
(tracemalloc), MRR@3 of each method on tests/relevance_queries.yaml over the real digest, and
the wall time of a cold `vllm-digest query compile`.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rapidfuzz import fuzz, process

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import corpus_glossary  # noqa: E402
from chatbot.digest import (  # noqa: E402
    Entry,
    Library,
    entry_id,
    pull_url,
)
from chatbot.heap import build_long_lived  # noqa: E402
from chatbot.search import (  # noqa: E402
    Glossary,
    SearchIndex,
)

REPO = "vllm-project/vllm"


def synthetic_corpus(seed_entries: Sequence[Entry], glossary: Glossary, size: int) -> list[Entry]:
    """Entries that look like the seed: Chinese notes with code names, English tags, PR refs."""
    rng = random.Random(20260831)
    sentences = [s for e in seed_entries for s in re.split(r"(?<=[。；])", e.note) if s.strip()]
    title_words = [w for e in seed_entries for w in re.split(r"[\s，]+", e.title) if w]
    identifiers = sorted({i for e in seed_entries for i in e.identifiers})
    concepts = list(corpus_glossary().concepts.values())  # the corpus earlier figures were measured on
    people = sorted(
        {e.author for e in seed_entries if e.author} | {p for e in seed_entries for p in e.people}
    )
    entries: list[Entry] = []
    for n in range(size):
        picked = rng.sample(concepts, 3)
        zh_terms = [t for c in picked for t in c.zh] or ["修复"]
        en_terms = [t for c in picked for t in c.en] or ["refactor"]
        title = f"{rng.choice(['修复', '新增', '重构', '优化'])} {rng.choice(en_terms)} {rng.choice(zh_terms)}{rng.choice(title_words)} {n}"
        note = (
            "值得精读。"
            + "".join(rng.sample(sentences, 3))
            + f"涉及 {rng.choice(en_terms)} 与 {rng.choice(zh_terms)}。"
        )
        pr = 60000 + n
        # Drawn as when the why-line and focus points were given here (now an entry reads them from
        # its note), so the corpus stays the one earlier figures were measured on.
        rng.choice(sentences), rng.sample(sentences, 2)
        entries.append(
            Entry(
                id=entry_id(REPO, title),
                repo=REPO,
                digest="bench",
                position=n + 1,
                title=title,
                note=note,
                identifiers=rng.sample(identifiers, 2),
                people=[rng.choice(people)],
                pr=pr,
                url=pull_url(REPO, pr),
                author=rng.choice(people),
                tags=[c.display for c in picked],
                source=f"bench:{n + 1}",
            )
        )
    return entries


def document(entry: Entry) -> str:
    return " ".join([entry.title, *entry.tags, entry.github_title or "", *entry.identifiers, entry.note])


class Fts5:
    """SQLite FTS5 with the trigram tokenizer, ranked by bm25: the embedded baseline."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE doc USING fts5(title, tags, note, tokenize='trigram')")
        self.db.executemany(
            "INSERT INTO doc(rowid, title, tags, note) VALUES (?, ?, ?, ?)",
            [(i, e.title, " ".join(e.tags), document(e)) for i, e in enumerate(entries)],
        )
        self.db.commit()

    def search(self, query: str, limit: int = 5) -> list[int]:
        words = [w for w in re.split(r"\s+", query) if len(w) >= 3]
        if not words:
            return []
        expression = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM doc WHERE doc MATCH ? ORDER BY bm25(doc, 3.0, 2.0, 1.0) LIMIT ?",
            (expression, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]


class Fuzzy:
    """rapidfuzz `process.extract` over each entry's text: the typo-tolerant baseline."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.docs = [document(e).casefold() for e in entries]

    def search(self, query: str, limit: int = 5) -> list[int]:
        found = process.extract(
            query.casefold(), self.docs, scorer=fuzz.partial_ratio, limit=limit, score_cutoff=60
        )
        return [int(i) for _, _, i in found]


def ours(index: SearchIndex) -> Callable[[str, int], list[int]]:
    position = {e.id: i for i, e in enumerate(index.entries)}

    def search(query: str, limit: int = 5) -> list[int]:
        return [position[h.entry.id] for h in index.search(query, limit=limit).hits]

    return search


def latencies(search: Callable[[str, int], list[int]], queries: Sequence[str], rounds: int) -> list[float]:
    times: list[float] = []
    for _ in range(rounds):
        for query in queries:
            start = time.perf_counter()
            search(query, 5)
            times.append((time.perf_counter() - start) * 1000)
    return times


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def mrr_at_3(
    search: Callable[[str, int], list[int]], entries: Sequence[Entry], queries: list[dict[str, Any]]
) -> tuple[float, int]:
    """MRR@3 on topical queries and how many off-topic queries came back empty."""
    ranks: list[float] = []
    empty = 0
    for q in queries:
        found = [entries[i].pr for i in search(str(q["query"]), 3)]
        if not q["gold"]:
            empty += not found
            continue
        ranks.append(next((1.0 / r for r, pr in enumerate(found, 1) if q["gold"].get(pr, 0) >= 2), 0.0))
    return sum(ranks) / len(ranks), empty


@dataclass(frozen=True)
class QuerySet:
    """One pool's set: its digest folder(s) and graded queries."""

    name: str
    pool: str  # bundled, training or sealed
    folders: tuple[Path, ...]
    queries: list[dict[str, Any]]


def query_sets(pools: Sequence[str] = ("training", "sealed")) -> list[QuerySet]:
    """The bundled digest with the relevance set, then every evaluation set of the given pools."""
    relevance = yaml.safe_load((ROOT / "tests" / "relevance_queries.yaml").read_text(encoding="utf-8"))
    sets = [QuerySet("relevance", "bundled", (ROOT / "digests",), relevance["queries"])]
    for pool in pools:
        for folder in sorted((ROOT / "eval" / pool).glob("*/queries.yaml")):
            queries = yaml.safe_load(folder.read_text(encoding="utf-8"))["queries"]
            sets.append(QuerySet(folder.parent.name, pool, (folder.parent / "digest",), queries))
    return sets


def _off_topic(query: dict[str, Any]) -> bool:
    return not query["gold"]


def _reciprocal_rank(found: list[int], gold: dict[int, int]) -> float:
    return next((1.0 / r for r, pr in enumerate(found, 1) if gold.get(pr, 0) >= 2), 0.0)


def pool_figures(
    search: Callable[[str, int], list[int]], entries: Sequence[Entry], queries: list[dict[str, Any]]
) -> tuple[float, float, int, int, list[str]]:
    """MRR@3 (non-paraphrase), MRR@3 (paraphrase), off-topic answered, off-topic asked, misses."""
    plain: list[float] = []
    paraphrase: list[float] = []
    answered = asked = 0
    misses: list[str] = []
    for q in queries:
        found = [entries[i].pr for i in search(str(q["query"]), 3)]
        if _off_topic(q):
            asked += 1
            answered += bool(found)
            if found:
                misses.append(f"off-topic answered: {q['query']!r} -> {found}")
            continue
        rank = _reciprocal_rank(found, {int(k): int(v) for k, v in q["gold"].items()})
        (paraphrase if q.get("kind") == "paraphrase" else plain).append(rank)
        if rank < 1.0:
            misses.append(f"{q.get('kind', '?')}: {q['query']!r} -> {found} (gold {q['gold']})")
    return _mean(plain), _mean(paraphrase), answered, asked, misses


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def report_pools(show_misses: bool, pools: Sequence[str], ours_only: bool) -> None:
    """Per set and method: MRR@3 apart for paraphrases, off-topic queries answered."""
    glossary = Glossary.load()
    print(
        f"{'set':<22} {'pool':<9} {'method':<10} {'MRR@3':>6} {'para MRR@3':>11} {'off-topic answered':>19}"
    )
    for found in query_sets(pools):
        entries = [e for folder in found.folders for e in Library.load(folder).entries]
        methods: dict[str, Callable[[str, int], list[int]]] = {
            "ours": ours(SearchIndex.build(entries, glossary))
        }
        if not ours_only:
            methods |= {"fts5": Fts5(entries).search, "rapidfuzz": Fuzzy(entries).search}
        for name, search in methods.items():
            mrr, para, answered, asked, misses = pool_figures(search, entries, found.queries)
            print(
                f"{found.name:<22} {found.pool:<9} {name:<10} {mrr:>6.3f} {para:>11.3f} {f'{answered}/{asked}':>19}"
            )
            if show_misses and name == "ours" and found.pool != "sealed":  # sealed: figures only
                for line in misses:
                    print(f"    {line}")


def cold_query(runs: int) -> list[float]:
    exe = Path(sys.executable).with_name("vllm-digest")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "chatbot.cli"]
    walls: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([*command, "query", "compile"], check=True, capture_output=True, cwd=ROOT)
        walls.append((time.perf_counter() - start) * 1000)
    return walls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=10)
    parser.add_argument("--pools", action="store_true", help="quality per evaluation set only")
    parser.add_argument("--misses", action="store_true", help="with --pools: our misses (not sealed)")
    parser.add_argument("--no-sealed", action="store_true", help="with --pools: training sets only")
    parser.add_argument("--ours-only", action="store_true", help="with --pools: our index only")
    args = parser.parse_args()
    if args.pools:
        pools = ("training",) if args.no_sealed else ("training", "sealed")
        report_pools(args.misses, pools, args.ours_only)
        return

    seed = Library.load(ROOT / "digests").entries
    relevance = yaml.safe_load((ROOT / "tests" / "relevance_queries.yaml").read_text(encoding="utf-8"))[
        "queries"
    ]
    queries = [str(q["query"]) for q in relevance]

    start = time.perf_counter()
    glossary = Glossary.load()
    glossary_ms = (time.perf_counter() - start) * 1000
    corpus = synthetic_corpus(seed, glossary, args.entries)

    start, cpu = time.perf_counter(), time.process_time()
    index = build_long_lived(lambda: SearchIndex.build(corpus, glossary))  # as serve and query do
    build = {"ours": time.perf_counter() - start}
    build_cpu = time.process_time() - cpu
    start = time.perf_counter()
    fts = Fts5(corpus)
    build["fts5"] = time.perf_counter() - start
    start = time.perf_counter()
    fuzzy = Fuzzy(corpus)
    build["rapidfuzz"] = time.perf_counter() - start

    methods: dict[str, Callable[[str, int], list[int]]] = {
        "ours": ours(index),
        "fts5": fts.search,
        "rapidfuzz": fuzzy.search,
    }
    timing = {
        name: latencies(fn, queries, args.rounds if name != "rapidfuzz" else 1)
        for name, fn in methods.items()
    }

    seed_methods: dict[str, Callable[[str, int], list[int]]] = {
        "ours": ours(SearchIndex.build(seed, glossary)),
        "fts5": Fts5(seed).search,
        "rapidfuzz": Fuzzy(seed).search,
    }
    quality = {name: mrr_at_3(fn, seed, relevance) for name, fn in seed_methods.items()}
    off_topic = sum(1 for q in relevance if not q["gold"])

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    measured = SearchIndex.build(corpus, glossary)
    memory_mb = (tracemalloc.get_traced_memory()[0] - before) / 2**20
    tracemalloc.stop()
    del measured

    p50 = {name: statistics.median(t) for name, t in timing.items()}
    p99 = {name: percentile(t, 99) for name, t in timing.items()}
    print(
        f"corpus: {len(corpus)} synthetic entries, {len(queries)} queries x {args.rounds} rounds; glossary {len(glossary)} concepts loaded in {glossary_ms:.0f} ms"
    )
    print(
        f"{'method':<10} {'build s':>8} {'p50 ms':>8} {'p99 ms':>8} {'p50 ×ours':>10} {'p99 ×ours':>10} {'MRR@3 seed':>11} {'off-topic empty':>16}"
    )
    for name in methods:
        mrr, empty = quality[name]
        print(
            f"{name:<10} {build[name]:>8.2f} {p50[name]:>8.3f} {p99[name]:>8.3f} "
            f"{p50[name] / p50['ours']:>10.1f} {p99[name] / p99['ours']:>10.1f} {mrr:>11.3f} {f'{empty}/{off_topic}':>16}"
        )
    print(
        f"our build: {build['ours']:.2f} s wall, {build_cpu:.2f} s CPU; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"index memory (tracemalloc, held after build): {memory_mb:.1f} MiB for {len(corpus)} entries")
    if args.cold_runs:
        walls = cold_query(args.cold_runs)
        print(
            f"cold `vllm-digest query compile` ({args.cold_runs} runs): "
            f"median {statistics.median(walls):.0f} ms, max {max(walls):.0f} ms"
        )
    goals = [
        ("p99 < 5 ms at 10k", p99["ours"] < 5),
        ("build < 2 s", build["ours"] < 2),
    ]
    print("goals: " + ", ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in goals))


if __name__ == "__main__":
    main()
