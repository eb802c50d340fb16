"""Fuzzing both digest parsers from valid digests: generated, then broken.

The strategies build digests the parsers must accept (every example yields its entries, checked
against what was generated), then break them the way files get broken — a line deleted,
duplicated or moved, the file cut short, stray text or bad bytes injected. A broken digest
gives entries whose source line holds their title, or one `DigestParseError` / `Problem` whose
`file:line` lies inside the file; never another exception.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from chatbot.digest.library import load_file
from chatbot.digest.model import DigestParseError, Entry, Metadata, entry_id
from chatbot.digest.rawtext import ParseResult, parse_raw_text
from chatbot.digest.refs import pull_url
from chatbot.digest.structured import parse_structured

RAW_PATH = "fuzz/vllm-digest-2099-01.txt"
YAML_PATH = "fuzz/vllm-digest-2099-01.yaml"

SLUGS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,12}/[A-Za-z0-9._-]{1,16}", fullmatch=True)
# Letters (Latin and CJK), digits, punctuation and spaces: never a line break.
WORDS = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "Zs"), max_codepoint=0xFFFF),
    min_size=1,
    max_size=40,
)
ONE_LINE = WORDS.map(str.strip).filter(bool)
# A title does not end a sentence: a paragraph that does, where a title is due, is more of the
# note before it (a blank line inside a note).
TITLES = ONE_LINE.filter(lambda title: title[-1] not in "。！？；.")
NOTE_PIECES = st.one_of(
    ONE_LINE,
    st.sampled_from(
        [
            "重点关注两点：一是 A 设计；二是 B 测试。",
            "注意：#123 尚未合并。",
            "对 frontend 工程师有参考价值。",
        ]
    ),
    st.integers(1, 99999).map(lambda n: f"见 #{n}。"),
    st.integers(1, 99999).map(lambda n: f"https://github.com/vllm-project/vllm/pull/{n}"),
    st.just("`sched.py` 的 `_truncation_slice`"),
)
VERDICTS = st.sampled_from(["值得精读。", "值得精读，", "可以一读。", "Worth a read. ", ""])


@dataclass(frozen=True)
class RawDigest:
    """A raw-text digest and what parsing it must give."""

    lines: list[str]
    newline: str
    repo: str
    titles: list[str]
    notes: list[str]
    title_lines: list[int]

    @property
    def text(self) -> str:
        return self.newline.join(self.lines) + self.newline


@st.composite
def raw_digests(draw: st.DrawFn) -> RawDigest:
    """Slug, blank, then title / blank / note paragraphs; blank runs, padding, CRLF, a BOM."""
    repo = draw(SLUGS)
    gap = st.lists(st.sampled_from(["", "  ", "\t"]), min_size=1, max_size=3)
    lines = [*draw(st.lists(st.just(""), max_size=2)), repo]
    titles: list[str] = []
    notes: list[str] = []
    title_lines: list[int] = []
    for _ in range(draw(st.integers(1, 5))):
        lines += draw(gap)
        title = draw(TITLES)
        titles.append(title)
        lines.append(title + draw(st.sampled_from(["", " ", "  "])))
        title_lines.append(len(lines))
        lines += draw(gap)
        pieces = draw(st.lists(NOTE_PIECES, min_size=1, max_size=4))
        note_lines = [draw(VERDICTS) + pieces[0], *pieces[1:]]
        note_lines = [line.strip() for line in note_lines]
        notes.append("\n".join(note_lines))
        lines += note_lines
    lines += draw(st.lists(st.just(""), max_size=2))
    if draw(st.booleans()):
        lines[0] = "\ufeff" + lines[0]
    return RawDigest(lines, draw(st.sampled_from(["\n", "\r\n"])), repo, titles, notes, title_lines)


@given(raw_digests())
@settings(max_examples=150)
def test_valid_raw_digests_give_every_entry_at_its_line(digest: RawDigest) -> None:
    result = parse_raw_text(digest.text, RAW_PATH)
    event(f"{len(result.entries)} entries")
    assert [e.title for e in result.entries] == digest.titles
    assert [e.note for e in result.entries] == digest.notes
    assert [e.source for e in result.entries] == [f"{RAW_PATH}:{n}" for n in digest.title_lines]
    assert {e.repo for e in result.entries} == {digest.repo}
    assert [e.position for e in result.entries] == list(range(1, len(digest.titles) + 1))


@st.composite
def broken(draw: st.DrawFn, lines: list[str]) -> tuple[str, list[str]]:
    """One of the ways a file gets broken; (what was done, the lines after it)."""
    lines = list(lines)
    at = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["delete", "duplicate", "move", "truncate", "inject"]))
    if how == "delete":
        del lines[at]
    elif how == "duplicate":
        lines.insert(at, lines[at])
    elif how == "move":
        lines.insert(draw(st.integers(0, len(lines) - 1)), lines.pop(at))
    elif how == "truncate":
        text = "\n".join(lines)
        lines = text[: draw(st.integers(0, len(text)))].split("\n")
    else:
        junk = draw(
            st.one_of(st.text(max_size=20), st.sampled_from(["\x00", "\ufffd", "\u2028", "- [", ": :"]))
        )
        column = draw(st.integers(0, len(lines[at])))
        lines[at] = lines[at][:column] + junk + lines[at][column:]
    return how, lines


def check_error(exc: DigestParseError, path: str, text: str) -> None:
    assert 1 <= exc.line <= len(text.splitlines()) + 1, str(exc)
    assert str(exc).startswith(f"{path}:{exc.line}: ")
    assert exc.problem.line == exc.line and exc.problem.severity == "error"


def parse_broken(
    parse: Callable[[str, str], ParseResult], path: str, lines: list[str]
) -> tuple[str, ParseResult | None]:
    """Parse a broken digest: ("entries", the result) or ("error", None) after checking that the
    error names its file and a line of the text."""
    text = "\n".join(lines)
    try:
        return "entries", parse(text, path)
    except DigestParseError as exc:
        check_error(exc, path, text)
        return "error", None


def assert_reached_the_parser(outcomes: Counter[str], entries_floor: float) -> None:
    """The breakage reached the parser both ways: many still parse, many are reported. Each
    floor sits well below its rate, so it fails when the breakage stops reaching the parser,
    not by chance."""
    total = sum(outcomes.values())
    assert outcomes["entries"] >= total * entries_floor and outcomes["error"] >= total * 0.1, outcomes


def test_broken_raw_digests_give_entries_or_an_error_at_a_line() -> None:
    outcomes: Counter[str] = Counter()

    @given(raw_digests().flatmap(lambda d: broken(d.lines)))
    @settings(max_examples=300)
    def run(case: tuple[str, list[str]]) -> None:
        how, lines = case
        outcome, result = parse_broken(parse_raw_text, RAW_PATH, lines)
        numbered = "\n".join(lines).removeprefix("\ufeff").splitlines()
        for entry in result.entries if result else []:
            line = int(entry.source.rsplit(":", 1)[1])
            assert numbered[line - 1].strip() == entry.title
        event(f"{how}: {outcome}")
        outcomes[outcome] += 1

    run()
    assert_reached_the_parser(outcomes, entries_floor=0.3)


@dataclass(frozen=True)
class YamlDigest:
    text: str
    repo: str
    items: list[dict[str, object]]


TAGS = st.lists(st.sampled_from(["compile", "KV offload", "投机解码", "  frontend ", "moe"]), max_size=3)


@st.composite
def yaml_items(draw: st.DrawFn) -> dict[str, object]:
    item: dict[str, object] = {"title": draw(ONE_LINE)}
    if draw(st.sampled_from(["entry", "entry", "entry", "metadata"])) == "entry":  # some only add metadata
        pieces = draw(st.lists(NOTE_PIECES, min_size=1, max_size=4))
        item["note"] = draw(VERDICTS) + "\n".join(pieces)
    optional: dict[str, st.SearchStrategy[object]] = {
        "pr": st.integers(1, 99999),
        "author": st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True),
        "date": st.dates(dt.date(2020, 1, 1), dt.date(2030, 12, 31)),
        "tags": TAGS,
        "related": st.lists(st.integers(1, 99999), max_size=3),
        "github_title": ONE_LINE,
    }
    for name, values in optional.items():
        if draw(st.booleans()):
            item[name] = draw(values)
    return item


@st.composite
def yaml_digests(draw: st.DrawFn) -> YamlDigest:
    repo = draw(SLUGS)
    items = draw(st.lists(yaml_items(), min_size=1, max_size=4))
    data = {"repo": repo, "entries": items}
    text = yaml.safe_dump(
        data, allow_unicode=True, sort_keys=False, width=draw(st.sampled_from([40, 80, 10**6]))
    )
    return YamlDigest(text, repo, items)


@given(yaml_digests())
@settings(max_examples=150)
def test_valid_yaml_digests_give_every_item_with_its_metadata(digest: YamlDigest) -> None:
    result = parse_structured(digest.text, YAML_PATH)
    items = digest.items
    event(
        f"{sum('note' in i for i in items)} with notes, {sum('note' not in i for i in items)} metadata only"
    )
    assert [e.title for e in result.entries] == [str(i["title"]) for i in items if "note" in i]
    assert [m.title for m in result.metadata] == [str(i["title"]) for i in items if "note" not in i]
    # Every item, with or without a note, in file order: the same metadata read from each.
    rows = sorted([*result.entries, *result.metadata], key=item_line)
    assert [e.pr for e in rows] == [i.get("pr") for i in items]
    assert [e.url for e in rows] == [
        pull_url(digest.repo, int(str(i["pr"]))) if "pr" in i else None for i in items
    ]
    assert [e.date for e in rows] == [i.get("date") for i in items]
    assert [list(e.tags) for e in rows] == [
        [t.strip() for t in i.get("tags", [])]
        for i in items  # type: ignore[attr-defined]
    ]
    assert [[r.number for r in e.related] for e in rows] == [i.get("related", []) for i in items]
    assert [e.author for e in rows] == [i.get("author") for i in items]
    assert [m.id for m in result.metadata] == [
        entry_id(digest.repo, str(i["title"])) for i in items if "note" not in i
    ]
    item_lines = [n for n, line in enumerate(digest.text.splitlines(), start=1) if line.startswith("- ")]
    assert [item_line(e) for e in rows] == item_lines
    assert all(e.source == f"{YAML_PATH}:{item_line(e)}" for e in result.entries)


def item_line(row: Entry | Metadata) -> int:
    return row.line if isinstance(row, Metadata) else int(row.source.rsplit(":", 1)[1])


def test_broken_yaml_digests_give_entries_or_an_error_at_a_line() -> None:
    outcomes: Counter[str] = Counter()

    @given(yaml_digests().flatmap(lambda d: broken(d.text.splitlines())))
    @settings(max_examples=300)
    def run(case: tuple[str, list[str]]) -> None:
        how, lines = case
        outcome, result = parse_broken(parse_structured, YAML_PATH, lines)
        for row in [*result.entries, *result.metadata] if result else []:
            assert 1 <= item_line(row) <= len("\n".join(lines).splitlines())
        event(f"{how}: {outcome}")
        outcomes[outcome] += 1

    run()
    # About a third still parse (102 of 300 in one run): the floor is five deviations below.
    assert_reached_the_parser(outcomes, entries_floor=0.2)


BAD_BYTES = st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x00", b"\xe4\xbd"])


@given(
    st.one_of(raw_digests().map(lambda d: (".txt", d.text)), yaml_digests().map(lambda d: (".yaml", d.text))),
    BAD_BYTES,
    st.data(),
)
@settings(max_examples=100)
def test_bad_bytes_in_a_file_are_one_problem_at_their_line(
    form: tuple[str, str], bad: bytes, data: st.DataObject
) -> None:
    suffix, text = form
    raw = text.encode("utf-8")
    at = data.draw(st.integers(0, len(raw)))
    while at < len(raw) and (raw[at] & 0xC0) == 0x80:  # between characters, not inside one
        at += 1
    if raw[at - 1 : at] == b"\r" and raw[at : at + 1] == b"\n":
        at += 1  # not inside a CRLF either: a lone CR is a line end to some readers, not to others
    broken_bytes = raw[:at] + bad + raw[at:]
    line = broken_bytes[:at].count(b"\n") + 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"digest{suffix}"
        path.write_bytes(broken_bytes)
        loaded = load_file(path)
    assert loaded.entries == []
    (problem,) = loaded.problems
    assert (problem.path, problem.line, problem.severity) == (str(path), line, "error"), problem
