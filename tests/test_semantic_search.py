"""Optional semantic search through the model server's /v1/embeddings (tests/fakeopenai.py on
loopback): it rescues a query the lexical search cannot answer, keeps the lexical order where there
is one, stays silent below the similarity floor, caches vectors in the store by content hash, and
a failing or slow server never breaks or holds up a search."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from chatbot.builders import build_semantic
from chatbot.digest import Library
from chatbot.live import LiveIndex
from chatbot.llm import CircuitBreaker, EmbeddingsClient
from chatbot.search import SearchIndex
from chatbot.search.semantic import SemanticIndex, SemanticSearch
from chatbot.settings import load_settings
from chatbot.store import SqlStore, VectorStore
from tests.cliquery import query_json
from tests.fakeopenai import FakeModel, Reply

VOCAB = Path(__file__).parent / "digests-vocab"
SLEEP, PRIORITY = 11743, 19057
MEANINGS = (("sleep", "hibernate", "休眠"), ("priority", "jump the line"))


def by_meaning(text: str) -> list[float]:
    """A vector per meaning the text has (none: the zero vector, similar to nothing)."""
    lowered = text.casefold()
    return [1.0 if any(word in lowered for word in words) else 0.0 for words in MEANINGS]


@pytest.fixture
def model() -> FakeModel:
    with FakeModel(embed=by_meaning) as fake:
        yield fake


@pytest.fixture
def store(tmp_path: Path) -> VectorStore:
    return VectorStore(SqlStore.open(f"sqlite:///{tmp_path / 'store.db'}").engine)


@pytest.fixture
def index() -> SearchIndex:
    return SearchIndex.build(Library.load(VOCAB).entries)


def semantic_search(
    index: SearchIndex, model: FakeModel, store: VectorStore, **kwargs: object
) -> SemanticSearch:
    client = EmbeddingsClient(model.base_url, "fake-embed", timeout=kwargs.pop("timeout", 2.0), **kwargs)  # type: ignore[arg-type]
    semantic = SemanticIndex(client, store)
    assert semantic.prepare(index.entries)
    return SemanticSearch(index, semantic)


def prs(search: SearchIndex | SemanticSearch, query: str) -> list[int | None]:
    return [hit.entry.pr for hit in search.search(query, limit=3).hits]


def test_vectors_rescue_a_query_the_words_cannot_answer(
    index: SearchIndex, model: FakeModel, store: VectorStore
) -> None:
    assert prs(index, "hibernate") == []
    assert prs(semantic_search(index, model, store), "hibernate") == [SLEEP]


def test_the_lexical_order_stays_and_nothing_similar_stays_silent(
    index: SearchIndex, model: FakeModel, store: VectorStore
) -> None:
    search = semantic_search(index, model, store)
    assert prs(search, "sleep mode")[:1] == [SLEEP]
    assert prs(search, "priority scheduling")[:1] == [PRIORITY]
    assert prs(search, "terraform state lock") == []  # below the floor: the honest no-match


def test_vectors_are_kept_by_content_hash_and_not_asked_for_again(
    index: SearchIndex, model: FakeModel, store: VectorStore
) -> None:
    semantic_search(index, model, store)
    asked = len(model.requests)
    assert sum(len(r["input"]) for r in model.requests) == len(index.entries)
    semantic_search(index, model, store)  # a restart: every vector comes from the store
    assert len(model.requests) == asked


def test_a_failing_server_leaves_the_lexical_answer_and_opens_the_breaker(
    index: SearchIndex, model: FakeModel, store: VectorStore
) -> None:
    search = semantic_search(index, model, store, breaker=CircuitBreaker(failures=2, cooldown=600))
    before = len(model.requests)
    model.script(Reply(status=500), Reply(status=500))
    assert prs(search, "sleep mode")[:1] == [SLEEP]
    assert prs(search, "hibernate") == []  # no vector, no rescue: nothing breaks
    assert prs(search, "hibernate the engine") in ([], [SLEEP])
    assert len(model.requests) == before + 2  # the breaker is open: no third call


def test_a_slow_server_costs_a_search_at_most_the_timeout(
    index: SearchIndex, model: FakeModel, store: VectorStore
) -> None:
    search = semantic_search(index, model, store, timeout=0.3)
    model.script(Reply(hold=True))
    started = time.monotonic()
    assert prs(search, "sleep mode")[:1] == [SLEEP]
    assert time.monotonic() - started < 1.5
    model.release()


def test_serve_embeds_in_the_background_and_then_rescues(model: FakeModel, store: VectorStore) -> None:
    client = EmbeddingsClient(model.base_url, "fake-embed", timeout=2.0)
    live = LiveIndex(Library(VOCAB), semantic=SemanticIndex(client, store))
    assert live.semantic is not None and live.semantic.prepared.wait(10)
    assert [hit.entry.pr for hit in live.search("hibernate").hits] == [SLEEP]


def test_off_without_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name in ("LLM_BASE_URL", "EMBEDDINGS_MODEL", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert build_semantic(load_settings(), None) is None
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert build_semantic(load_settings(), None) is None
    monkeypatch.setenv("EMBEDDINGS_MODEL", "bge-m3")
    assert build_semantic(load_settings(), None) is not None


def test_the_command_line_is_rescued_through_the_store(tmp_path: Path, model: FakeModel) -> None:
    env = {
        **os.environ,
        "DIGEST_DIR": str(VOCAB),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}",
        "LLM_BASE_URL": model.base_url,
        "EMBEDDINGS_MODEL": "fake-embed",
    }
    for _ in range(2):  # the second run reads every entry's vector from the store
        assert [hit["pr"] for hit in query_json("hibernate", env)] == [SLEEP]
    assert sum(len(r["input"]) for r in model.requests) == len(Library.load(VOCAB).entries) + 2


def test_the_store_keeps_vectors_by_model_and_hash_and_a_second_writer_changes_nothing(db_url: str) -> None:
    store = SqlStore.open(db_url)
    try:
        vectors = VectorStore(store.engine)
        vectors.save_vectors("m1", {"a" * 64: [0.5, -1.0, 2.0], "b" * 64: [1.0, 0.0, 0.25]})
        vectors.save_vectors("m1", {"a" * 64: [9.0, 9.0, 9.0]})  # another replica, same entry: first stays
        assert vectors.vectors("m1", ["a" * 64, "b" * 64, "c" * 64]) == {
            "a" * 64: [0.5, -1.0, 2.0],
            "b" * 64: [1.0, 0.0, 0.25],
        }
        assert vectors.vectors("m2", ["a" * 64]) == {}  # another model embeds again
    finally:
        store.close()
