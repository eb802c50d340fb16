"""The first answer about an entry, made cheaper without changing what it says: the note's parts
cut without its names, work remembered only within one answer, patterns spared by what their
matches must hold."""

from __future__ import annotations

from pathlib import Path

from chatbot.answers.answerer import _spelled
from chatbot.answers.candidates import _people_parts
from chatbot.digest import Entry, Library, analyse_note
from chatbot.digest.note import note_parts
from chatbot.text import once, one_answer

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("verdict", "why", "highlights", "audience", "caveats")


def parts_of(parts: object) -> list[object]:
    return [getattr(parts, name) for name in PARTS]


def test_an_entrys_parts_are_the_full_analysis_parts_for_every_bundled_note() -> None:
    entries = Library.load(ROOT / "digests").entries
    assert entries
    for entry in entries:
        assert parts_of(note_parts(entry.note)) == parts_of(analyse_note(entry.note, entry.repo, entry.title))


def test_a_lead_in_naming_a_person_is_no_list_whether_or_not_the_names_were_found() -> None:
    """`@bob 指出：A、B` quotes bob (the people are looked for only then); `看点：A、B` is a list."""
    quoted = "值得一读。\nbob 指出：缓存失效、锁竞争、重试风暴"
    listed = "值得一读。看点：缓存失效、锁竞争、重试风暴"
    for note in (quoted, listed):
        assert parts_of(note_parts(note)) == parts_of(analyse_note(note, "vllm-project/vllm"))
    assert note_parts(listed).highlights == ["缓存失效", "锁竞争", "重试风暴"]


def test_work_is_remembered_within_one_answer_only() -> None:
    calls: list[str] = []

    def compute() -> int:
        calls.append("x")
        return len(calls)

    assert once("t", "k", compute) == 1 and once("t", "k", compute) == 2  # outside: every time
    with one_answer():
        assert once("t", "k", compute) == 3
        with one_answer():  # a question of several: one memo
            assert once("t", "k", compute) == 3
        assert once("t", "other", compute) == 4
    with one_answer():  # the next answer remembers nothing of the last
        assert once("t", "k", compute) == 5


def test_a_denial_names_the_word_as_the_asker_spelled_it() -> None:
    assert _spelled("amd", "does it run on AMD cards?") == "AMD"
    assert _spelled("amd", "roamd and AmD") == "AmD"  # as a word, not inside one
    assert _spelled("h100", "H100呢") == "H100"
    assert _spelled("sk", "tas\u212a and \u017fK") == "\u017fK"  # Kelvin sign, long s: as `re.I` reads them
    assert _spelled("arm", "nothing here") == "arm"


def entry(note: str, people: list[str]) -> Entry:
    return Entry(
        id="x", repo="r/r", digest="d", position=1, title="t", note=note, people=people, source="f:1"
    )


def test_review_words_in_any_case_still_mark_a_clause_of_reviewers() -> None:
    bob = entry("n", ["bob"])
    assert _people_parts(bob, "REVIEWED BY bob") == ("people", "reviewers")
    assert _people_parts(bob, "REV\u0130EWED BY carol") == ("people", "reviewers")  # dotted capital I
    assert _people_parts(bob, "bob 在 review 中指出") == ("people", "reviewers")
    assert _people_parts(bob, "Nicolò Lucchesi (NickLucche) pushed back") == ("people", "reviewers")
    assert _people_parts(bob, "the scheduler change is small") == ()
