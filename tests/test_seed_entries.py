"""Every field of every seed entry, checked against expectations written by hand from the note."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from chatbot.digest.library import Library
from tests.conftest import DIGESTS

REPO = "vllm-project/vllm"

EXPECTED: list[dict[str, Any]] = [
    {
        "title": "混合模态媒体并发解析提速 8%-22%",
        "pr": 54537,
        "github_title": "[Frontend][Performance] Resolve async media across modalities concurrently",
        "author": "waizuichougou",
        "date": dt.date(2026, 8, 31),
        "verdict": "值得精读",
        "why": "尤其是三个点：flatten-gather-slice 的保序并发模式；测试设计；性能改进配 GPU 输出等价性验证的做法",
        "highlights": [
            "flatten-gather-slice 的保序并发模式——用 `asyncio.gather` 的结果顺序天然保序，切片按组长度的算术恢复分组，简洁且不引入可变状态",
            "测试设计——用 `max_active_fetches == 6` 证明并发而非猜测、用交错 delay 的 distinct 值/UUID 证明顺序、用 `asyncio.all_tasks()` 证明无任务泄漏，层层咬合",
            "性能改进配 GPU 输出等价性验证的做法，是“优化不改变行为”的可信证据链",
        ],
        "audience": None,
        "caveats": ["对 reviewer 而言，重点关注失败路径等待范围扩大这一语义变化是否可接受（作者已声明意图）"],
        "refs": [],
        "related": [48333],
        "people": [],
        "identifiers": ["asyncio.gather", "max_active_fetches == 6", "asyncio.all_tasks()"],
        "tags": ["multimodal", "performance", "concurrency", "asyncio", "frontend", "testing"],
        "line": 3,
    },
    {
        "title": "新增 Qwen3-VL DeepStack 编译契约回归测试",
        "pr": 53529,
        "github_title": "[Test][Qwen3-VL] Cover compiled DeepStack input contract",
        "author": "maithilijoshi20",
        "date": dt.date(2026, 8, 24),
        "verdict": "值得精读",
        "why": "它展示了一个高价值的测试模式：用 object.__new__ 构造裸模型实例 + 最小可编译解码器 + 复用真实私有方法，"
        "把 torch.compile 图特化这一隐性正确性约束编码成可执行断言，是“以测试锁定不稳定输入契约”的范例",
        "highlights": [
            "它展示了一个高价值的测试模式：用 object.__new__ 构造裸模型实例 + 最小可编译解码器 + 复用真实私有方法，"
            "把 torch.compile 图特化这一隐性正确性约束编码成可执行断言，是“以测试锁定不稳定输入契约”的范例",
            "PR body 对 #43617 与 #53516 冲突的处理方式（锁定契约、质量争议单独调查）也是处理“修复引入新回归”争议的务实参考",
        ],
        "audience": "对从事 torch.compile / CUDA graph 特化或多模态模型维护的工程师尤其有借鉴意义",
        "caveats": ["由于 #53516 尚未调查清楚，该契约未来仍可能被重新审视"],
        "refs": [43617, 53516],
        "related": [43617, 53516, 49397],
        "people": [],
        "identifiers": ["object.__new__", "torch.compile"],
        "tags": ["testing", "torch.compile", "multimodal", "qwen3-vl", "cuda graph", "regression"],
        "line": 7,
    },
    {
        "title": "修复 KV offload 事件元数据被过早丢弃",
        "pr": 52068,
        "github_title": "[KV Offload] Preserve KV event metadata until final residency removal",
        "author": "mkhazraee",
        "date": dt.date(2026, 8, 12),
        "verdict": "值得精读",
        "why": "属于小范围但典型的状态生命周期正确性修复",
        "highlights": [
            '`record_store` 中"先合并再覆盖"的防丢逻辑',
            "`_take_removed_event` 由 pop 改为计数式 discard 的写法",
            "per-event `removal_expected` 标志相对 tier 属性的设计权衡（mkhazraee 对全局配置无法区分二级介质的解释）",
        ],
        "audience": "对理解 KV offload 事件转发机制的工程师有直接参考价值",
        "caveats": [],
        "refs": [],
        "related": [52067, 57453],
        "people": ["mkhazraee"],
        "identifiers": ["record_store", "_take_removed_event", "removal_expected"],
        "tags": ["kv offload", "kv events", "kv cache", "bugfix"],
        "line": 11,
    },
    {
        "title": "协议类型移出 openai 目录，194 文件导入重构",
        "pr": 54492,
        "github_title": "[Frontend] Move engine/protocol.py out openai folder",
        "author": "noooop",
        "date": dt.date(2026, 8, 31),
        "verdict": "值得精读",
        "why": "重点关注三个设计决策：按“通用基础类型”与“生成流程专属类型”拆分协议模块；异常类下沉到 `vllm/exceptions.py`；"
        "import 重构中 `TYPE_CHECKING` 与 re-export 的陷阱",
        "highlights": [
            "按“通用基础类型”与“生成流程专属类型”拆分协议模块，避免公共类型长期悬挂在 openai 目录下",
            "异常类下沉到 `vllm/exceptions.py`，让 500 语义脱离请求协议",
            "import 重构中 `TYPE_CHECKING` 与 re-export 的陷阱——本 PR 的三处回归是很好的反面教材",
        ],
        "audience": None,
        "caveats": [
            "另可留意 claude[bot] 提出的 Buildkite `source_file_dependencies` 需随文件移动同步更新的运维要点"
        ],
        "refs": [],
        "related": [41907, 52131, 53500, 53659, 56369],
        "people": ["claude[bot]"],
        "identifiers": ["vllm/exceptions.py", "TYPE_CHECKING", "source_file_dependencies"],
        "tags": ["refactor", "frontend", "openai-compatible server", "imports", "ci"],
        "line": 15,
    },
    {
        "title": "修复 PD 热前缀下 P2P tier 无供给致 30s 超时重算",
        "pr": 52912,
        "github_title": "[Bugfix][KVOffload] P2P tier declares REQUEST_LEVEL on the producer leg",
        "author": "liranschour",
        "date": dt.date(2026, 8, 19),
        "verdict": "值得精读",
        "why": "重点关注三件事：8 行修复如何解除「前缀缓存越好 PD 越慢」的反直觉失效；"
        "差分测试把手工镜像的 store 修剪与 load demand 两条路径钉在一起的设计思路；nilig 的版本回溯分析",
        "highlights": [
            "8 行修复如何解除「前缀缓存越好 PD 越慢」的反直觉失效",
            "差分测试把手工镜像的 store 修剪与 load demand 两条路径钉在一起的设计思路",
            "nilig 的版本回溯分析——同一个 patch 在 v0.27.1 与 main 上表现完全不同，提醒跨版本验证的必要性",
        ],
        "audience": None,
        "caveats": ["提醒跨版本验证的必要性"],
        "refs": [],
        "related": [52808, 53083, 53128, 53453],
        "people": ["nilig"],
        "identifiers": [],
        "tags": ["pd disaggregation", "kv offload", "prefix caching", "timeout", "bugfix"],
        "line": 19,
    },
    {
        "title": "修复 SM120 上 DSv4 投机解码启动崩溃，eidx 改全宽连续",
        "pr": 53574,
        "github_title": "[Bugfix][SM120] DSv4: pass contiguous C128A decode topk indices on SM120",
        "author": "lucifer1004",
        "date": dt.date(2026, 8, 24),
        "verdict": "值得精读",
        "why": "该 PR 是「供应商 kernel 契约与框架内存布局冲突」的教科书案例",
        "highlights": [
            "理解 FlashInfer 64-token 分派阈值如何决定崩溃暴露时机",
            "CUDA graph 捕获下地址稳定性与 contiguity 的取舍（为何不能在消费端 `.contiguous()`）",
            "reviewer 坚持「生产代码简洁 + 测试技巧」的工程权衡",
        ],
        "audience": "对后续 FlashInfer/FlashMLA 集成工作有直接参考价值",
        "caveats": [],
        "refs": [],
        "related": [52823],
        "people": [],
        "identifiers": [".contiguous()"],
        "tags": [
            "speculative decoding",
            "sm120",
            "deepseek v4",
            "flashinfer",
            "flashmla",
            "cuda graph",
            "crash",
            "bugfix",
        ],
        "line": 23,
    },
    {
        "title": "截断 prompt 时同步截断 prompt_is_token_ids 掩码",
        "pr": 54509,
        "github_title": "[Bugfix][Frontend] Truncate prompt_is_token_ids with the prompt",
        "author": "Hotragn",
        "date": dt.date(2026, 8, 31),
        "verdict": "值得精读",
        "why": '属于"小改动、高分析质量"的教科书式 bugfix',
        "highlights": [
            "用单一 _truncation_slice 作为所有并行数组的统一截断入口，避免各数组各自实现截断造成漂移",
            '测试断言"掩码内容"而非仅"掩码长度"，这类对齐缺陷用长度断言必然漏测',
        ],
        "audience": "可作为 frontend 输入处理链路的参考实现",
        "caveats": [],
        "refs": [],
        "related": [54407],
        "people": [],
        "identifiers": ["prompt_is_token_ids", "_truncation_slice"],
        "tags": ["frontend", "truncation", "testing", "bugfix"],
        "line": 27,
    },
    {
        "title": "修复 MiniCPM-o 图像处理器复用串扰",
        "pr": 54501,
        "github_title": "[Bugfix][MM] Fix MiniCPM-o image processor reuse on Transformers v5",
        "author": "AndreasKaratzas",
        "date": dt.date(2026, 8, 31),
        "verdict": "值得精读",
        "why": "该 PR 是一个多模态处理器类复用的典型坑：AutoProcessor 按类名解析 image_processor 导致跨 checkpoint 串用",
        "highlights": [
            "将 checkpoint 特定加载逻辑提取为共享 helper",
            "参数化回归测试直接命中失败路径（`get_sliced_grid`）并断言处理器类与模块均不同",
        ],
        "audience": None,
        "caveats": [
            "阅读时可重点关注 `minicpmo.py` 与基类在 numpy 属性转换上的不一致，以及是否有必要补充端到端测试"
        ],
        "refs": [],
        "related": [44282, 48413, 51668],
        "people": [],
        "identifiers": ["get_sliced_grid", "minicpmo.py", "image_processor"],
        "tags": ["multimodal", "minicpm-o", "transformers", "image processor", "bugfix"],
        "line": 31,
    },
]

SEED_TEXT_LINES = (DIGESTS / "vllm-digest-2026-08.txt").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("position", range(1, 9))
def test_seed_entry_fields(seed_library: Library, position: int) -> None:
    expected = EXPECTED[position - 1]
    entry = seed_library.entries[position - 1]
    assert entry.position == position
    assert entry.repo == REPO
    assert entry.digest == "vllm-digest-2026-08"
    for name in (
        "title",
        "pr",
        "github_title",
        "author",
        "date",
        "verdict",
        "why",
        "highlights",
        "audience",
        "caveats",
        "people",
        "identifiers",
        "tags",
    ):
        assert getattr(entry, name) == expected[name], name
    assert entry.url == f"https://github.com/{REPO}/pull/{expected['pr']}"
    assert [r.number for r in entry.refs] == expected["refs"]
    assert [r.url for r in entry.refs] == [f"https://github.com/{REPO}/pull/{n}" for n in expected["refs"]]
    assert [r.number for r in entry.related] == expected["related"]
    # The note is kept exactly as written: the line after the title in the seed file.
    assert entry.note == SEED_TEXT_LINES[expected["line"] + 1]
    assert entry.source.endswith(f"vllm-digest-2026-08.txt:{expected['line']}")


def test_extracted_parts_are_the_curators_words(seed_library: Library) -> None:
    """Highlights, audience and caveats are verbatim pieces of the note (caveats may drop a `注意：` label)."""
    for entry in seed_library:
        for piece in [*entry.highlights, *entry.caveats, *([entry.audience] if entry.audience else [])]:
            assert piece in entry.note, (entry.title, piece)


def test_entry_one_and_two_examples_from_the_issue(seed_library: Library) -> None:
    media, deepstack = seed_library.entries[0], seed_library.entries[1]
    assert "flatten-gather-slice" in media.highlights[0]
    assert any("max_active_fetches == 6" in h for h in media.highlights)
    assert any("#53516" in c for c in deepstack.caveats)


def test_ids_are_distinct_and_short(seed_library: Library) -> None:
    ids = [e.id for e in seed_library]
    assert len(set(ids)) == 8
    assert all(len(i) == 10 and all(c in "0123456789abcdef" for c in i) for i in ids)
