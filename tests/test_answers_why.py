"""The two whys. Why a change was made is its own kind of question: the bare "why"/"为什么" asks
for the reason, weakly, so any other kind the question names still leads ("为什么会崩" is the
cause, "为什么值得读" the verdict, "为什么用长度断言会漏测" the tests). Whether to read it is answered
by the note's verdict, and where the note gives none, by saying so."""

from __future__ import annotations

import pytest

from chatbot.answers.answerer import Answer, Answerer
from chatbot.answers.asking import asking_part
from chatbot.answers.intents import classify
from chatbot.digest import Library

DIGEST = """vllm-project/vllm

Default wheel CUDA 12.1 -> 12.4 #12098

值得一读。发布 wheel 的默认 CUDA 从 12.1 升到 12.4。评审里 @youkaichao 发现 `.buildkite/release-pipeline.yaml` 里两步都在用 12.4 构建，@khluu 指出 12.1 那一步应该保持 `12.1.0`。@mgoin 的理由就一句：是时候和 PyTorch 默认的 CUDA 版本对齐了。注意：12.1 的 wheel 还要继续保留。

Pin NIXL in CI #45843

可跳过。CI 临时把 NIXL 钉在 1.2.0，因为 1.3.0 弄挂了几个测试；自己搭 PD 环境时别把 NIXL 跟得太新。

Pipeline parallel over Ray in V1 #12996

ruisearch42 让 V1 引擎通过 Ray 在不同 pipeline-parallel worker 上跑拆开的模型层。youkaichao 要求测试里别用 monkeypatch 改环境变量。
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Library:
    folder = tmp_path_factory.mktemp("whys")
    (folder / "d.txt").write_text(DIGEST, encoding="utf-8")
    return Library.load(folder)


def ask(library: Library, pr: str, question: str) -> Answer:
    entry = library.get(pr)
    assert entry is not None
    return Answerer(library).answer(entry, question)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("why do we need this", "motive"),
        ("为啥要钉版本", "motive"),
        ("what's the point of it", "motive"),
        ("为什么会崩", "cause"),
        ("为什么值得读", "why"),
        ("why is this one in the digest", "why"),
        ("为什么用长度断言会漏测", "tests"),
    ],
)
def test_a_bare_why_asks_for_the_reason_unless_another_kind_is_named(question: str, kind: str) -> None:
    assert classify(question) == kind


@pytest.mark.parametrize(
    ("pr", "question", "expect"),
    [
        ("12098", "why bump the cuda version", "PyTorch 默认的 CUDA 版本"),
        ("45843", "为啥要钉版本", "因为 1.3.0 弄挂了几个测试"),
    ],
)
def test_a_why_question_is_answered_by_the_reason(
    library: Library, pr: str, question: str, expect: str
) -> None:
    answer = ask(library, pr, question)
    assert answer.found and expect in answer.text, answer.text


@pytest.mark.parametrize(
    ("pr", "question", "found", "expect"),
    [
        ("12996", "要不要看", False, "笔记没给出要不要读的结论。"),
        ("12996", "这个值得看吗 给个评分", False, "笔记没给出要不要读的结论。"),  # not "没提到给个"
        ("45843", "值得看吗", True, "可跳过"),
    ],
)
def test_whether_to_read_it_is_the_verdict_or_its_absence(
    library: Library, pr: str, question: str, found: bool, expect: str
) -> None:
    answer = ask(library, pr, question)
    assert answer.found is found and expect in answer.text.split("\n")[int(found)], answer.text  # it leads


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("tl;dr 这个pr想干嘛", "tl;dr 这个pr想干嘛"),  # the ; of tl;dr ends no sentence
        ("thanks; what's the catch", "what's the catch"),
        ("看完了。有啥风险", "有啥风险"),
    ],
)
def test_the_asking_part_of_a_reply(text: str, asked: str) -> None:
    assert asking_part(text, 300) == asked
