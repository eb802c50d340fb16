"""Topic search on months the ranking was not tuned on (the held-out, probe and curator
digests), with phrasings written for them: one real part of an identifier is not the
identifier, and the display terms say what the entry really shares with the query."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.digest import Library
from chatbot.search import SearchIndex
from chatbot.search.glossary import Glossary
from chatbot.search.tokens import tokenize

TESTS = Path(__file__).parent
FOLDERS = {
    "seed": TESTS.parent / "digests",
    "heldout": TESTS / "digests-heldout",
    "probe": TESTS / "digests-probe",
    "curators": TESTS / "curators",
}


@pytest.fixture(scope="module")
def indexes() -> dict[str, SearchIndex]:
    return {name: SearchIndex.build(Library.load(folder).entries) for name, folder in FOLDERS.items()}


def titles(index: SearchIndex, query: str) -> list[str]:
    return [hit.entry.title for hit in index.search(query, limit=10).hits]


@pytest.mark.parametrize(
    ("folder", "query"),
    [
        ("seed", "DecodeStream"),  # no entry has it; `decoding` is one half of it
        ("probe", "vocab_size"),  # a note's `page size` is not a vocabulary size
        ("seed", "StreamingResponse"),
        ("heldout", "hash_fn"),
        ("probe", "block_table"),
        ("seed", "mm_hash"),  # `mm` is multimodal, but no entry hashes anything
        ("probe", "mm_hash"),
        ("heldout", "prompt_is_token_ids"),  # `prompt` (a concept) in a scheduler note
        ("curators", "prompt_is_token_ids"),
        ("seed", "lora_request"),
        ("heldout", "max_num_batched_tokens"),  # `batch` in a sampler note
        ("heldout", "use_cuda_graph"),  # a note that says "use"
    ],
)
def test_one_part_of_a_two_part_identifier_alone_finds_nothing(
    indexes: dict[str, SearchIndex], folder: str, query: str
) -> None:
    result = indexes[folder].search(query)
    assert titles(indexes[folder], query) == []
    assert result.total == 0 and result.suggestions


@pytest.mark.parametrize(
    ("folder", "query", "first"),
    [
        ("heldout", "DecodeStream", "利用 tokenizers DecodeStream 加速增量解码"),
        ("heldout", "vocab_size", "结构化输出改用 vocab_size 构造语法匹配器"),
        ("heldout", "mm_hash", "编码器缓存按 mm_hash 跟踪并在请求间共享嵌入"),
        ("curators", "vocab_size", "Speculative decoding: reject sampling without host sync"),
        ("seed", "prompt_is_token_ids", "截断 prompt 时同步截断 prompt_is_token_ids 掩码"),
        ("seed", "asyncio.gather", "混合模态媒体并发解析提速 8%-22%"),
        ("curators", "mm_hash", "多模态 processor 缓存键修正"),
    ],
)
def test_an_identifier_still_finds_the_entries_that_write_it(
    indexes: dict[str, SearchIndex], folder: str, query: str, first: str
) -> None:
    assert titles(indexes[folder], query)[0] == first


def test_a_stream_entry_is_not_a_decodestream_entry(indexes: dict[str, SearchIndex]) -> None:
    assert titles(indexes["heldout"], "DecodeStream") == [
        "利用 tokenizers DecodeStream 加速增量解码",
        "兼容 tokenizers 0.22.0 的增量解码修复",
    ]


@pytest.mark.parametrize(
    ("folder", "query", "expected"),
    [
        # a flag names its topic: `enable_`, `use_` say nothing more, and find nothing alone
        ("seed", "enable_prefix_caching", ["修复 PD 热前缀下 P2P tier 无供给致 30s 超时重算"]),
        ("probe", "enable_prefix_caching", ["【修复】前缀缓存在滑动窗口注意力下的块泄漏"]),
        ("heldout", "enable_chunked_prefill", ["修复分块预填充在 block manager v2 下的边界情况"]),
        ("curators", "use_cuda_graph", ["CUDA graph 捕获尺寸自动裁剪", "EPLB 专家重排"]),
        # a glossary phrase is one concept, not also its words (`decoding` of spec decoding)
        (
            "curators",
            "guided decoding",
            ["Guided decoding: outlines backend removal", "结构化输出的 grammar 编译缓存"],
        ),
    ],
)
def test_a_setting_or_phrase_finds_its_topic_and_nothing_else(
    indexes: dict[str, SearchIndex], folder: str, query: str, expected: list[str]
) -> None:
    assert titles(indexes[folder], query) == expected


def test_display_terms_name_what_the_entry_has(indexes: dict[str, SearchIndex]) -> None:
    """A hit shows the identifier only when the entry writes it (or enough of its parts)."""
    (hit,) = indexes["heldout"].search("enable_prefix_caching").hits
    assert "enable_prefix_caching" not in hit.matched and "前缀缓存" in hit.matched


@pytest.mark.parametrize(
    ("text", "concepts"),
    [
        (
            "which cuts the warm-up from 40 s to 6 s",
            ["startup-time"],
        ),  # `CuTe` stems to `cut`; warm-up is vLLM's
        ("the ropes of a new cluster", []),  # `RoPE` stems to `rop`
        ("reading the readm", []),
        ("CuTe DSL kernels", ["cutlass", "kernel"]),
        ("RoPE scaling", ["long-context"]),
        ("LMCache", ["lmcache"]),
        ("two TPUs", ["tpu"]),
    ],
)
def test_a_name_is_found_as_written_not_by_its_stem(text: str, concepts: list[str]) -> None:
    found = Glossary.load().find(tokenize(text))
    assert list(dict.fromkeys(m.concept for m in found)) == concepts


def test_cuts_in_a_note_is_not_cutlass(indexes: dict[str, SearchIndex]) -> None:
    assert titles(indexes["curators"], "cutlass") == []
    assert titles(indexes["probe"], "cutlass") == ["DeepSeek-V3 MLA 在 Blackwell (SM100) 上启用 CUTLASS 后端"]


@pytest.mark.parametrize(
    ("folder", "query", "shown"),
    [
        ("probe", "哪个PR修复了前缀缓存", ["前缀缓存", "prefix caching"]),
        ("probe", "fix prefix cache bug", ["prefix caching", "前缀缓存"]),
        ("curators", "哪个 PR 改了调度器", ["调度器"]),
    ],
)
def test_generic_words_refine_but_are_not_shown_as_matched(
    indexes: dict[str, SearchIndex], folder: str, query: str, shown: list[str]
) -> None:
    assert indexes[folder].search(query).hits[0].matched == shown


@pytest.mark.parametrize(
    ("folder", "query", "expected"),
    [
        # one plain word of several is padding: `cache` of an image preprocessing cache
        ("seed", "image preprocessing cache", ["修复 MiniCPM-o 图像处理器复用串扰"]),
        ("heldout", "image preprocessing cache", []),
        ("seed", "runtime lora loading", []),
        ("heldout", "runtime lora loading", ["修复 LoRA 与流水线并行同时开启时的崩溃"]),
        (
            "curators",
            "lora adapter hot reload",
            ["LoRA 适配器热加载的锁粒度", "Chunked prefill 与 LoRA 共存"],
        ),
        ("heldout", "block leak", []),
        ("probe", "web UI dark mode", []),  # `dark` of the author DarkLight1337
        ("curators", "web UI dark mode", []),
        # enough of the query, or a concept, still finds
        ("probe", "sliding window", ["【修复】前缀缓存在滑动窗口注意力下的块泄漏"]),
        ("heldout", "hermes parser", ["Mistral 工具解析器流式输出重写"]),
        ("probe", "runtime lora loading", ["LoRA：支持在运行时动态加载与卸载适配器"]),
    ],
)
def test_a_minority_of_plain_words_is_not_a_match(
    indexes: dict[str, SearchIndex], folder: str, query: str, expected: list[str]
) -> None:
    result = indexes[folder].search(query, limit=10)
    assert [hit.entry.title for hit in result.hits] == expected
    assert result.total == len(expected)
    assert result.suggestions or expected


@pytest.mark.parametrize(
    ("folder", "query", "expected"),
    [
        # `事件` / `events` alone are SSE events, asyncio events, metrics events: not KV events
        ("seed", "kv events", ["修复 KV offload 事件元数据被过早丢弃"]),
        ("heldout", "kv events", []),
        ("curators", "KV 事件", []),
    ],
)
def test_a_bare_common_word_does_not_name_a_narrow_concept(
    indexes: dict[str, SearchIndex], folder: str, query: str, expected: list[str]
) -> None:
    assert titles(indexes[folder], query) == expected


def test_kv_cache_in_chinese_does_not_find_a_streaming_parser(indexes: dict[str, SearchIndex]) -> None:
    assert "Mistral 工具解析器流式输出重写" not in titles(indexes["heldout"], "KV缓存")
