"""Asking one question of a digest written for the test: shared by the answer tests."""

from __future__ import annotations

from pathlib import Path

from chatbot.answers import Answer, Answerer
from chatbot.digest import Library


def ask(folder: Path, digest: str, pr: str, question: str, name: str = "d.txt") -> Answer:
    """The answer to a question on one entry of a digest written to `folder`."""
    (folder / name).write_text(digest, encoding="utf-8")
    library = Library.load(folder)
    entry = library.get(pr)
    assert entry is not None
    return Answerer(library).answer(entry, question)
