"""Why a change was made is its own kind of question: the bare "why"/"为什么" asks for the reason,
weakly, so any other kind the question names still leads ("为什么会崩" is the cause, "为什么值得读"
the verdict, "为什么用长度断言会漏测" the tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.answers.answerer import Answerer
from chatbot.answers.intents import classify
from chatbot.digest import Library

DIGEST = """vllm-project/vllm

Default wheel CUDA 12.1 -> 12.4 #12098

值得一读。发布 wheel 的默认 CUDA 从 12.1 升到 12.4。评审里 @youkaichao 发现 `.buildkite/release-pipeline.yaml` 里两步都在用 12.4 构建，@khluu 指出 12.1 那一步应该保持 `12.1.0`。@mgoin 的理由就一句：是时候和 PyTorch 默认的 CUDA 版本对齐了。注意：12.1 的 wheel 还要继续保留。

Pin NIXL in CI #45843

可跳过。CI 临时把 NIXL 钉在 1.2.0，因为 1.3.0 弄挂了几个测试；自己搭 PD 环境时别把 NIXL 跟得太新。
"""


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
    tmp_path: Path, pr: str, question: str, expect: str
) -> None:
    (tmp_path / "d.txt").write_text(DIGEST, encoding="utf-8")
    library = Library.load(tmp_path)
    entry = library.get(pr)
    assert entry is not None
    answer = Answerer(library).answer(entry, question)
    assert answer.found and expect in answer.text, answer.text
