"""Thread replies in phrasings the rules were not written from (tests/threads_heldout.yaml):
colloquial forms, bare follow-ups, several questions at once, quotes, long messages, chatter."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from chatbot.answers import Answer, Answerer, addressed_to_bot, classify
from chatbot.digest import Entry, Library
from tests.conftest import DIGESTS

CASES = yaml.safe_load((Path(__file__).parent / "threads_heldout.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def answerer() -> tuple[Library, Answerer]:
    library = Library.load(DIGESTS)
    return library, Answerer(library)


def ask(answerer: tuple[Library, Answerer], pr: int, question: str) -> tuple[Entry, Answer]:
    library, bot = answerer
    entry = library.get(str(pr))
    assert entry is not None, pr
    return entry, bot.answer(entry, question)


@pytest.mark.parametrize("case", CASES["questions"], ids=lambda c: c["q"][:40])
def test_question_gets_its_kind_and_the_right_part_of_the_note(answerer, case: dict) -> None:  # type: ignore[no-untyped-def, type-arg]
    entry, answer = ask(answerer, case["pr"], case["q"])
    assert (answer.intent, answer.found) == (case["intent"], case.get("found", True)), answer.text
    assert all(part in answer.text for part in case["expect"]), answer.text
    assert len(answer.text.removesuffix(entry.url or "\0").rstrip()) < 0.75 * len(entry.note)


@pytest.mark.parametrize("case", CASES["several"], ids=lambda c: c["q"][:40])
def test_every_question_of_a_message_is_answered_under_one_link(answerer, case: dict) -> None:  # type: ignore[no-untyped-def, type-arg]
    entry, answer = ask(answerer, case["pr"], case["q"])
    assert all(part in answer.text for part in case["expect"]), answer.text
    assert answer.text.count(entry.url or "\0") == 1 and answer.text.endswith(entry.url or "\0")
    assert len(answer.text.removesuffix(entry.url or "\0").rstrip()) < 0.75 * len(entry.note)


@pytest.mark.parametrize("case", CASES["none"], ids=lambda c: c["q"])
def test_what_the_note_does_not_cover_is_one_honest_line(answerer, case: dict) -> None:  # type: ignore[no-untyped-def, type-arg]
    entry, answer = ask(answerer, case["pr"], case["q"])
    assert not answer.found, answer.text
    line, link = answer.text.split("\n")
    assert link == entry.url and entry.title not in line


@pytest.mark.parametrize("text", CASES["chatter"])
def test_chatter_is_left_alone(text: str) -> None:
    assert not addressed_to_bot(text)


@pytest.mark.parametrize("text", CASES["asks"])
def test_questions_without_a_question_mark_are_for_the_bot(text: str) -> None:
    assert addressed_to_bot(text)


@pytest.mark.parametrize(("intent", "text"), CASES["kinds"], ids=lambda v: str(v)[:40])
def test_a_phrasing_is_for_the_bot_and_asks_its_kind(intent: str, text: str) -> None:
    assert addressed_to_bot(text)
    assert classify(text) == intent
