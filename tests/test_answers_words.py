"""Words read as written: a question word spelt right is not a typo of another cue ("why did
it" is not "who did it"), a cue ends at a word ("bench" is not in `benchislett`), a lone Chinese
character is no subject of a number, "没有给 X" says numbers are missing only when X is numbers,
"8bit" is "8 bit", and the honest line names the topic cut between words."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatbot.answers.answerer import TOPIC_CHARS, _clipped
from chatbot.answers.intents import read_question
from tests.answering import ask

DIGEST = """vllm-project/vllm

Capture sizes for spec decode #50001

值得一读。解码的捕获尺寸改成按请求数补齐。合入后 nightly 上两个 H200 的 spec-decode 任务挂掉，随即整体回滚 #50002，之后 #50003 只做窄修复。评审里 @njhill 要求把原来的四个修复拆开。

Video frames by fps #50010

值得一读。视频改按 fps 抽帧。单张 A100 上准确率从 0.711 到 0.774，吞吐从 2.16 req/s 降到 1.57 req/s。

V1 ngram proposer #50020

LiuXiaoxuanPKU 给 V1 加的第一版 ngram 投机解码，没有给 drafting 单独做 scheduler。WoosukKwon 后来更新了接口。

Marlin for GPTQ #50030

值得一读。只支持 4 bit：`GPTQ_MARLIN_SUPPORTED_NUM_BITS = [4]`，8 bit 不在这个 PR。benchislett 要一个非随机的 checkpoint。
"""


def test_a_question_word_spelt_right_is_no_typo_of_another() -> None:
    assert read_question("why did this get reverted").top == "motive"  # not "who did it"


def test_a_cue_ends_at_a_word() -> None:
    reading = read_question("what did benchislett want")
    assert "benchmark" not in reading.kinds
    assert "benchislett" in reading.subject


@pytest.mark.parametrize(
    ("pr", "question", "expect"),
    [
        ("50001", "why did this get reverted", "#50002"),  # the clause on the revert
        ("50010", "throughput 掉多少", "1.57 req/s"),  # 掉 is how it moves, not what
        ("50020", "who wrote the v1 ngram one", "LiuXiaoxuanPKU"),  # "没有给 drafting …" hides no numbers
        ("50030", "8bit gptq 能走 marlin 吗", "GPTQ_MARLIN_SUPPORTED_NUM_BITS"),  # the note says "8 bit"
        ("50030", "what did benchislett want", "非随机的 checkpoint"),
    ],
)
def test_the_note_answers(tmp_path: Path, pr: str, question: str, expect: str) -> None:
    answer = ask(tmp_path, DIGEST, pr, question)
    assert answer.found, answer.text
    assert expect in answer.text


def test_the_honest_line_names_the_topic_in_whole_words(tmp_path: Path) -> None:
    question = "does the newer frame picking change peak memory usage on small cards"
    answer = ask(tmp_path, DIGEST, "50010", question)
    assert not answer.found
    assert answer.text.splitlines()[0] == "The note doesn't cover newer frame picking change peak memory."


@given(st.lists(st.sampled_from(["ab", "cdef", "g", "hijklmn", "，", ",", " "]), max_size=40).map("".join))
def test_a_clipped_topic_is_short_and_cut_between_words(topic: str) -> None:
    clipped = _clipped(topic)
    assert len(clipped) <= TOPIC_CHARS
    assert topic.startswith(clipped)
    rest = topic[len(clipped) :]
    if rest and rest[0] not in ",，" and " " in clipped[TOPIC_CHARS // 2 + 1 :]:
        assert rest[0] == " "  # cut at a space, not inside a word
