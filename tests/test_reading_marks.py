"""Notes pasted from Slack and other marked hands: emoji shortcodes as marks, `*label*` bold,
verdicts an emoji marks, hyphenated verdict tags, a rating after a verdict label, discussions as refs and
handles in Chinese prose (issue 26)."""

from __future__ import annotations

import pytest

from chatbot.digest import analyse_note
from chatbot.digest.names import find_people, find_refs
from chatbot.digest.rawtext import parse_raw_text

REPO = "vllm-project/vllm"


SLACK_NOTE = """:link: https://github.com/vllm-project/vllm/pull/4242
:white_check_mark: 建议看，调度器省掉一次 CPU 往返
*背景* 每步都重新建 block table，CPU 开销明显。
*要点*
• 复用上一步的 block table
• 只在有新 block 时增量更新
*review* @alice-dev 让作者补了 benchmark
*坑* :warning: 和 prefix cache 一起开时还没验证
*谁该看* 做调度器的人"""


def test_a_slack_paste_is_read_by_its_bold_labels_and_marked_verdict() -> None:
    parts = analyse_note(SLACK_NOTE, REPO)
    assert parts.verdict == "建议看"
    assert parts.why == "每步都重新建 block table，CPU 开销明显"
    assert parts.highlights == ["复用上一步的 block table", "只在有新 block 时增量更新"]
    assert parts.caveats == ["和 prefix cache 一起开时还没验证"]
    assert parts.audience == "做调度器的人"
    assert parts.people == ["alice-dev"]


@pytest.mark.parametrize(
    ("note", "verdict", "audience"),
    [
        ("• *结论* :zzz: 可跳过，除非你跑 TPU\n• *要点* 改了 sampler", "可跳过", None),
        ("*谁该看* 做 LoRA 的人 \u2705 建议看\n*要点* 加了一个 gauge", "建议看", "做 LoRA 的人"),
        ("\u2705 推荐阅读（做量化的同学）\n*要点* 新 kernel", "推荐阅读", "做量化的同学"),
        (
            "• 小改动，顺手删掉一层检查 \U0001f4a4 可跳过 https://github.com/vllm-project/vllm/pull/1234",
            "可跳过",
            None,
        ),
    ],
)
def test_a_verdict_an_emoji_marks_is_the_verdict_wherever_it_stands(
    note: str, verdict: str, audience: str | None
) -> None:
    parts = analyse_note(note, REPO)
    assert parts.verdict == verdict
    if audience is not None:
        assert parts.audience == audience


def test_markdown_emphasis_opening_a_line_is_no_slack_label() -> None:
    parts = analyse_note("*Note* that this only touches the docs.", REPO)
    assert parts.caveats == []
    assert parts.why == "*Note* that this only touches the docs"


def test_a_lone_slack_label_on_its_own_line_is_a_label() -> None:
    assert analyse_note("*坑*\n• 没测 TP\n• 没测 PP", REPO).caveats == ["没测 TP", "没测 PP"]


def test_an_emoji_marked_label_keeps_its_value() -> None:
    assert analyse_note("\U0001f4cc 推荐：值得精读。改了调度。", REPO).verdict == "值得精读"


@pytest.mark.parametrize(
    ("note", "verdict"),
    [
        ("[worth-a-look] Moves the sampler to the GPU. Who: sampler folks.", "worth-a-look"),
        ("[must-read] Breaking: positional arguments go.", "must-read"),
        ("[skip] typo fixes.", "skip"),
    ],
)
def test_a_hyphenated_verdict_tag_is_the_verdict(note: str, verdict: str) -> None:
    assert analyse_note(note, REPO).verdict == verdict


@pytest.mark.parametrize(
    ("note", "verdict"),
    [
        ("作者把 ngram 的张量留在 GPU 上。坑在于加速不明显。打分 6/10，做投机解码的有空再看。", "打分 6/10"),
        ("作者把 ngram 的张量留在 GPU 上。评分 4/5。", "评分 4/5"),
        ("作者把 ngram 的张量留在 GPU 上。打分 8/10，建议精读。", "建议精读"),
    ],
)
def test_a_rating_after_a_verdict_label_is_the_verdict(note: str, verdict: str) -> None:
    assert analyse_note(note, REPO).verdict == verdict


def test_a_rating_without_a_verdict_label_is_a_number() -> None:
    assert analyse_note("吞吐 6/10 的请求变快了。改了调度。", REPO).verdict is None


def test_discussions_are_refs_and_a_link_line_is_no_why() -> None:
    note = "🔗 https://github.com/vllm-project/vllm/pull/3000\n设计见 https://github.com/vllm-project/vllm/discussions/2999 。"
    assert [r.number for r in find_refs(note, REPO)] == [3000, 2999]
    assert analyse_note(note, REPO).why == "设计见 https://github.com/vllm-project/vllm/discussions/2999"


@pytest.mark.parametrize(
    ("note", "people"),
    [
        ("不过 plops42 在评论里质疑这算不算启用。", ["plops42"]),
        ("评论里 abc-de-fgh 提到显存高很多。", ["abc-de-fgh"]),
        ("@rasmith, reviewed-by Michael Goin, who says tests cover it.", ["rasmith", "mgoin"]),
        ("思路和 hermes parser 的 #16096 类似。", []),
        ("不过 triton 在这里发现了问题。", []),  # a word, not a handle's shape
    ],
)
def test_handles_in_prose_are_read_by_their_shape_and_verb(note: str, people: list[str]) -> None:
    assert find_people(note) == people


@pytest.mark.parametrize(
    ("note", "verdict"),
    [
        # a short question of the curator's own, answered on its line, asks whether to read it
        (
            "@a moved fp8 quant behind CustomOp.\n\n中文：非 forward 路径仍用 CUDA kernel。\n\nRead? yes — 想搞懂 quant fusion 的必读",
            "结论",
        ),
        # a verdict in a clause of the closing sentence, after an opinion
        (
            "moves fp8 quant onto CustomOp. merged. 这个写法很妙 tbh, def read this if u touch compile passes.",
            "def read this",
        ),
        # ... inside the section a label opened earlier in the paragraph
        (
            "runs the ngram lookup on the leader only. related: #31288. numbers are wild, def read this if u run ngram.",
            "def read this",
        ),
        # how little to read is a verdict
        (
            "replaces the punica kernels. closed w/o merge. small diff, 真香 — 只看 diff 就够.",
            "真香 — 只看 diff 就够",
        ),
    ],
)
def test_casual_and_asked_verdicts(note: str, verdict: str) -> None:
    parts = analyse_note(note, REPO)
    assert parts.verdict is not None and parts.verdict.startswith(verdict), parts.verdict


def test_two_labels_on_one_line_and_pros_cons() -> None:
    """`Why it matters: … | People: …` is two labelled lines; Cons are caveats, Pros points."""
    note = (
        "What: fixes multi-LoRA with TP>=2\n"
        "Why it matters: 生产上 SQL 输出错乱 | People: charent (author), @jeejeelee\n"
        "Cons: 只在 LRU cache 满时触发，测试没覆盖 | Verdict: 4/5 必读"
    )
    parts = analyse_note(note, REPO)
    assert parts.caveats == ["只在 LRU cache 满时触发，测试没覆盖"]
    assert parts.verdict is not None and "4/5" in parts.verdict
    assert "jeejeelee" in parts.people


def test_a_run_of_names_sharing_one_predicate_is_one_point() -> None:
    """`A、B、C 都还在 TODO 里` says one thing of all three; `A、B` after a colon is a list."""
    parts = analyse_note("限制：head size 必须是 128；tensor-parallel、INT8 量化、MoE 都还在 TODO 里", REPO)
    read = [*parts.highlights, *parts.caveats]
    assert any(p.endswith("tensor-parallel、INT8 量化、MoE 都还在 TODO 里") for p in read), read
    listed = analyse_note("看点：复用 block table、只在有新 block 时增量更新", REPO)
    assert listed.highlights == ["复用 block table", "只在有新 block 时增量更新"]


@pytest.mark.parametrize(
    ("note", "person"),
    [
        ("**TL;DR:** wenscarl 加的 Qwen2-VL 支持。", "wenscarl"),
        ("值得看。后续 huydhn 想换成 12.6，cliffwoolley 说应该直接 12.8。", "cliffwoolley"),
        ("值得看。mkhazraee 在 review 里建议 parser 名字别分开。", "mkhazraee"),
    ],
)
def test_a_bare_handle_opening_a_clause_before_what_people_do_is_a_person(note: str, person: str) -> None:
    """After a Markdown label (`**TL;DR:**`) or a comma, before 说/建议/加的…: someone's doing."""
    (entry,) = parse_raw_text(f"vllm-project/vllm\n\nT (#1)\n\n{note}\n", "d.txt").entries
    assert person in entry.people
