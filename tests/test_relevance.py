"""Ranking quality on the bundled digest: MRR@3 over a graded query set, off-topic queries empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from chatbot.digest.library import Library
from chatbot.search.index import SearchIndex

QUERIES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "relevance_queries.yaml").read_text(encoding="utf-8")
)["queries"]
TOPICAL = [q for q in QUERIES if q["gold"]]
OFF_TOPIC = [q for q in QUERIES if not q["gold"]]


@pytest.fixture(scope="module")
def index(seed_library: Library) -> SearchIndex:
    return SearchIndex.build(seed_library.entries)


def reciprocal_rank(index: SearchIndex, query: dict[str, Any]) -> float:
    hits = index.search(str(query["query"]), limit=3).hits
    for rank, hit in enumerate(hits, start=1):
        if query["gold"].get(hit.entry.pr, 0) >= 2:
            return 1.0 / rank
    return 0.0


def test_the_set_is_broad_enough() -> None:
    kinds = {q["kind"] for q in QUERIES}
    assert len(QUERIES) >= 40
    assert {"en", "zh", "mixed", "typo", "abbr", "ident", "off-topic"} <= kinds
    assert len(OFF_TOPIC) >= 10


def test_mrr_at_3_is_at_least_0_9(index: SearchIndex) -> None:
    ranks = {str(q["query"]): reciprocal_rank(index, q) for q in TOPICAL}
    mrr = sum(ranks.values()) / len(ranks)
    misses = {q: r for q, r in ranks.items() if r < 1.0}
    assert mrr >= 0.9, f"MRR@3 {mrr:.3f}; not first: {misses}"


@pytest.mark.parametrize("query", [str(q["query"]) for q in OFF_TOPIC])
def test_off_topic_query_returns_nothing_but_suggestions(index: SearchIndex, query: str) -> None:
    result = index.search(query)
    assert [h.entry.title for h in result.hits] == []
    assert result.total == 0
    assert result.suggestions
