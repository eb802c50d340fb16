"""The digest library: every digest file of a folder, loaded, merged and kept fresh.

A broken file is reported (file:line) and skipped; the rest still loads. Files added or
changed while the bot runs are picked up by `refresh()`, a cheap mtime check that re-parses only
the files whose mtime or size changed (the parsed entries of the others are reused). A symlink
that loops or points nowhere is reported with its path. Problems are collected, not logged:
whoever loaded the library reports them once (the CLI prints them, the server logs them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatbot.digest.model import NOTE_PARTS, DigestParseError, Entry, Problem, compact, shared_parts
from chatbot.digest.rawtext import Finding, decide, parse_raw_text
from chatbot.digest.structured import is_glossary_file, parse_structured

RAW_SUFFIXES = {".txt", ".md"}
STRUCTURED_SUFFIXES = {".yaml", ".yml"}


@dataclass(frozen=True)
class LoadedFile:
    """What one file contributed: entries (possibly metadata-only) and problems (`found`: the
    verdict checks among them are decided when `problems` is read)."""

    path: Path
    entries: list[Entry]
    metadata_only: set[str]
    found: list[Finding]

    @property
    def problems(self) -> list[Problem]:
        return decide(self.found)


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
        if p.name.startswith("."):
            continue
        if p.is_symlink():
            problem = _dangling(p)
            if problem is not None:
                problems.append(problem)
                continue
        if p.is_file() and p.suffix.lower() in RAW_SUFFIXES | STRUCTURED_SUFFIXES and not is_glossary_file(p):
            files.append(p)
    return files, problems


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
        problem = Problem(str(path), line, "error", f"not UTF-8 text: {exc.reason} at byte {exc.start}")
        return LoadedFile(path, [], set(), [problem])
    except OSError as exc:
        return LoadedFile(path, [], set(), [Problem(str(path), 1, "error", f"cannot read: {exc.strerror}")])
    try:
        if path.suffix.lower() in STRUCTURED_SUFFIXES:
            result = parse_structured(text, str(path))
            return LoadedFile(path, result.entries, result.metadata_only, result.found)
        raw = parse_raw_text(text, str(path))
        return LoadedFile(path, raw.entries, set(), raw.found)
    except DigestParseError as exc:
        return LoadedFile(path, [], set(), [exc.problem])


def merge_entries(files: Iterable[LoadedFile]) -> tuple[list[Entry], list[Problem]]:
    """One entry per id: text from the file that has the note, metadata filled in from the others."""
    merged: dict[str, Entry] = {}
    metadata: dict[str, list[tuple[Entry, LoadedFile]]] = {}
    problems: list[Problem] = []
    for loaded in files:
        for entry in loaded.entries:
            if entry.id in loaded.metadata_only:
                metadata.setdefault(entry.id, []).append((entry, loaded))
            elif entry.id in merged:
                merged[entry.id] = _fill(merged[entry.id], entry)
            else:
                merged[entry.id] = entry
    for entry_id, extras in metadata.items():
        for extra, loaded in extras:
            if entry_id in merged:
                merged[entry_id] = _fill(merged[entry_id], extra)
            else:
                line = int(extra.source.rsplit(":", 1)[1])
                problems.append(
                    Problem(
                        str(loaded.path),
                        line,
                        "warning",
                        f"metadata for {extra.title!r} matches no entry with a note (check the title)",
                    )
                )
    return list(merged.values()), problems


_LIST_FIELDS = ("tags", "related", "refs", "people", "identifiers")


_SCALAR_FIELDS = ("pr", "url", "github_title", "author", "date")


def _fill(base: Entry, extra: Entry) -> Entry:
    """Fill the base entry's empty fields from another copy; lists are unioned in order. The
    note's parts likewise, but only from a copy with a note of its own (a repeated title: rare):
    a metadata row has none to add, so merging it has no note analysed, and the merged entry
    reads its parts from the base (`shared_parts`)."""
    # The fields, read without 30 attribute lookups.
    update = _filled(base.__dict__, extra.__dict__, _SCALAR_FIELDS, _LIST_FIELDS)
    if extra.note:
        ours = {name: getattr(base, name) for name in NOTE_PARTS}
        theirs = {name: getattr(extra, name) for name in NOTE_PARTS}
        update |= ours | _filled(ours, theirs, ("verdict", "why", "audience"), ("highlights", "caveats"))
    else:
        update |= shared_parts(base)
    return compact(base.model_copy(update=update))


def _filled(
    ours: dict[str, Any], theirs: dict[str, Any], scalars: Iterable[str], lists: Iterable[str]
) -> dict[str, Any]:
    """Our empty scalars filled from theirs, our lists unioned with theirs."""
    update = {
        name: theirs[name] for name in scalars if ours[name] in (None, "") and theirs[name] not in (None, "")
    }
    for name in lists:
        update[name] = _union(ours[name], theirs[name])
    return update


def _union(base: list[Any], extra: list[Any]) -> list[Any]:
    """`base` (as it is, repeats kept) then the items of `extra` it lacks, each once. `base`
    itself when `extra` adds nothing: entries share, never change, their lists."""
    seen = set(base)
    added = [item for item in dict.fromkeys(extra) if item not in seen]
    return [*base, *added] if added else base


def _sort_key(entry: Entry) -> tuple[str, int]:
    return (entry.digest, entry.position)


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
            entries, merge_problems = merge_entries(loaded)
            problems.extend(merge_problems)
            entries.sort(key=_sort_key)
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
                decided = decide(found)
                self._decided = (found, decided)
            return decided

    @property
    def errors(self) -> list[Problem]:
        """The errors among the problems, without deciding the verdict checks (warnings, all of
        them): what a health check reads must not analyse the notes."""
        return [p for p in self._found if isinstance(p, Problem) and p.severity == "error"]
