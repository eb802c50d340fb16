"""Topic search over the bundled digest: what a user types, what comes back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatbot.digest.library import Library
from chatbot.search.glossary import load_glossary
from chatbot.search.index import SearchIndex, SearchResult

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def index(seed_library: Library) -> SearchIndex:
    return SearchIndex.build(seed_library.entries)


def prs(result: SearchResult) -> list[int | None]:
    return [hit.entry.pr for hit in result.hits]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("compile", 53529),
        ("投机解码", 53574),
        ("prefix cache", 52912),
        ("flashinfr", 53574),
        ("complie", 53529),
        ("#54537", 54537),
        ("waizuichougou", 54537),
        ("图像处理器", 54501),
    ],
)
def test_examples_from_the_issue_rank_first(index: SearchIndex, query: str, first: int) -> None:
    assert prs(index.search(query))[0] == first


def test_matched_terms_are_shown_as_the_entry_writes_them(index: SearchIndex) -> None:
    [hit] = index.search("compile").hits
    assert hit.matched == ["torch.compile", "编译"]
    [hit] = index.search("DSv4").hits
    assert hit.matched == ["DSv4"]


def test_literal_term_ranks_above_a_synonym(index: SearchIndex) -> None:
    # 52912 writes 差分测试; three others are only tagged `testing`.
    assert prs(index.search("差分测试"))[0] == 52912


def test_nothing_real_means_no_hits_and_topic_suggestions(index: SearchIndex) -> None:
    result = index.search("lora")
    assert result.hits == [] and result.total == 0
    topics = [label for label, _ in index.topics()]
    assert result.suggestions and set(result.suggestions) <= set(topics)


@pytest.mark.parametrize("query", ["fix", "PR", "vllm", "修复", "的", "the", "fix the vllm PR", "修复的问题"])
def test_generic_words_never_match_alone(index: SearchIndex, query: str) -> None:
    assert index.search(query).hits == []


def test_generic_words_refine_a_real_query(index: SearchIndex) -> None:
    assert prs(index.search("fix timeout"))[0] == 52912


def test_offset_pages_through_all_hits(index: SearchIndex) -> None:
    everything = index.search("multimodal", limit=10)
    assert everything.total == 3
    pages = [index.search("multimodal", limit=1, offset=i) for i in range(3)]
    assert [prs(p)[0] for p in pages] == prs(everything)
    assert all(p.total == 3 for p in pages)
    assert index.search("multimodal", limit=1, offset=3).hits == []


def test_topics_are_concepts_with_entry_counts(index: SearchIndex) -> None:
    topics = dict(index.topics())
    assert topics["multimodal"] == 3
    assert topics["torch.compile"] == 1
    assert topics["speculative decoding"] == 1
    assert "bugfix" not in topics  # a generic tag is not a topic
    assert "LoRA" not in topics


def test_curator_glossary_reaches_search(tmp_path: Path, seed_library: Library) -> None:
    (tmp_path / "glossary.yaml").write_text(
        "concepts:\n  - {id: sm120, en: [team lab box]}\n", encoding="utf-8"
    )
    index = SearchIndex.build(seed_library.entries, load_glossary(tmp_path))
    assert prs(index.search("team lab box")) == [53574]


def test_empty_library_answers_with_nothing(seed_library: Library) -> None:
    index = SearchIndex.build([])
    assert index.search("compile") == SearchResult("compile", [], 0, [])
    assert index.topics() == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(
        alphabet=st.one_of(
            st.characters(), st.sampled_from(list("编译投机解码 #_.-/:@PDSMkvcompile0123456789"))
        ),
        max_size=80,
    ),
    limit=st.integers(min_value=-2, max_value=20),
    offset=st.integers(min_value=-2, max_value=20),
)
def test_any_query_returns_a_well_formed_result(
    index: SearchIndex, query: str, limit: int, offset: int
) -> None:
    result = index.search(query, limit=limit, offset=offset)
    assert result.query == query
    assert len(result.hits) <= max(limit, 0)
    assert result.total >= len(result.hits)
    scores = [hit.score for hit in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(hit.score > 0 and hit.matched for hit in result.hits)
    assert all(isinstance(term, str) and term for hit in result.hits for term in hit.matched)
    if result.total == 0:
        assert result.suggestions


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DIGEST_DIR"))}
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
        timeout=60,
    )


def test_query_json_is_a_ranked_array() -> None:
    done = run_cli("query", "compile", "--json")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["pr"] == 53529 and row["url"].endswith("/pull/53529")
    assert set(row) == {"id", "title", "pr", "url", "score", "matched"}
    assert row["matched"] == ["torch.compile", "编译"]


def test_query_json_is_empty_list_when_nothing_matches() -> None:
    done = run_cli("query", "how", "to", "cook", "rice", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_query_text_says_no_match_and_what_to_try() -> None:
    done = run_cli("query", "lora")
    assert done.stdout.startswith("no match for 'lora', try: ")


def test_query_limit_caps_the_list() -> None:
    done = run_cli("query", "multimodal", "--json", "--limit", "2")
    assert [row["pr"] for row in json.loads(done.stdout)] == [54537, 53529]


def test_topics_json_lists_concepts_with_counts() -> None:
    done = run_cli("topics", "--json")
    rows = json.loads(done.stdout)
    assert {"topic": "multimodal", "entries": 3} in rows


def test_query_starts_without_slack_sqlalchemy_or_scheduler() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from chatbot.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['query', 'compile', '--json'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'slack_bolt', 'slack_sdk', 'sqlalchemy', 'apscheduler', 'alembic', 'psycopg'})\n"
        "print(heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_an_index_comes_back_from_pickle_with_the_same_answers(index: SearchIndex) -> None:
    """`serve` keeps the built index in a snapshot (pickle): the packed postings, the interned
    keys and the glossary's match caches must survive it, and answer exactly as before."""
    import pickle

    index.search("KV 缓存 spec decode")  # the glossary's caches hold matches now
    restored = pickle.loads(pickle.dumps(index))
    for query in ["compile", "投机解码", "KV 缓存 spec decode", "flashinfr", "#54537", "PD 分离"]:
        ours, theirs = index.search(query, limit=10), restored.search(query, limit=10)
        assert [(h.entry.id, h.score, h.matched) for h in theirs.hits] == [
            (h.entry.id, h.score, h.matched) for h in ours.hits
        ]
        assert theirs.total == ours.total
    assert restored.topics() == index.topics()
    # How shown entries write their concepts is kept for later answers, never in a snapshot.
    assert index._written_memo and pickle.loads(pickle.dumps(index))._written_memo is None


def test_display_terms_do_not_depend_on_what_was_shown_before(seed_library: Library) -> None:
    """Hits show how the entry writes the asked concept whether or not an earlier answer
    showed the entry (the index keeps each shown entry's writings)."""
    queries = ["compile", "投机解码", "KV 缓存 spec decode", "prefix cache", "CUDA graph", "compile 编译"]
    warm = SearchIndex.build(seed_library.entries)
    for query in queries:
        warm.search(query, limit=10)
    for query in queries:
        fresh = SearchIndex.build(seed_library.entries)
        expected = [(h.entry.id, h.matched) for h in fresh.search(query, limit=10).hits]
        assert [(h.entry.id, h.matched) for h in warm.search(query, limit=10).hits] == expected


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.sampled_from([0.5, 1.0, 1.25, 2.0, 3.5]), min_size=1, max_size=40),
    count=st.integers(min_value=1, max_value=100),
)
def test_a_page_is_ordered_the_same_in_python_and_in_numpy(scores: list[float], count: int) -> None:
    """`_best` sorts a few matches in Python and many with numpy: the same page, ties by entry."""
    import numpy as np

    from chatbot.search import index as search_index

    found = np.arange(len(scores), dtype=np.intp) * 3
    values = np.array(scores, dtype=np.float64)
    expected = sorted(zip(scores, found.tolist(), strict=True), key=lambda p: (-p[0], p[1]))[:count]
    assert search_index._best(found, values, count) == expected
    limit = search_index._SORTED_IN_PYTHON
    try:
        search_index._SORTED_IN_PYTHON = 0  # the numpy path for every size
        assert search_index._best(found, values, count) == expected
    finally:
        search_index._SORTED_IN_PYTHON = limit


def test_outermost_keeps_only_matches_no_longer_one_contains() -> None:
    from chatbot.search.glossary import ConceptMatch
    from chatbot.search.query import outermost

    matches = [
        ConceptMatch("spec", "speculative decoding", 0, 2, "speculative decoding"),
        ConceptMatch("decode", "decoding", 1, 2, "decoding"),
        ConceptMatch("decode2", "decoding", 1, 2, "decoding"),
        ConceptMatch("kv", "kv", 3, 4, "kv"),
        ConceptMatch("kv2", "kv", 3, 4, "kv"),
    ]
    assert [m.concept for m in outermost(matches)] == ["spec", "kv", "kv2"]
