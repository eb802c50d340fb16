"""The curator's raw text form: a repository slug line, then title and note paragraphs.

```
vllm-project/vllm

<title>

<note>
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from chatbot.digest.entry_layout import MAX_TITLE, read_pairs
from chatbot.digest.glued import unglued
from chatbot.digest.model import (
    DigestParseError,
    Entry,
    Metadata,
    Problem,
    checked_entry,
    entry_id,
    merged_from,
)
from chatbot.digest.note import found_names, note_parts
from chatbot.digest.refs import pull_url

SLUG_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*)/[A-Za-z0-9._-]+$")
# The repository line as curators write it: `owner/name`, its GitHub address (`https://github.com/
# owner/name`, `.git`, a closing `/`), either as a Markdown heading (`# owner/name`).
_SLUG_LINE_RE = re.compile(
    r"(?:#{1,6}[ \t]+)?(?:https?://(?:www\.)?github\.com/"
    r"([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+?)(?:\.git)?/?|([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+))"
)
# A Markdown heading's marker, which a `.md` digest's titles may carry (`## 修复 …`).
_HEADING_RE = re.compile(r"#{1,6}[ \t]+(?=\S)")
NO_VERDICT = "note does not open with a verdict (e.g. 值得精读)"


@dataclass(frozen=True, slots=True)
class VerdictCheck:
    """The NO_VERDICT warning of one note, decided when the problems are read, not when the file
    is parsed: whether a note has a verdict takes the whole note cut into its parts, which loading
    does not do (`Entry` reads its parts on first use). It keeps the note, not its parsed entry:
    a file keeps a parsed entry that metadata was merged into as its values only, and the check
    reads the verdict of the entry users see, which then keeps the analysis."""

    id: str
    note: str
    repo: str
    path: str
    line: int

    @classmethod
    def of(cls, entry: Entry, path: str, line: int) -> VerdictCheck:
        return cls(entry.id, entry.note, entry.repo, path, line)

    def problem(self, entries: Mapping[str, Entry]) -> Problem | None:
        """The warning, if the note has no verdict."""
        verdict = self._verdict(entries.get(self.id))
        return None if verdict is not None else Problem(self.path, self.line, "warning", NO_VERDICT)

    def _verdict(self, entry: Entry | None) -> str | None:
        """The verdict of the entry of this id when it has this very note and its parts are that
        note's (its analysis is then the one users' entry keeps), or the verdict it was given for
        this note when it was merged from several (a repeated title); else this note's own."""
        if entry is not None:
            merged = merged_from(entry)
            if merged is None and entry.note is self.note:
                return entry.verdict
            for note, verdict in merged or ():
                if note is self.note:
                    return verdict
        return note_parts(self.note).verdict


Finding = Problem | VerdictCheck


def decide(found: Iterable[Finding], entries: Mapping[str, Entry]) -> list[Problem]:
    """The problems of `found` in their order, each verdict check decided where it stands against
    the entries (by id) it was found for."""
    problems: list[Problem] = []
    for item in found:
        problem = item.problem(entries) if isinstance(item, VerdictCheck) else item
        if problem is not None:
            problems.append(problem)
    return problems


@dataclass
class ParseResult:
    """Entries of one file (items with a note), what its items without a note add to entries
    of other files, and the warnings (not errors) met on the way, some not decided yet."""

    entries: list[Entry]
    found: list[Finding] = field(default_factory=list)
    metadata: list[Metadata] = field(default_factory=list)
    # Handles (with the names written for them) a digest's notes may name bare: its `people:`,
    # its items' authors and reviewers. Read once the library is merged (`Library`).
    people: dict[str, list[str]] = field(default_factory=dict)

    @property
    def warnings(self) -> list[Problem]:
        return decide(self.found, {entry.id: entry for entry in self.entries})


def digest_name(path: str) -> str:
    """`vllm-digest-2026-08.meta.yaml` and `vllm-digest-2026-08.txt` name the same digest."""
    name = PurePath(path).name
    for suffix in (".txt", ".md", ".yaml", ".yml"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.removesuffix(".meta")


def paragraphs(text: str) -> list[tuple[int, list[str]]]:
    """Blocks of non-blank lines with the 1-based line number where each starts."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line.rstrip())
        elif current:
            blocks.append((start, current))
            current = []
    if current:
        blocks.append((start, current))
    return blocks


def parse_raw_text(text: str, path: str = "<text>") -> ParseResult:
    """Parse the raw form; raises DigestParseError naming the line of the first structural error."""
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DigestParseError(path, line, "NUL byte: this is not a text file")
    repo, rest = _slug_and_pairs(paragraphs(text), path)
    name = digest_name(path)
    entries: list[Entry] = []
    found: list[Finding] = []
    seen: dict[str, int] = {}
    markdown = path.lower().endswith(".md")
    layout_warnings: list[Problem] = []
    pairs = read_pairs(unglued(rest, path, layout_warnings, markdown), path, layout_warnings, markdown)
    found.extend(layout_warnings)
    for position, (title_block, (note_line, note_block)) in enumerate(pairs, start=1):
        title_line, title = _title(title_block, path)
        if markdown and title.startswith("#"):
            title = _HEADING_RE.sub("", title, count=1)
        note = "\n".join(line.strip() for line in note_block)
        ident = entry_id(repo, title)
        if ident in seen:
            found.append(
                Problem(path, title_line, "warning", f"same title as the entry at line {seen[ident]}; merged")
            )
        seen.setdefault(ident, title_line)
        entry = note_entry(
            ident,
            repo,
            name,
            position,
            title,
            note,
            source=f"{path}:{title_line}",
            **(title_pr(repo, title) or link_line_pr(repo, note)),
        )
        found.append(VerdictCheck.of(entry, path, note_line))
        entries.append(entry)
    return ParseResult(entries, found)


# A title that ends with its PR, as a squash commit does: `… (#14447)`, `… #14447`,
# `… · vllm-project/vllm#14447` (the digest's own repository; another's is a reference).
_TITLE_PR_RE = re.compile(r"[(\[（]?\s*(?:(?P<repo>[\w.-]+/[\w.-]+))?#(?P<number>\d{1,7})\s*[)\]）]?\s*$")


_POINTS_ELSEWHERE_RE = re.compile(
    r"(?:\b(?:reverts?|follow[- ]?up(?: to| of)?|fix(?:es)? for|see|after|to|of|for)|回滚|跟进|修复)\s*$",
    re.IGNORECASE,
)


# A card's title opening with its PR: `[#16035] V1 Spec Decode …`, `#16035 · …`, `PR 16035: …`.
_LEADING_PR_RE = re.compile(
    r"^\s*[\[(（]?\s*(?:(?P<repo>[\w.-]+/[\w.-]+))?(?:#|(?i:pr)\s*#?)(?P<number>\d{1,7})\s*[\])）:：·|-]"
)


def title_pr(repo: str, title: str) -> dict[str, Any]:
    """The PR a title names at its end (or opens with, as a card does), with its URL: a digest
    without PR metadata still links each entry to its PR (metadata, where a file has it, fills
    only what is empty)."""
    found = _TITLE_PR_RE.search(title) or _LEADING_PR_RE.search(title)
    if found is None or (found.group("repo") and found.group("repo").casefold() != repo.casefold()):
        return {}
    if _POINTS_ELSEWHERE_RE.search(title[: found.start()]):
        return {}  # `Revert #123`, `follow-up to #123`: the title names another PR
    number = int(found.group("number"))
    return {"pr": number, "url": pull_url(repo, number)}


# A line of the note that only links the PR: `PR: https://github.com/o/r/pull/123`, `:link: …`,
# `🔗 [#123](…)`, `- **Link:** <…>`.
_LINK_LINE_RE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:(?:PR|Link|URL|GitHub|链接|原\s*PR|PR\s*(?:link|链接))\s*(?:\*\*)?\s*[:：]"
    r"\s*(?:\*\*)?\s*|:link:\s*|🔗\s*)?<?(?:\[[^\]\n]*\]\()?https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/pull/"
    r"(?P<number>\d{1,7})[^\s)>]*\)?>?\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def link_line_pr(repo: str, note: str) -> dict[str, Any]:
    """The PR a note links on a line of its own, where the title names none (`## Faster MoE`
    over `PR: https://github.com/vllm-project/vllm/pull/123`); none where it links two."""
    if "/pull/" not in note:
        return {}
    numbers = {
        int(m.group("number"))
        for m in _LINK_LINE_RE.finditer(note)
        if m.group("repo").casefold() == repo.casefold()
    }
    if len(numbers) != 1:
        return {}
    number = numbers.pop()
    return {"pr": number, "url": pull_url(repo, number)}


def note_entry(
    ident: str, repo: str, name: str, position: int, title: str, note: str, **metadata: Any
) -> Entry:
    """An entry of either form: its place, its note and the names found in it, with what else the
    form knows (`source`, PR metadata). The note's other parts are cut when first read (`Entry`)."""
    refs, people, identifiers = found_names(note, repo, title)
    fields = {
        "id": ident,
        "repo": repo,
        "digest": name,
        "position": position,
        "title": title.strip(),
        "note": note,
        "refs": refs,
        "people": people,
        "identifiers": identifiers,
        **metadata,
    }
    return checked_entry(fields)


def _slug_and_pairs(
    blocks: list[tuple[int, list[str]]], path: str
) -> tuple[str, list[tuple[int, list[str]]]]:
    """The repository slug of the first paragraph and the (title, note) paragraphs after it."""
    if not blocks:
        raise DigestParseError(
            path, 1, "empty file: expected a repository slug (owner/name) on the first line"
        )
    slug_line, slug_block = blocks[0]
    written = slug_block[0].strip()
    slug = _SLUG_LINE_RE.fullmatch(written)
    if slug is None:
        raise DigestParseError(
            path, slug_line, f"expected a repository slug like owner/name, got {written[:60]!r}"
        )
    repo = slug.group(1) or slug.group(2)
    if len(slug_block) > 1:
        raise DigestParseError(
            path, slug_line + 1, "the slug line must be followed by a blank line before the first title"
        )
    rest = blocks[1:]
    if not rest:
        raise DigestParseError(
            path, slug_line, "no entries: expected title and note paragraphs after the slug"
        )
    return repo, rest


def _title(paragraph: tuple[int, list[str]], path: str) -> tuple[int, str]:
    """A title paragraph: one line, not as long as a note."""
    title_line, title_block = paragraph
    if len(title_block) > 1:
        raise DigestParseError(
            path,
            title_line + 1,
            "a title is one line; separate the title from its note with a blank line",
        )
    title = title_block[0].strip()
    if len(title) > MAX_TITLE:
        raise DigestParseError(path, title_line, f"title longer than {MAX_TITLE} characters: is it a note?")
    return title_line, title
