"""The digest library: every digest file of a folder, loaded, merged and kept fresh.

A broken file is reported (file:line) and skipped; the rest still loads. Files added or
changed while the bot runs are picked up by `refresh()`, a cheap mtime check that re-parses only
the files whose mtime or size changed (the parsed entries of the others are reused). A symlink
that loops or points nowhere is reported with its path. Problems are collected, not logged:
whoever loaded the library reports them once (the CLI prints them, the server logs them).
"""

from __future__ import annotations

import operator
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatbot.digest.model import (
    NOTE_PARTS,
    DigestParseError,
    Entry,
    Metadata,
    Problem,
    checked_entry,
    cut_parts,
    entry_fields,
    entry_values,
    merged_from,
    set_merged_parts,
    values_id,
)
from chatbot.digest.names import find_known_people
from chatbot.digest.note import note_parts
from chatbot.digest.people import KnownPeople, known_people
from chatbot.digest.rawtext import Finding, decide, digest_name, parse_raw_text, title_pr
from chatbot.digest.structured import is_glossary_file, parse_structured

RAW_SUFFIXES = {".txt", ".md"}
STRUCTURED_SUFFIXES = {".yaml", ".yml"}
DIGEST_SUFFIXES = RAW_SUFFIXES | STRUCTURED_SUFFIXES


# An entry's field values in field order (`entry_values`).
Row = tuple[Any, ...]
# Where a file keeps one of its entries: its list of entries and the index in it.
Slot = tuple[list[Entry | Row], int]


@dataclass(frozen=True)
class LoadedFile:
    """What one file contributed: entries with a note, what its items without one add to the
    entries of their titles (this file's or another's; in item order), and problems (`found`: the verdict checks among them are decided when
    `problems` is read). An entry that is not itself in the library (metadata was merged into a
    copy of it) is kept as its field values (`Row`), which the copy shares: two full entries per
    merged one were a sixth of the library's memory."""

    path: Path
    entries: list[Entry | Row]
    metadata: list[Metadata]
    found: list[Finding]
    people: Mapping[str, list[str]] = field(default_factory=dict)  # `ParseResult.people`

    @property
    def problems(self) -> list[Problem]:
        return decide(self.found, {e.id: e for e in self.entries if isinstance(e, Entry)})


def scan_folder(folder: Path) -> tuple[list[Path], list[Problem]]:
    """Digest files of a folder in a stable order, and the symlinks that lead nowhere (a loop, a
    missing target). Glossaries and hidden files are not digests."""
    if folder.is_file():
        return [folder], []
    try:
        children = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        return [], [Problem(str(folder), 0, "error", f"cannot list the digest folder: {exc.strerror}")]
    files: list[Path] = []
    problems: list[Problem] = []
    for p in children:
        found = _child(p)
        if isinstance(found, Problem):
            problems.append(found)
        elif found is not None:
            files.append(found)
    return files, problems


def _child(p: Path) -> Path | Problem | None:
    """A child of the digest folder as a digest file, a problem (a broken symlink, a folder
    named like a digest) or nothing to read (hidden and editor files, glossaries, others)."""
    if p.name.startswith("."):
        return None
    if p.is_symlink():
        problem = _dangling(p)
        if problem is not None:
            return problem
    if p.suffix.lower() not in DIGEST_SUFFIXES or is_glossary_file(p):
        return None
    if p.is_file():
        return p
    if p.is_dir():
        return Problem(str(p), 0, "error", "a folder named like a digest file: not read")
    return None


def _dangling(link: Path) -> Problem | None:
    """A Problem for a symlink that loops or whose target is missing; None when it resolves."""
    try:
        link.resolve(strict=True)
    except (RuntimeError, OSError) as exc:  # RuntimeError: a loop (Python 3.11), OSError: ELOOP/ENOENT
        try:
            target = os.readlink(link)
        except OSError:
            target = "?"
        looped = isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40
        what = "symlink loop" if looped else "symlink to a missing file"
        return Problem(str(link), 0, "error", f"{what} ({link.name} -> {target}); skipped")
    return None


def digest_files(folder: Path) -> list[Path]:
    """Digest files of a folder in a stable order; glossaries and hidden files are not digests."""
    return scan_folder(folder)[0]


def glossary_files(folder: Path) -> list[Path]:
    """Curator glossary files of a digest folder (`glossary.yaml`, `*.glossary.yaml`)."""
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.is_file() and is_glossary_file(p)), key=lambda p: p.name)


def load_file(path: Path) -> LoadedFile:
    """Parse one file of either form; a parse error becomes a Problem, never an exception."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        byte = exc.object[exc.start]
        message = f"not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}: {exc.reason}); save it as UTF-8"
        problem = Problem(str(path), line, "error", message)
        return LoadedFile(path, [], [], [problem])
    except OSError as exc:
        return LoadedFile(path, [], [], [Problem(str(path), 1, "error", f"cannot read: {exc.strerror}")])
    try:
        if path.suffix.lower() in STRUCTURED_SUFFIXES:
            result = parse_structured(text, str(path))
            return LoadedFile(path, [*result.entries], result.metadata, result.found, result.people)
        raw = parse_raw_text(text, str(path))
        return LoadedFile(path, [*raw.entries], [], raw.found)
    except DigestParseError as exc:
        return LoadedFile(path, [], [], [exc.problem])


def merge_entries(
    files: Sequence[LoadedFile], previous: Mapping[str, Entry]
) -> tuple[list[Entry], list[Problem]]:
    """One entry per id: text from the file that has the note, metadata filled in from the
    others. Each file keeps an entry as is when the library has it unchanged, else its values.
    An entry made again from the very note of the `previous` load's entry of its id takes the
    parts that one has cut: a reload cuts only the notes of the files it parsed again."""
    notes: dict[str, list[Slot]] = {}
    metadata: dict[str, list[tuple[Metadata, LoadedFile]]] = {}
    authors: dict[str, str] = {}
    for loaded in files:
        for index, item in enumerate(loaded.entries):
            item_id = item.id if isinstance(item, Entry) else values_id(item)
            notes.setdefault(item_id, []).append((loaded.entries, index))
        for extra in loaded.metadata:
            _share_author(extra, authors)
            metadata.setdefault(extra.id, []).append((extra, loaded))
    metadata = _matched_elsewhere(metadata, notes)
    metadata, problems = _paired_by_content(metadata, notes)
    problems += [
        _unmatched(extra, loaded)
        for entry_id, extras in metadata.items()
        if entry_id not in notes
        for extra, loaded in extras
    ]
    merged = [_merged(slots, [e for e, _ in metadata.get(entry_id, [])]) for entry_id, slots in notes.items()]
    _take_parts(merged, previous)
    return merged, problems


def _matched_elsewhere(
    metadata: dict[str, list[tuple[Metadata, LoadedFile]]], notes: Mapping[str, list[Slot]]
) -> dict[str, list[tuple[Metadata, LoadedFile]]]:
    """Metadata whose title is no note's, given to the note of its PR: the one whose title ends
    with that PR (`… (#24343)`), else the only one whose title holds it (`中文标题 — English title`)."""
    if all(entry_id in notes for entry_id in metadata):
        return metadata
    by_pr: dict[int, str] = {}
    titles: dict[str, str] = {}
    for entry_id, slots in notes.items():
        fields = _fields_of(*slots[0])
        titles[entry_id] = str(fields["title"]).casefold()
        if fields.get("pr"):
            by_pr.setdefault(int(fields["pr"]), entry_id)
    out: dict[str, list[tuple[Metadata, LoadedFile]]] = {}
    for entry_id, extras in metadata.items():
        target = entry_id if entry_id in notes else _note_of(extras[0][0], by_pr, titles) or entry_id
        out.setdefault(target, []).extend(extras)
    return out


PAIRED = 3  # evidence a note is an item's: its PR named (10), its author (3), its title's words (1 each)


def _paired_by_content(
    metadata: dict[str, list[tuple[Metadata, LoadedFile]]], notes: Mapping[str, list[Slot]]
) -> tuple[dict[str, list[tuple[Metadata, LoadedFile]]], list[Problem]]:
    """Items whose title is no note's (a curator titling in their own words above an English
    `.meta.yaml`), given to a note of their digest that has no metadata: the one that names the
    item's PR or author and its title's words, each pairing the only best on both sides; then,
    in a digest none of whose items a title reached (the curator's own titles throughout, not a
    typo in one) and as many items as such notes left, each by its place. Every pairing is a
    warning at the item's line, so a wrong one is seen, never silent."""
    items = {eid: extras[0] for eid, extras in metadata.items() if eid not in notes}
    if not items:
        return metadata, []
    free = _without_metadata(notes, metadata)
    pairs = _by_what_is_said(items, free)
    placed = _by_place(_untitled(metadata, notes, items, pairs), free, set(pairs.values()))
    problems = [_paired(items[i], free[n], i in placed) for i, n in {**pairs, **placed}.items()]
    out = {pairs.get(eid, placed.get(eid, eid)): extras for eid, extras in metadata.items()}
    return out, problems


def _without_metadata(
    notes: Mapping[str, list[Slot]], metadata: Mapping[str, object]
) -> dict[str, Mapping[str, Any]]:
    """The fields of the notes no metadata item reached and no title gave a PR."""
    fields = {eid: _fields_of(*slots[0]) for eid, slots in notes.items() if eid not in metadata}
    return {eid: f for eid, f in fields.items() if not f.get("pr")}


def _untitled(
    metadata: Mapping[str, list[tuple[Metadata, LoadedFile]]],
    notes: Mapping[str, list[Slot]],
    items: Mapping[str, tuple[Metadata, LoadedFile]],
    pairs: Mapping[str, str],
) -> dict[str, tuple[Metadata, LoadedFile]]:
    """The items left, of the digests none of whose items a title or PR reached."""
    titled = {_meta_digest(extras[0]) for eid, extras in metadata.items() if eid in notes}
    return {i: e for i, e in items.items() if i not in pairs and _meta_digest(e) not in titled}


def _paired(item: tuple[Metadata, LoadedFile], note: Mapping[str, Any], by_place: bool) -> Problem:
    extra, loaded = item
    how = "is at its place" if by_place else "names its PR or author"
    message = (
        f"metadata for {extra.title!r} given to {str(note['title'])[:60]!r}, whose note {how} (titles differ)"
    )
    return Problem(str(loaded.path), extra.line, "warning", message)


def _meta_digest(item: tuple[Metadata, LoadedFile]) -> str:
    return digest_name(str(item[1].path))


def _by_what_is_said(
    items: Mapping[str, tuple[Metadata, LoadedFile]], free: Mapping[str, Mapping[str, Any]]
) -> dict[str, str]:
    """Item id → note id, where the note says enough of the item and no other pairing ties."""
    scores = _scores(items, free)
    pairs: dict[str, str] = {}
    for score, item_id, note_id in scores:
        rivals = [1 for s, i, n in scores if s == score and (i == item_id) != (n == note_id)]
        if score >= PAIRED and item_id not in pairs and note_id not in pairs.values() and not rivals:
            pairs[item_id] = note_id
    return pairs


def _scores(
    items: Mapping[str, tuple[Metadata, LoadedFile]], free: Mapping[str, Mapping[str, Any]]
) -> list[tuple[int, str, str]]:
    """Each item and open note of its digest with the evidence between them, best first."""
    scores = (
        (_evidence(item[0], f), item_id, note_id)
        for item_id, item in items.items()
        for note_id, f in free.items()
        if f["digest"] == _meta_digest(item)
    )
    return sorted(scores, key=lambda t: -t[0])


def _by_place(
    items: Mapping[str, tuple[Metadata, LoadedFile]], free: Mapping[str, Mapping[str, Any]], taken: set[str]
) -> dict[str, str]:
    """Item id → note id in order, in each digest where as many items as open notes are left."""
    placed: dict[str, str] = {}
    for digest in {_meta_digest(item) for item in items.values()}:
        mine = [i for i, item in items.items() if _meta_digest(item) == digest]
        open_notes = sorted(
            (int(f["position"]), n) for n, f in free.items() if f["digest"] == digest and n not in taken
        )
        if len(mine) == len(open_notes):
            placed.update(zip(mine, (n for _, n in open_notes), strict=True))
    return placed


def _evidence(extra: Metadata, note: Mapping[str, Any]) -> int:
    text = f"{note['title']} {note['note']}".casefold()
    score = 10 if extra.pr is not None and re.search(rf"(?<!\d){extra.pr}(?!\d)", text) else 0
    if extra.author and re.search(rf"(?<![\w-]){re.escape(extra.author.casefold())}(?![\w-])", text):
        score += 3
    words = {w for w in re.findall(r"[a-z][a-z0-9_]{4,}", (extra.github_title or extra.title).casefold())}
    return score + min(sum(w in text for w in words), 3)


def _note_of(extra: Metadata, by_pr: Mapping[int, str], titles: Mapping[str, str]) -> str | None:
    if extra.pr is not None and extra.pr in by_pr:
        return by_pr[extra.pr]
    wanted = extra.title.casefold().strip()
    holding = [entry_id for entry_id, title in titles.items() if wanted and wanted in title]
    return holding[0] if len(holding) == 1 else None


def _fields_of(entries: list[Entry | Row], index: int) -> Mapping[str, Any]:
    item = entries[index]
    return item.__dict__ if isinstance(item, Entry) else entry_fields(item)


def _take_parts(entries: list[Entry], previous: Mapping[str, Entry]) -> None:
    """Give each entry the parts its previous entry cut from the same note object (so the same
    text), unless either has the parts of several notes merged."""
    for entry in entries:
        old = previous.get(entry.id)
        if (
            old is not None
            and old is not entry
            and old.note is entry.note
            and merged_from(old) is None
            and merged_from(entry) is None
        ):
            entry.__dict__.update(cut_parts(old))


def _merged(slots: list[Slot], extras: list[Metadata]) -> Entry:
    """The entry of the note copies at `slots` with the metadata of `extras`. Alone and without
    metadata, the parsed entry itself (its file keeps it as an entry again); else a new entry,
    and the files keep the copies' values: each parsed entry is let go before the merged one is
    made, which then takes its place in memory rather than a new one."""
    if len(slots) == 1 and not extras:
        entries, index = slots[0]
        item = entries[index]
        entry = item if isinstance(item, Entry) else checked_entry(entry_fields(item))
        entries[index] = entry
        return entry
    if len(slots) == 1:  # one note, metadata merged in (the usual `.meta.yaml`): no parts to merge
        fields = entry_fields(_values(*slots[0]))
        for extra in extras:
            _fill_metadata(fields, extra)
        return checked_entry(fields)
    first, *others = (_values(entries, index) for entries, index in slots)
    fields = entry_fields(first)
    copies: list[Mapping[str, Any]] = []  # the other copies, to merge the notes' parts
    for other in others:
        theirs = entry_fields(other)
        _fill(fields, theirs)
        copies.append(theirs)
    for extra in extras:
        _fill_metadata(fields, extra)
    entry = checked_entry(fields)
    _merge_parts(entry, [fields, *copies])
    return entry


def _values(entries: list[Entry | Row], index: int) -> Row:
    """The values of the entry at `index`, which its file keeps from now on instead of it."""
    item = entries[index]
    if isinstance(item, Entry):
        item = entries[index] = entry_values(item)
    return item


def _unmatched(extra: Metadata, loaded: LoadedFile) -> Problem:
    message = f"metadata for {extra.title!r} matches no entry with a note (check the title)"
    return Problem(str(loaded.path), extra.line, "warning", message)


_LIST_FIELDS = ("tags", "related", "refs", "people", "identifiers")


_SCALAR_FIELDS = ("pr", "url", "github_title", "author", "date")


def _fill(
    ours: dict[str, Any],
    theirs: Mapping[str, Any],
    scalars: Iterable[str] = _SCALAR_FIELDS,
    lists: Iterable[str] = _LIST_FIELDS,
) -> None:
    """Fill the empty fields (or parts) from another copy; lists are unioned in order."""
    for name in scalars:
        if ours[name] in (None, "") and theirs[name] not in (None, ""):
            ours[name] = theirs[name]
    for name in lists:
        ours[name] = _union(ours[name], theirs[name])


# What a metadata item adds to lists: its tags, related refs and the title's code names.
_METADATA_LISTS = ("tags", "related", "identifiers")


def _fill_metadata(ours: dict[str, Any], meta: Metadata) -> None:
    """What a metadata item adds, as another copy's fields would: the empty PR fields filled,
    its lists unioned in order. Its PR number is the curator's fact and outranks one read off the
    title's end (`… (#10395)` may be the issue the PR fixes, not the PR)."""
    theirs = dict(zip(_METADATA_FIELDS, _METADATA_OF(meta), strict=True))
    if meta.pr is not None and ours["pr"] != meta.pr and _pr_from_title(ours):
        ours["pr"], ours["url"] = meta.pr, meta.url
    _fill(ours, theirs, lists=_METADATA_LISTS)
    if meta.title == ours["title"]:
        _share(meta, "title", ours["title"])


def _pr_from_title(fields: Mapping[str, Any]) -> bool:
    """Whether the entry's PR is only the number its title ends with (another copy's PR stays)."""
    return fields["pr"] is not None and title_pr(fields["repo"], fields["title"]).get("pr") == fields["pr"]


def _share_author(meta: Metadata, authors: dict[str, str]) -> None:
    """One string per handle across a load's metadata records (and the entries they fill)."""
    if meta.author:
        _share(meta, "author", authors.setdefault(meta.author, meta.author))


def _share(meta: Metadata, name: str, value: str) -> None:
    """Give a kept metadata record an equal string another object holds: a `.meta.yaml` repeats
    its note file's titles, and the same handles over and over (at 10k entries 2.1 MiB of copies;
    sharing them here, where each record is in hand, costs nothing like a pass after loading)."""
    object.__setattr__(meta, name, value)  # frozen against changes; this is not one


_METADATA_FIELDS = (*_SCALAR_FIELDS, *_METADATA_LISTS)
_METADATA_OF = operator.attrgetter(*_METADATA_FIELDS)


def _merge_parts(entry: Entry, copies: list[Mapping[str, Any]]) -> None:
    """Give the entry of several copies with a note (a repeated title: rare) the parts of all
    notes: the first note's filled and unioned with the others', as fields are. An entry with
    metadata only merged in keeps its own note's, cut on first read: metadata adds no note."""
    first, *others = copies
    notes = [first, *(values for values in others if values["note"])]
    if len(notes) < 2:
        return
    cut = [note_parts(values["note"]) for values in notes]
    verdicts = [(values["note"], parts.verdict) for values, parts in zip(notes, cut, strict=True)]
    merged = {name: getattr(cut[0], name) for name in NOTE_PARTS}
    for parts in cut[1:]:
        theirs = {name: getattr(parts, name) for name in NOTE_PARTS}
        _fill(merged, theirs, ("verdict", "why", "audience"), ("highlights", "caveats"))
    set_merged_parts(entry, merged, verdicts)


def _union(base: list[Any], extra: list[Any]) -> list[Any]:
    """`base` (as it is, repeats kept) then the items of `extra` it lacks, each once. `base`
    itself when `extra` adds nothing, `extra` itself when it is all that is added (the usual
    metadata: the note's entry has no tags, no related refs): entries and metadata share, never
    change, their lists."""
    if not extra:
        return base
    if not base:  # all of `extra` is added, each once
        added = list(dict.fromkeys(extra))
        return extra if len(added) == len(extra) else added
    seen = set(base)
    added = [item for item in dict.fromkeys(extra) if item not in seen]
    return [*base, *added] if added else base


# List fields whose items repeat across entries: handles, code names, tags; references.
_STRING_LISTS = ("people", "identifiers", "tags")
_REF_LISTS = ("refs", "related")
_REF_KEY = operator.attrgetter("number", "url")  # a `Ref`'s own hash is a Python call


def read_digest_people(entries: list[Entry], files: Iterable[LoadedFile]) -> None:
    """Add to each entry's people the digests' own people its note names bare (PR authors and
    reviewers, `people:` of a `.meta.yaml`): the bundled maintainers were read at parse time."""
    extra = _digest_people(files)
    if not extra:
        return
    known = KnownPeople.of(extra)
    for entry in entries:
        named = find_known_people(entry.note, known)
        if named and not set(named) <= set(entry.people):
            # A field made again from the same note and files: set where the parse left it.
            entry.__dict__["people"] = list(dict.fromkeys([*entry.people, *named]))


def _digest_people(files: Iterable[LoadedFile]) -> dict[str, list[str]]:
    """The handles (with names) the files name that the bundled list does not know as such."""
    bundled = known_people()
    extra: dict[str, list[str]] = {}
    for loaded in files:
        for handle, names in loaded.people.items():
            new_names = [n for n in names if n not in bundled.names]
            if bundled.handle(handle) is None or new_names:
                extra.setdefault(handle, []).extend(new_names)
    return extra


def share_list_items(entries: list[Entry]) -> None:
    """One object per equal item of the entries' lists. The parsers make a new string or `Ref`
    for every occurrence, and a library names the same handles, code names, tags and PRs in
    thousands of entries: 4.5 MiB of copies at 10k entries. The lists are changed in place, to
    equal items, so whatever else holds them (a file's metadata and merged copies) shares too;
    nothing else changes an entry's lists. C-level calls only: it runs on every load."""
    pool: dict[object, object] = {}
    share = pool.setdefault
    for entry in entries:
        fields = entry.__dict__
        for name in _STRING_LISTS:
            items = fields[name]
            if items:
                items[:] = map(share, items, items)
        for name in _REF_LISTS:
            items = fields[name]
            if items:
                items[:] = map(share, map(_REF_KEY, items), items)


def pr_problems(entries: Iterable[Entry], files: Iterable[LoadedFile]) -> list[Problem]:
    """A PR number is how an entry is named (`vllm-digest ask 54537`, link previews, the PR of
    the day): a second entry with the same PR is an error at its text. An entry without a PR
    that no metadata item names, in a digest whose metadata file gives the others' PRs, is a
    warning: its item is missing there, or its title there has a typo."""
    described, named = _described(files)
    problems: list[Problem] = []
    first: dict[int, Entry] = {}
    for entry in entries:
        if entry.pr is None:
            if entry.digest in described and entry.id not in named:
                title = entry.title[:60]
                message = f"no PR number: {described[entry.digest]} has no item titled {title!r} (a typo?)"
                problems.append(Problem(*_place(entry.source), "warning", message))
            continue
        seen = first.setdefault(entry.pr, entry)
        if seen is not entry:
            message = (
                f"PR {entry.pr} is also the PR of {seen.title[:60]!r} ({seen.source}): one PR, one entry"
            )
            problems.append(Problem(*_place(entry.source), "error", message))
    return problems


def _described(files: Iterable[LoadedFile]) -> tuple[dict[str, str], set[str]]:
    """The digests whose metadata files (`x.meta.yaml` beside `x.txt`: items without a note only)
    give PR numbers, by their names, with each file's name; and the ids metadata items name."""
    digests: dict[str, str] = {}
    named: set[str] = set()
    for loaded in files:
        named.update(meta.id for meta in loaded.metadata)
        if not loaded.entries and any(meta.pr is not None for meta in loaded.metadata):
            digests.setdefault(digest_name(str(loaded.path)), loaded.path.name)
    return digests, named


def _place(source: str) -> tuple[str, int]:
    """The file and line of an entry's `source` (`path:line`)."""
    path, _, line = source.rpartition(":")
    return (path, int(line)) if line.isdigit() else (source, 0)


# The library's order: by digest, then place in it.
_sort_key = operator.attrgetter("digest", "position")


@dataclass
class Library:
    """All entries of a digest folder; `refresh()` reloads only when a file changed."""

    folder: Path
    entries: list[Entry] = field(default_factory=list)
    # The problems as found; `problems` decides the verdict checks among them on first read.
    _found: list[Finding] = field(default_factory=list)
    _decided: tuple[list[Finding], list[Problem]] = ([], [])
    generation: int = 0
    _stamp: tuple[tuple[str, int, int], ...] = ()
    _by_id: dict[str, Entry] = field(default_factory=dict)
    # What each file gave at its (mtime, size): unchanged files are not parsed again.
    _parsed: dict[Path, tuple[tuple[int, int], LoadedFile]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Held while the verdict checks are decided: a second reader waits for that list.
    _deciding: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, folder: Path) -> Library:
        library = cls(Path(folder))
        library.refresh()
        return library

    def _current_stamp(self) -> tuple[tuple[str, int, int], ...]:
        """Name, mtime and size of every digest and glossary file: a glossary edit is a change
        too (whoever watches `generation` rebuilds the search index with it)."""
        try:
            files = digest_files(self.folder) + glossary_files(self.folder)
        except OSError:
            return ()
        stamp = []
        for p in files:
            try:
                st = p.stat()
            except OSError:
                continue
            stamp.append((p.name, st.st_mtime_ns, st.st_size))
        return tuple(stamp)

    def refresh(self) -> bool:
        """Reload when any file was added, removed or changed; True when the entries were reloaded.
        Only changed files are parsed again. Safe to call from several threads."""
        with self._lock:
            stamp = self._current_stamp()
            if stamp == self._stamp and self.generation:
                return False
            problems: list[Finding] = []
            if not self.folder.exists():
                problems.append(
                    Problem(str(self.folder), 0, "error", "digest folder does not exist (DIGEST_DIR)")
                )
            files, scan_problems = scan_folder(self.folder) if self.folder.exists() else ([], [])
            problems.extend(scan_problems)
            parsed: dict[Path, tuple[tuple[int, int], LoadedFile]] = {}
            for path in files:
                parsed[path] = self._load(path)
            loaded = [item for _, item in parsed.values()]
            for item in loaded:
                problems.extend(item.found)
            entries, merge_problems = merge_entries(loaded, self._by_id)
            problems.extend(merge_problems)
            read_digest_people(entries, loaded)
            share_list_items(entries)
            entries.sort(key=_sort_key)
            problems.extend(pr_problems(entries, loaded))
            self._parsed = parsed
            self._by_id = {e.id: e for e in entries}
            self.entries = entries
            self._found = problems
            self._stamp = stamp
            self.generation += 1
            return True

    def _load(self, path: Path) -> tuple[tuple[int, int], LoadedFile]:
        """The file's parse, reused while its mtime and size stay the same."""
        try:
            st = path.stat()
            key = (st.st_mtime_ns, st.st_size)
        except OSError:
            return (0, -1), load_file(path)
        cached = self._parsed.get(path)
        if cached is not None and cached[0] == key:
            return cached
        return key, load_file(path)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> Entry | None:
        """An entry by id, id prefix (≥4 chars), PR number (`54537`, `#54537`) or PR URL."""
        key = key.strip()
        if key in self._by_id:
            return self._by_id[key]
        number = key.rstrip("/").rsplit("/", 1)[-1].lstrip("#")
        if number.isdigit():
            for entry in self.entries:
                if entry.pr == int(number):
                    return entry
        if len(key) >= 4:
            matches = [e for e in self.entries if e.id.startswith(key)]
            if len(matches) == 1:
                return matches[0]
        return None

    @property
    def problems(self) -> list[Problem]:
        """Every problem of the loaded files, file:line. The first read after a load decides the
        verdict checks: every note not read yet is analysed then (about a second at 10k entries),
        not while loading."""
        with self._deciding:
            found, (decided_from, decided) = self._found, self._decided
            if decided_from is not found:
                decided = decide(found, self._by_id)
                self._decided = (found, decided)
            return decided

    @property
    def errors(self) -> list[Problem]:
        """The errors among the problems, without deciding the verdict checks (warnings, all of
        them): what a health check reads must not analyse the notes."""
        return [p for p in self._found if isinstance(p, Problem) and p.severity == "error"]
