"""vLLM's vocabulary in search: a concept named in either language finds notes written in the other,
a query describing what a feature does finds it, and near-domain questions (infrastructure,
databases, drivers) get the honest no-match. The month in tests/digests-vocab is written mostly in
English Markdown with Chinese mixed in, the bundled month in Chinese."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from chatbot.digest import Library
from chatbot.search import Glossary, SearchIndex
from chatbot.search.descriptions import DescriptionIndex
from chatbot.search.glossary import BUNDLED_VLLM
from chatbot.search.stopwords import STOPWORDS
from chatbot.search.tokens import tokenize
from tests.cliquery import query_json

TESTS = Path(__file__).parent
VOCAB = TESTS / "digests-vocab"
SOURCES = BUNDLED_VLLM.with_name("vllm_sources.yaml")


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    entries = [*Library.load(VOCAB).entries, *Library.load(TESTS.parent / "digests").entries]
    return SearchIndex.build(entries)


def prs(index: SearchIndex, query: str) -> list[int | None]:
    return [hit.entry.pr for hit in index.search(query, limit=3).hits]


def one_entry_index(folder: Path, text: str) -> SearchIndex:
    """The index of one digest file written to `folder` (`text`: the whole file)."""
    (folder / "vllm-digest.txt").write_text(text, encoding="utf-8")
    return SearchIndex.build(Library.load(folder).entries)


def test_the_vllm_vocabulary_loads_cleanly_and_says_where_each_concept_comes_from() -> None:
    glossary = Glossary.load()
    assert glossary.problems == []
    items = yaml.safe_load(BUNDLED_VLLM.read_text(encoding="utf-8"))["concepts"]
    assert all(item.get("source") or set(item) == {"id", "includes"} for item in items)
    sleep = glossary.concepts["sleep-mode"]
    assert "休眠模式" in sleep.zh and "enable_sleep_mode" in sleep.aliases
    assert "free GPU memory while idle" in sleep.describes


@pytest.mark.parametrize(
    ("query", "pr"),
    [
        ("休眠模式", 11743),  # a Chinese name, an English note
        ("sleep mode", 11743),
        ("--enable-sleep-mode", 11743),
        ("VLLM_SERVER_DEV_MODE", 11743),  # an environment variable of the feature
        ("优先级调度", 19057),
        ("请求优先级", 19057),
        ("专家负载均衡", 18343),
        ("KV 缓存量化", 20090),
        ("kv_cache_dtype", 20090),
        ("结构化输出", 16577),
        ("PD 分离", 17751),
        ("async scheduling", 19970),  # an English name, a Chinese note
        ("overlap scheduling", 19970),
    ],
)
def test_a_concept_named_in_one_language_finds_a_note_in_the_other(
    index: SearchIndex, query: str, pr: int
) -> None:
    assert prs(index, query)[:1] == [pr]


@pytest.mark.parametrize(
    ("query", "pr"),
    [
        ("give the GPU memory back while the engine is idle", 11743),
        ("unload the model from the gpu without restarting the server", 11743),
        ("let important requests jump the queue", 19057),
        ("force the output to follow a JSON schema", 16577),
        ("move experts between GPUs so no GPU gets too many tokens", 18343),
        ("让空闲时释放显存", 11743),
    ],
)
def test_a_description_of_what_a_feature_does_finds_it(index: SearchIndex, query: str, pr: int) -> None:
    assert prs(index, query)[:1] == [pr]


def test_a_description_names_its_concept_not_every_entry_sharing_its_words(index: SearchIndex) -> None:
    """`GPU memory` of a question describing sleep mode is not every entry on GPU memory."""
    assert prs(index, "give the GPU memory back while the engine is idle") == [11743]
    # and a named concept is not read as a description of another ("run without CUDA graphs")
    assert 20059 in prs(index, "CUDA graph")


@pytest.mark.parametrize(
    "query",
    [
        "Terraform state lock",
        "terraform gpu node pool",
        "MySQL index",
        "mysql slow query log",
        "数据库迁移",
        "数据库索引",
        "install CUDA driver",
        "nvidia driver install failed",
        "ubuntu 安装 cuda toolkit 驱动",
        "nginx reverse proxy",
        "nginx rate limiting",
        "redis cache eviction policy",
        "redis 主从切换",
        "k8s autoscaling",
        "kubernetes pod memory limit",
        "postgres connection pool exhausted",
        "docker compose 部署",
        "linux kernel panic",
        "prometheus node exporter disk alerts",  # one vLLM concept among a neighbouring stack's words
        "fine-tune llama with deepspeed zero3",  # a training stack, not DeepSeek misspelt
    ],
)
def test_near_domain_questions_get_nothing(index: SearchIndex, query: str) -> None:
    assert prs(index, query) == []


def test_a_generic_word_refines_but_never_carries_a_hit_alone(index: SearchIndex) -> None:
    for word in ("state", "lock", "index", "install", "driver", "migration", "database", "server", "deploy"):
        assert prs(index, word) == [], word
    assert prs(index, "sleep mode server")[:1] == [11743]  # with a concept it still finds


@pytest.mark.parametrize(
    ("query", "pr"),
    [("优先级 调度", 19057), ("休眠 模式", 11743), ("结构化 输出", 16577)],
)
def test_a_chinese_term_written_with_a_space_still_names_its_concept(
    index: SearchIndex, query: str, pr: int
) -> None:
    """Each half alone is a weaker word (`调度` is any scheduler entry); together they are the term."""
    assert prs(index, query) == [pr]


def test_a_concept_among_words_of_a_neighbouring_stack_is_a_minority(tmp_path: Path) -> None:
    """Four things asked besides the scheduler, none of them in the entry: no answer. The
    scheduler asked with fewer such words is still found."""
    index = one_entry_index(
        tmp_path,
        "vllm-project/vllm\n\n[Core] Simplify the scheduler (#6867)\n\n"
        "值得精读。调度器每步不再整队拷贝，吞吐不再随队列变长而掉。\n",
    )
    assert prs(index, "kubernetes pod scheduler priority class") == []
    assert prs(index, "scheduler pod overhead") == [6867]


def test_a_stack_named_by_a_glossary_term_is_still_a_neighbouring_domain(tmp_path: Path) -> None:
    """`Docker` and `k8s` are terms of vLLM's deployment concept, but a question about them and
    a scheduler feature asks as much of the neighbouring stack as of vLLM: no answer. Two
    concepts read from one word (`preemption`) are one thing asked, not two."""
    index = one_entry_index(
        tmp_path,
        "vllm-project/vllm\n\n[Core] Priority scheduling preempts the lowest priority first (#7001)\n\n"
        "Worth a read. With priority scheduling, preemption now picks the request of the lowest "
        "priority instead of the newest one.\n",
    )
    assert prs(index, "priority preemption") == [7001]
    assert prs(index, "docker container priority preemption") == []
    assert prs(index, "k8s gpu scheduling") == []
    assert prs(index, "scheduling gpu") == [7001]  # one near word in a short query only refines
    # beside a near-domain word, a word neither the library nor vLLM's vocabulary (its terms and
    # descriptions) knows is the neighbouring stack's too: `ingress`; `overhead` is vLLM's
    assert prs(index, "helm ingress preemption") == []
    assert prs(index, "preemption pod overhead") == [7001]


def test_streaming_in_english_finds_a_chinese_note_on_streaming(tmp_path: Path) -> None:
    """`streaming` names the concept `流式` does; `Stream` of an identifier the entry lacks is
    still only one part of it (`DecodeStream` is not any entry on decoding)."""
    index = one_entry_index(
        tmp_path,
        "vllm-project/vllm\n\n[Frontend] hermes 解析器修正 (#7101)\n\n"
        "值得看。hermes 解析器在流式返回时丢了最后一个参数。\n\n"
        "[Core] 投机解码提速 (#7102)\n\n值得看。decode 阶段少一次同步。\n",
    )
    assert prs(index, "hermes streaming") == [7101]
    assert prs(index, "DecodeStream") == []


def test_a_description_meets_the_words_as_typed_not_as_typo_corrected(tmp_path: Path) -> None:
    """`preprocessed` is no word of this month; corrected it would be `preprocessor` and no
    longer meet "avoid preprocessing the same image twice"."""
    index = one_entry_index(
        tmp_path,
        "vllm-project/vllm\n\n[Core] Key-only cache for the multimodal preprocessor (#23018)\n\n"
        "值得看。前端进程和 engine core 各存一份 processor cache 的输出，现在只有一边存真数据。\n",
    )
    assert prs(index, "stop keeping two copies of preprocessed pictures") == [23018]


def test_descriptions_read_plain_synonyms_and_need_two_shared_words() -> None:
    lines = [("sleep-mode", "free GPU memory while idle"), ("lora", "serve many adapters on one base model")]
    descriptions = DescriptionIndex(lines, STOPWORDS)
    (found,) = descriptions.match(tokenize("release vram when idle"))  # release = free, vram = GPU
    assert found.concept == "sleep-mode" and found.score >= 0.5
    assert descriptions.match(tokenize("idle")) == []
    assert descriptions.match(tokenize("tuning database caches and GPU memory on kubernetes clusters")) == []
    (chips,) = DescriptionIndex([("tpu", "Google's accelerators")], STOPWORDS).match(
        tokenize("accelerators from google")
    )
    assert chips.score == 1.0  # the `s` of `Google's` is no key a question must hold


@pytest.mark.parametrize(
    ("query", "concept"),
    [
        ("how to run on a mac", "apple-silicon"),
        ("only a few experts run for each token", "moe"),
        ("return how likely each generated token was", "logprobs"),
        ("turn chat messages into the prompt a model expects", "chat-template"),
        ("record GPU work once and replay it", "cuda-graph"),
        ("把语音转成文字", "transcription-api"),
    ],
)
def test_plain_words_for_common_features_name_them(query: str, concept: str) -> None:
    glossary = Glossary.load()
    lines = ((c.id, line) for c in glossary.concepts.values() for line in c.describes)
    assert DescriptionIndex(lines, STOPWORDS).match(tokenize(query))[0].concept == concept


def test_running_on_a_graphics_card_describes_no_platform() -> None:
    """Negations are stopwords: a line `run on AMD graphics cards` would read `run without a
    graphics card` as ROCm, so GPU platforms are found by their names only."""
    glossary = Glossary.load()
    lines = ((c.id, line) for c in glossary.concepts.values() for line in c.describes)
    found = DescriptionIndex(lines, STOPWORDS).match(tokenize("run the model without a graphics card"))
    assert not {d.concept for d in found} & {"rocm", "cuda-platform", "intel"}


def test_most_engine_arguments_and_documented_features_name_a_concept() -> None:
    glossary = Glossary.load()
    sources = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    flags = ["--" + name.replace("_", "-") for name in sources["engine_args"]["names"]]
    titles = list(sources["features"]["names"].values())
    assert sum(bool(glossary.expand(f)) for f in flags) >= 0.9 * len(flags)
    assert all(glossary.expand(title) for title in titles)


def test_the_command_line_finds_an_english_note_from_a_chinese_query(tmp_path: Path) -> None:
    env = {**os.environ, "DIGEST_DIR": str(VOCAB), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}"}
    assert [hit["pr"] for hit in query_json("休眠模式", env)] == [11743]


def test_cancelling_a_request_in_english_finds_a_chinese_note_on_its_abort(tmp_path: Path) -> None:
    """vLLM's request abort: `cancel an in-flight request` reaches `取消接口`; `request` alone never does."""
    index = one_entry_index(
        tmp_path,
        "vllm-project/vllm\n\n按 request_id 取消请求 (#7103)\n\n"
        "值得一读。加了带鉴权的取消接口，请求不活跃时返回 404。\n\n"
        "[Core] 投机解码提速 (#7104)\n\n值得看。decode 阶段少一次同步。\n",
    )
    assert prs(index, "cancel an in-flight request") == [7103]
    assert prs(index, "request") == []


def test_a_chinese_word_around_a_neighbouring_domain_word_is_a_topic(tmp_path: Path) -> None:
    """`死锁` (deadlock) and `多节点` (multi-node) hold 锁 and 节点 but name vLLM topics; `部署了`
    is still only a deployment word with a particle."""
    index = one_entry_index(
        tmp_path,
        "vllm-project/vllm\n\n多节点 DP 死锁 (#45223)\n\n值得一读。多节点 data parallel 死锁的原因："
        "完成状态每 32 步才同步一次，各 rank 的 all-reduce 次数对不上，gloo 就卡死了。\n",
    )
    assert prs(index, "死锁") == [45223]
    assert prs(index, "多节点") == [45223]
    assert prs(index, "部署了") == []
