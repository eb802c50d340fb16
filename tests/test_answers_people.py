"""Who wrote or reviewed an entry, when the note names nobody: said so, not another intent's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.answers.answerer import Answerer
from chatbot.digest.library import Library

NOBODY = "vllm-project/vllm\n\nKV offload 新条目\n\n值得精读。注意：KV offload 事件的新坑。\n"


@pytest.mark.parametrize(
    ("question", "intent", "said"),
    [
        ("who wrote this?", "people", "The note names no author and no people."),
        # Who reviewed is not who wrote (issue 25): reviewers named, else none is.
        ("who reviewed it?", "reviewers", "Neither the note nor the metadata names a reviewer."),
        ("谁写的？", "people", "笔记没写作者，也没提到人。"),
    ],
)
def test_an_entry_without_author_or_people_says_nobody_is_named(
    question: str, intent: str, said: str, tmp_path: Path
) -> None:
    (tmp_path / "nobody.txt").write_text(NOBODY, encoding="utf-8")
    library = Library.load(tmp_path)
    (entry,) = library.entries
    assert entry.author is None and entry.people == []
    answer = Answerer(library).answer(entry, question)
    assert answer.intent == intent
    assert answer.text.splitlines()[0] == said
    assert not answer.found
