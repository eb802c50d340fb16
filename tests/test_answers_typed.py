"""Typed follow-ups: a question asking for hardware, a version, a number, a flag, a reference or a
person is answered by a clause holding one, and honestly denied when the note holds none."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.answers.answerer import Answerer
from chatbot.answers.slots import asked_slots, slot_values
from chatbot.answers.typed import said_absent
from chatbot.digest import Library
from tests.answering import ask

REPO = "vllm-project/vllm"
DIGEST = f"""{REPO}

Sleep mode docs for RLHF (#28357)

★★★☆☆ worth a skim. The doc now shows the level-2 flow: `llm.sleep(level=2)` drops weights and KV cache. Sleep mode is CUDA-only. youkaichao asked to link the blog post; author iAmir97. Tested on 8×H200 with v0.16.0, wake-up takes 2.5 s.

EPLB overlap for DeepEPv2 #57236

【结论】值得看。【看点】把 `deepep_v2` 加进 `_EPLB_OVERLAP_SAFE_BACKENDS`；做法照搬 PR 50569。【坑】只对 TP=1 生效；测试全程 `--enforce-eager`。作者 Robert Shaw。

Docs rename #30041

可跳过，纯文档改名，Mark McLoughlin 已批。

Priority preemption #45561

必读。⚠️ 注意：①只支持 H100；②默认关闭，要加 `--enable-foo` 才生效；③和 LoRA 不兼容，开了会直接报错退出。
EN: Adds priority preemption to the scheduler; off by default.
"""


@pytest.fixture(scope="module")
def answerer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Answerer, Library]:
    folder: Path = tmp_path_factory.mktemp("typed")
    (folder / "d.txt").write_text(DIGEST, encoding="utf-8")
    library = Library.load(folder)
    return Answerer(library), library


@pytest.mark.parametrize(
    ("pr", "question", "found", "expect"),
    [
        ("28357", "在啥硬件上测的", True, "8×H200"),
        ("28357", "基于哪个版本测的", True, "v0.16.0"),
        ("28357", "wake up 要多久", True, "2.5 s"),
        ("28357", "does this work on amd", False, "CUDA-only"),  # a denial saying why
        ("28357", "how much memory does it save", False, ""),  # the numbers there are not memory
        ("28357", "wake up 快了多少", True, "2.5 s"),
        ("28357", "who reviewed it", True, "youkaichao"),
        ("57236", "参考了哪个 pr", True, "50569"),
        ("57236", "要加啥参数", True, "--enforce-eager"),
        ("57236", "在哪张卡上跑的", False, ""),
        ("57236", "进了哪个版本", False, ""),
        ("57236", "metrics 默认在哪个端口", False, ""),
        ("57236", "who reviewed it", False, ""),
        ("30041", "要看吗", True, "可跳过"),
        ("45561", "lora 能一起用吗", True, "和 LoRA 不兼容"),
        ("45561", "what's the gist", True, "Adds priority preemption"),
    ],
)
def test_typed_questions(
    answerer: tuple[Answerer, Library], pr: str, question: str, found: bool, expect: str
) -> None:
    bot, library = answerer
    entry = library.get(pr)
    assert entry is not None
    answer = bot.answer(entry, question)
    assert answer.found is found, answer.text
    assert expect in answer.text
    assert "①" not in answer.text  # an item of an inline list is quoted alone
    assert len(answer.text.removesuffix(entry.url or "").rstrip()) < 0.75 * len(entry.note) or not found


@pytest.mark.parametrize(
    ("question", "slots"),
    [
        ("在啥硬件上测的", ("hardware",)),
        ("which release has this", ("version",)),
        ("提速多少", ("quantity",)),
        ("谁 review 的", ("person",)),
        ("谁需要关注这个", ()),  # who should care is the audience, not a person
        ("Who would benefit from reading it?", ()),
        ("有重复的 pr 吗", ("ref",)),
        ("以前哪个 env 会覆盖选择", ("flag",)),
    ],
)
def test_what_a_question_asks_for(question: str, slots: tuple[str, ...]) -> None:
    assert asked_slots(question) == slots


@pytest.mark.parametrize(
    ("clause", "absent"),
    [
        ("PR 描述里只有两张截图，没有文字版的性能数字", True),  # words between 没有 and what is missing
        ("PR 只给了显存数字，没有吞吐或延迟对比", True),
        ("no e2e throughput numbers in the thread", True),
        ("the author didn't post any benchmark numbers", True),
        ("thread 里我没看到 e2e 吞吐数字，只有显存数字", False),  # numbers there are, of memory
        ("吞吐从 10 提升到 12 tok/s", False),
        ("the perf comparison only exists as screenshots, so there is nothing to quote", True),
        ("作者自己说除了 ngram size 为 1 之外没看到明显加速", True),  # "提速多少" answered: none seen
        ("no noticeable speedup on H100", True),
    ],
)
def test_a_clause_saying_numbers_are_not_given(clause: str, absent: bool) -> None:
    """ "没有文字版的性能数字" answers "any perf numbers": the note says there are none."""
    assert said_absent(clause) is absent


@pytest.mark.parametrize(
    ("slot", "text", "held"),
    [
        ("hardware", "setup h100x4, 120 vcpu", True),  # the card count after the card
        ("hardware", "8×H200, wake-up 2.5 s", True),
        ("hardware", "tested with 4 workers", False),
    ],
)
def test_what_a_clause_holds(slot: str, text: str, held: bool) -> None:
    assert bool(slot_values(slot, text)) is held


@pytest.mark.parametrize(
    ("entry_text", "pr", "question", "expect"),
    [
        (  # a before and after is how much faster
            "Shared meta model #51657\n\n值得一读。decoder / encoder 查找共用一个一次性的 meta model："
            "每次加载从 3 builds 降到 1。音频 encoder 也能 torch compile 了。",
            "51657",
            "加载快了多少",
            "从 3 builds 降到 1",
        ),
        (  # so is a number falling to another
            "CPU KV offload #10874\n\n可以扫一眼。32 个文档时 prefix caching 是 49.96，"
            "加上 CPU offloading 降到 17.26；文档少到 GPU 放得下时两者几乎一样。",
            "10874",
            "offload 之后快了多少",
            "降到 17.26",
        ),
    ],
)
def test_a_change_from_one_number_to_another_answers_how_much_faster(
    tmp_path: Path, entry_text: str, pr: str, question: str, expect: str
) -> None:
    answer = ask(tmp_path, f"{REPO}\n\n{entry_text}\n", pr, question)
    assert answer.found and expect in answer.text, answer.text


@pytest.mark.parametrize(
    ("question", "found", "expect"),
    [
        ("H100 上能跑吗", True, "Hopper"),  # an H100 is a Hopper card: the note speaks of it
        ("does it run on h200", True, "Hopper"),
        ("does it work on a100", False, ""),  # Ampere: the note says nothing of it
    ],
)
def test_a_card_is_read_as_its_architecture(tmp_path: Path, question: str, found: bool, expect: str) -> None:
    entry_text = (
        "FP8 attention kernel #51000\n\n值得一读。新的 FP8 attention kernel 只支持 Hopper（SM90），"
        "ROCm 上只在 gfx942 测过，其他卡走老路径。"
    )
    answer = ask(tmp_path, f"{REPO}\n\n{entry_text}\n", "51000", question)
    assert answer.found is found and expect in answer.text, answer.text
