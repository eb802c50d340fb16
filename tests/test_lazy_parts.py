"""A note's parts (verdict, why, highlights, audience, caveats) are cut from it on first read.

Loading and indexing need only the refs, people and code names; the five parts are read when an
entry is shown or asked about. The note reader is wrapped to record what it cuts: the load + index
path (what `serve` waits for before it is ready) must not call it, and what readers get later
must be what an eager analysis gives — for the bundled digest and a 1k synthetic library
(`bench/corpus.py`), through the JSON export, the snapshot and merged entries alike.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chatbot.digest.note as note_module
from bench.corpus import PER_FILE, write_library
from chatbot.digest import Entry, Library, analyse_note, parse_raw_text
from chatbot.digest.model import NOTE_PARTS
from chatbot.digest.note_labels import NoteVocabulary
from chatbot.digest.note_layout import Section
from chatbot.live import LiveIndex
from chatbot.search import SearchIndex, load_glossary
from chatbot.snapshot import Snapshots

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = ROOT / "digests"
NO_VERDICT = "warning: note does not open with a verdict (e.g. 值得精读)"
# `list --json`: the parts stand where they stood when they were plain fields.
JSON_KEYS = [
    "id", "repo", "digest", "position", "title", "note",
    "verdict", "why", "highlights", "audience", "caveats",
    "refs", "people", "identifiers", "pr", "url", "github_title", "author", "date", "tags", "related",
    "source",
]  # fmt: skip


@pytest.fixture(scope="module")
def library_1k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bench's synthetic library at 1k entries: raw text plus a metadata row per entry."""
    return write_library(tmp_path_factory.mktemp("bench-1k"), 1000)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notes cut into their parts, in order (they still are cut). Recorded where every
    `analyse_note` cuts a note into sections, however the caller imported it."""
    calls: list[str] = []
    real = note_module.layout

    def recording(text: str, vocab: NoteVocabulary) -> list[Section]:
        calls.append(text)
        return real(text, vocab)

    monkeypatch.setattr(note_module, "layout", recording)
    return calls


def eager_parts(entry: Entry) -> dict[str, object]:
    parts = analyse_note(entry.note, entry.repo, entry.title)
    return {name: getattr(parts, name) for name in NOTE_PARTS}


def lazy_parts(entry: Entry) -> dict[str, object]:
    return {name: getattr(entry, name) for name in NOTE_PARTS}


@pytest.mark.parametrize("which", ["digests", "1k"])
def test_load_and_index_analyse_no_note(which: str, library_1k: Path, analysed: list[str]) -> None:
    folder = DIGESTS if which == "digests" else library_1k
    library = Library.load(folder)
    index = SearchIndex.build(library.entries, load_glossary(folder))
    assert index.search("cuda graph").hits  # the index was really built from the notes
    assert len(library) == (8 if which == "digests" else 1000)
    assert all(e.pr is not None for e in library)  # every metadata row merged, no note analysed
    assert analysed == []


@pytest.mark.parametrize("which", ["digests", "1k"])
def test_parts_read_later_are_the_eager_analysis(which: str, library_1k: Path, analysed: list[str]) -> None:
    library = Library.load(DIGESTS if which == "digests" else library_1k)
    for entry in library:
        assert lazy_parts(entry) == eager_parts(entry), entry.source
    # One analysis per entry for all five parts, whichever part is read first, and the one of
    # `eager_parts` beside it.
    assert len(analysed) == 2 * len(library)
    before = len(analysed)
    assert [lazy_parts(e) for e in library] and len(analysed) == before  # kept, not cut again


def test_the_problems_ready_the_parts_every_entry_reads(library_1k: Path, analysed: list[str]) -> None:
    """Deciding the verdict warnings (what `serve` does once it is ready) cuts each note once, and
    the merged entries (a metadata row each here) read their parts from what was cut."""
    library = Library.load(library_1k)
    assert library.problems == [] and len(analysed) == 1000
    assert all(lazy_parts(e) == eager_parts(e) for e in library)
    assert len(analysed) == 2000  # `eager_parts` only: no entry cut its note again
    # A reload re-parses the changed file only; the entries of the others keep what was cut.
    changed = library_1k / "bench-digest-00003.txt"
    os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 10**9))
    assert library.refresh()
    analysed.clear()
    assert library.problems == [] and [lazy_parts(e) for e in library]
    assert len(analysed) == sum(e.source.startswith(f"{changed}:") for e in library) == PER_FILE


def test_json_export_keeps_its_keys_in_order_with_the_parts(library_1k: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "list", "--json", str(library_1k)],
        capture_output=True,
        text=True,
        check=True,
    )
    exported = json.loads(done.stdout)
    library = Library.load(library_1k)
    assert [list(item) for item in exported] == [JSON_KEYS] * 1000
    for item, entry in zip(exported, library, strict=True):
        assert {name: item[name] for name in NOTE_PARTS} == eager_parts(entry)
        assert item == entry.model_dump(mode="json")
    assert all(item["verdict"] is not None for item in exported)  # every bench note has one


def no_verdict_folder(tmp_path: Path) -> Path:
    """A digest folder with notes without a verdict in both forms and a repeated title."""
    folder = tmp_path / "digests"
    folder.mkdir()
    (folder / "a.txt").write_text(
        "o/r\n\n"
        "甲\n\n值得精读。看点：A、B。\n\n"  # lines 3/5
        "乙\n\n就是一个说明。\n\n"  # 7/9: no verdict
        "甲\n\n另外一段说明。注意：C 会泄漏。\n",  # 11/13: repeated title, no verdict
        encoding="utf-8",
    )
    (folder / "b.yaml").write_text(
        "repo: o/r\nentries:\n"
        "  - title: 丙\n    note: 没有结论的说明。\n"  # line 3
        "  - title: 乙\n    pr: 7\n",
        encoding="utf-8",
    )
    return folder


def test_no_verdict_warnings_keep_their_file_line_and_order(tmp_path: Path, analysed: list[str]) -> None:
    folder = no_verdict_folder(tmp_path)
    library = Library.load(folder)
    assert library.errors == []  # what /healthz reads: the verdict checks are warnings, not decided
    assert analysed == ["值得精读。看点：A、B。", "另外一段说明。注意：C 会泄漏。"]  # the merge only
    assert [str(p) for p in library.problems] == [
        f"{folder / 'a.txt'}:9: {NO_VERDICT}",
        f"{folder / 'a.txt'}:11: warning: same title as the entry at line 3; merged",
        f"{folder / 'a.txt'}:13: {NO_VERDICT}",
        f"{folder / 'b.yaml'}:3: {NO_VERDICT}",
    ]
    assert library.problems is library.problems  # decided once per load
    validate = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "validate", str(folder)], capture_output=True, text=True
    )
    assert validate.returncode == 0
    assert validate.stdout.splitlines() == [str(p) for p in library.problems]


def test_a_repeated_title_merges_the_parts_of_both_notes(tmp_path: Path) -> None:
    folder = no_verdict_folder(tmp_path)
    merged = {e.title: e for e in Library.load(folder)}["甲"]
    first = analyse_note("值得精读。看点：A、B。", "o/r", "甲")
    second = analyse_note("另外一段说明。注意：C 会泄漏。", "o/r", "甲")
    assert merged.verdict == first.verdict == "值得精读"
    assert (merged.why, merged.audience) == (first.why or second.why, first.audience or second.audience)
    assert merged.highlights == [
        *first.highlights,
        *(h for h in second.highlights if h not in first.highlights),
    ]
    assert merged.caveats == [*first.caveats, *(c for c in second.caveats if c not in first.caveats)]
    assert "C 会泄漏" in " ".join(merged.caveats)


def test_a_repeated_title_still_warns_for_the_copy_without_a_verdict(
    tmp_path: Path, analysed: list[str]
) -> None:
    """The first copy of a repeated title has no verdict, the second has one: the merged entry
    takes the second's, yet the first copy is warned about, as a plain parse of it would be. The
    checks read the verdict each note was merged with: no note is cut again."""
    folder = tmp_path / "digests"
    folder.mkdir()
    (folder / "a.txt").write_text(
        "o/r\n\n甲\n\n就是一个说明。看点：X、Y。\n\n甲\n\n值得精读。看点：Y、Z。\n", encoding="utf-8"
    )
    (folder / "a.meta.yaml").write_text("repo: o/r\nentries:\n  - title: 甲\n    pr: 1\n", encoding="utf-8")
    library = Library.load(folder)
    (entry,) = library.entries
    assert (entry.verdict, entry.highlights, entry.pr) == ("值得精读", ["X", "Y", "Z"], 1)
    assert analysed == ["就是一个说明。看点：X、Y。", "值得精读。看点：Y、Z。"]  # merging them
    assert [str(p) for p in library.problems] == [
        f"{folder / 'a.txt'}:5: {NO_VERDICT}",
        f"{folder / 'a.txt'}:7: warning: same title as the entry at line 3; merged",
    ]
    assert len(analysed) == 2


def entries_alive() -> int:
    gc.collect()
    return sum(isinstance(item, Entry) for item in gc.get_objects())


def test_verdict_checks_keep_no_parsed_entry_alive(library_1k: Path) -> None:
    """A metadata row is merged into every bench entry: the files keep the parsed entries' values
    only, and the verdict checks (decided later) their notes: one entry per library entry stays
    alive, before and after the checks are decided."""
    before = entries_alive()
    library = Library.load(library_1k)
    assert entries_alive() - before == len(library) == 1000
    assert library.problems == []
    assert entries_alive() - before == 1000


def test_snapshot_round_trip_keeps_entries_parts_and_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = no_verdict_folder(tmp_path)
    shutil.copy(DIGESTS / "vllm-digest-2026-08.txt", folder)
    shutil.copy(DIGESTS / "vllm-digest-2026-08.meta.yaml", folder)
    caplog.set_level(logging.INFO)
    snapshots = Snapshots(tmp_path / "cache", folder)
    first = LiveIndex(Library(folder), snapshots=snapshots)
    second = LiveIndex(Library(folder), snapshots=snapshots)
    assert (first.loaded_from, second.loaded_from) == ("digest files", "snapshot")
    dumped = [e.model_dump(mode="json") for e in first.library]
    assert [e.model_dump(mode="json") for e in second.library] == dumped
    assert second.library.problems == first.library.problems
    assert sum(NO_VERDICT in str(p) for p in second.library.problems) == 3
    fresh = Library.load(folder)
    assert [lazy_parts(e) for e in second.library] == [lazy_parts(e) for e in fresh]


def test_serve_is_ready_before_any_note_is_analysed_and_logs_the_warnings(
    tmp_path: Path, analysed: list[str], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = no_verdict_folder(tmp_path)
    live = LiveIndex(Library(folder), load=False)
    ready_when_analysed: list[bool] = []
    recording = note_module.layout

    def noting_readiness(text: str, vocab: NoteVocabulary) -> list[Section]:
        ready_when_analysed.append(live.ready())
        return recording(text, vocab)

    monkeypatch.setattr(note_module, "layout", noting_readiness)
    caplog.set_level(logging.WARNING, logger="chatbot.live")
    live.load()
    # The two notes of the repeated title are merged while loading; every other note after.
    assert ready_when_analysed == [False, False, True, True]
    logged = [r.getMessage() for r in caplog.records if r.name == "chatbot.live"]
    assert logged == [str(p) for p in live.library.problems]
    assert sum(NO_VERDICT in line for line in logged) == 3


def test_an_explicit_part_wins_and_the_others_still_come_from_the_note(seed_library: Library) -> None:
    entry = seed_library.entries[0]
    copy = entry.model_copy(update={"why": "given"})
    assert copy.why == "given"
    assert (copy.verdict, copy.highlights) == (entry.verdict, entry.highlights)
    with pytest.raises(ValueError, match="verdict"):
        Entry(**{**entry.model_dump(exclude=set(NOTE_PARTS)), "verdict": "passed as a field"})


NOTE_TEXT = st.text(
    alphabet="值得精读推荐测试风险注意适合：，。；重点关注一是二是Worth reading. Focus: A B#12 `x_y`\n",
    max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(first=NOTE_TEXT, second=NOTE_TEXT)
def test_parsed_entries_read_the_parts_an_eager_parse_gives(first: str, second: str) -> None:
    notes = ["\n".join(line for line in n.splitlines() if line.strip()) or "x" for n in (first, second)]
    text = "o/r\n\n" + "".join(f"T{i}\n\n{n}\n\n" for i, n in enumerate(notes))
    try:
        result = parse_raw_text(text, "h.txt")
    except ValueError:
        return  # a note that reads as a broken layout: a parse error, not this test's concern
    for entry in result.entries:
        assert lazy_parts(entry) == eager_parts(entry)
        assert list(entry.model_dump()) == JSON_KEYS
    assert [str(w) for w in result.warnings] == [  # a note starts two lines below its title
        f"h.txt:{int(e.source.rsplit(':', 1)[1]) + 2}: {NO_VERDICT}"
        for e in result.entries
        if eager_parts(e)["verdict"] is None
    ]
