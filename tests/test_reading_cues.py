"""Reading cues anywhere in a note (`Read this if you own the scheduler.`, `只有用 X 的人需要看`),
labels marked with an emoji, a verdict with its readers in brackets (issue 26)."""

from __future__ import annotations

import pytest

from chatbot.digest import analyse_note

REPO = "vllm-project/vllm"
BODY_EN = "The scheduler now tags each sequence with a stage and orders decodes first."
BODY_ZH = "调度器现在给每个序列打上阶段标记，先排 decode。"


@pytest.mark.parametrize(
    ("cue", "verdict", "readers"),
    [
        ("Read this if you own the scheduler.", "Read this", True),
        ("Read it if you own KV offload; see also #57746.", "Read it", True),
        ("You can skip this unless you maintain LoRA CI.", "You can skip this", True),
        ("Not worth your time unless you run TPUs.", "Not worth your time", True),
        ("A must-read for kernel folks.", "A must-read", True),
        ("Most people can skip this.", "Most people can skip this", False),
        ("If you own the scheduler, read this.", "read this", True),
        ("If you run multi-LoRA, this is a must-read.", "this is a must-read", True),
        ("My take: worth reading.", "worth reading", False),
        ("Required reading for scheduler owners.", "Required reading", True),
    ],
)
@pytest.mark.parametrize("where", ["opening", "middle", "closing"])
def test_an_english_reading_cue_is_the_verdict_wherever_it_stands(
    cue: str, verdict: str, readers: bool, where: str
) -> None:
    other = "It also fixes a regression in token counting."
    note = {"opening": f"{cue} {BODY_EN} {other}", "middle": f"{BODY_EN} {cue} {other}"}.get(
        where, f"{BODY_EN} {other} {cue}"
    )
    parts = analyse_note(note, REPO)
    assert parts.verdict == verdict
    assert (parts.audience == cue.rstrip(".")) is readers
    assert parts.why == BODY_EN.rstrip(".")


@pytest.mark.parametrize(
    ("cue", "verdict"),
    [
        ("做 spec decode 的同学值得读，其余人可以跳过。", "做 spec decode 的同学值得读，其余人可以跳过"),
        ("只有用 Granite 的人需要看。", "只有用 Granite 的人需要看"),
        ("动 MoE 代码的人要读，否则可以等后续 N/N。", "动 MoE 代码的人要读"),
        ("没用 ROCm 的话可以跳过。", "没用 ROCm 的话可以跳过"),
        ("x86 可跳过；Arm 用户顺带拿到 mimalloc 的收益。", "x86 可跳过"),
        ("个人觉得值得一看。", "值得一看"),
    ],
)
def test_a_chinese_cue_naming_its_readers_is_the_verdict(cue: str, verdict: str) -> None:
    parts = analyse_note(f"{BODY_ZH}{cue}顺手修了 token 计数的回归。", REPO)
    assert parts.verdict == verdict


@pytest.mark.parametrize(
    "note",
    [
        "Tests skip unless CUDA is present. The scheduler keeps its order.",
        "Skip the warmup when the cache is hot; it saves 2 s.",
        "We recommended users to upgrade the driver first, then rebuild.",
        "用户可以看到延迟下降。开发者需要看日志才能定位。",
        "Read more in the design doc; the queue is updated in place.",
    ],
)
def test_sentences_about_skipping_or_reading_something_else_are_no_verdict(note: str) -> None:
    assert analyse_note(note, REPO).verdict is None


EMOJI_NOTE = """📌 推荐：必读（跑 Mixtral 的同学）
💡 要点：走动态 per-tensor 缩放，不用转换 checkpoint。
⚠️ 注意：性能不是最优，优化留到后续 PR。
👥 相关：@pcmoritz, #3208
EN: Mixtral's MoE kernel gains FP8 with dynamic per-tensor scaling."""


def test_emoji_marked_labels_a_bracketed_audience_and_an_english_gloss_are_read() -> None:
    parts = analyse_note(EMOJI_NOTE, REPO)
    assert parts.verdict == "必读"
    assert parts.audience == "跑 Mixtral 的同学"
    assert parts.why == "Mixtral's MoE kernel gains FP8 with dynamic per-tensor scaling"
    assert parts.highlights == ["走动态 per-tensor 缩放，不用转换 checkpoint"]
    assert parts.caveats == ["性能不是最优，优化留到后续 PR"]
    assert parts.people == ["pcmoritz"]
