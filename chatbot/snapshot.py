"""A snapshot of the parsed library and its index in CACHE_DIR, so that `serve` restarts fast
(bench/scale.py "`serve` 10k start to ready" < 3 s: 2.5 s from a snapshot, 17 s parsing).

Keyed by what made it: each digest and glossary file's (name, size, mtime_ns, hash) and a code
version (the parsing and indexing packages' files, Python, pydantic, `FORMAT`). The file holds
three pickles from one pickler (shared objects stay shared): the key, the entries and index, and
the per-file parses (read once the bot is ready; only a reload needs them). Pickle is safe only
because the file is ours, in this owner's cache directory; one that cannot be read is ignored
with one log line and rebuilt. Writes are atomic (a temporary file, then `os.replace`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pydantic

from chatbot.digest import Library
from chatbot.digest.library import digest_files, glossary_files
from chatbot.search import SearchIndex

log = logging.getLogger(__name__)

# Bump when the payload's layout changes in a way the code hash would not show.
FORMAT = 2
_PACKAGE = Path(__file__).resolve().parent
# What the parse and the index are made of: a change to any of these files invalidates snapshots.
CODE_PARTS = ("digest", "search", "text")
CODE_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".txt"}

FileKey = tuple[str, int, int, str]


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of everything that decides what a parse and an index build produce."""
    digest = hashlib.sha256(f"{FORMAT} {sys.version} pydantic {pydantic.VERSION}".encode())
    for part in CODE_PARTS:
        for path in sorted((_PACKAGE / part).rglob("*")):
            if path.is_file() and path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(_PACKAGE)).encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def folder_key(folder: Path) -> tuple[FileKey, ...]:
    """(name, size, mtime_ns, sha256) of every digest and glossary file of the folder: the
    same files `Library` reads and watches."""
    keys: list[FileKey] = []
    for path in [*digest_files(folder), *glossary_files(folder)]:
        try:
            st = path.stat()
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue  # gone since the listing: the library will not see it either
        keys.append((path.name, st.st_size, st.st_mtime_ns, content))
    return tuple(keys)


@dataclass(frozen=True)
class Key:
    """What a snapshot was made from."""

    code: str
    folder: str
    files: tuple[FileKey, ...]

    @classmethod
    def of(cls, folder: Path) -> Key:
        return cls(code_version(), str(folder), folder_key(folder))

    def stamp(self) -> tuple[tuple[str, int, int], ...]:
        """The library's own change stamp (name, mtime_ns, size) for these files."""
        return tuple((name, mtime, size) for name, size, mtime, _ in self.files)


class Snapshots:
    """The snapshot of one digest folder in a cache directory."""

    def __init__(self, cache_dir: Path, folder: Path) -> None:
        self.folder = Path(folder)
        name = hashlib.sha256(str(self.folder.resolve()).encode()).hexdigest()[:16]
        self.path = Path(cache_dir) / f"library-{name}.pickle"
        self._rest: tuple[Any, pickle.Unpickler, Library, Key] | None = None

    def load(self, key: Key, into: Library) -> SearchIndex | None:
        """Fill the (empty) library `into` from the snapshot saved under `key` and return its
        index; None (and one log line saying why) when there is none or it cannot be read."""
        try:
            file = self.path.open("rb")
        except (FileNotFoundError, NotADirectoryError):
            log.info("no digest snapshot at %s yet", self.path)
            return None
        except OSError as exc:
            log.warning("cannot read the digest snapshot %s: %s", self.path, exc.strerror or exc)
            return None
        # One unpickler for the three parts: objects they share (entries) are shared again.
        unpickler = pickle.Unpickler(file)
        try:
            if unpickler.load() != key:
                log.info("the digest snapshot %s is stale (digest files or code changed)", self.path)
                file.close()
                return None
            index = _restore(into, key, unpickler.load())
        except Exception as exc:  # truncated, corrupt, an old layout: rebuilt, never fatal
            file.close()
            log.warning(
                "ignoring the unreadable digest snapshot %s (%s: %s)", self.path, type(exc).__name__, exc
            )
            return None
        self._rest = (file, unpickler, into, key)
        return index

    def finish(self) -> None:
        """Read the per-file parses, so a reload re-parses only changed files (unless one came first)."""
        if self._rest is None:
            return
        file, unpickler, library, key = self._rest
        self._rest = None
        try:
            with file:
                parsed = unpickler.load()
        except Exception as exc:
            log.warning("ignoring the rest of the digest snapshot %s (%s)", self.path, type(exc).__name__)
            return
        with library._lock:
            if library._stamp == key.stamp() and not library._parsed:
                library._parsed = parsed

    def save(self, key: Key, library: Library, index: SearchIndex) -> bool:
        """Write the snapshot atomically; False (one log line) when the cache is not writable or
        the library changed since `key` was taken."""
        if library._stamp != key.stamp():
            log.info("not saving a digest snapshot: the folder changed while it was loaded")
            return False
        payload = {"entries": library.entries, "problems": library.problems, "index": index}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=self.path.name, suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as file:
                    pickler = pickle.Pickler(file, protocol=pickle.HIGHEST_PROTOCOL)
                    for part in (key, payload, library._parsed):
                        pickler.dump(part)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.warning("cannot write the digest snapshot %s: %s", self.path, exc.strerror or exc)
            return False
        return True


def _restore(library: Library, key: Key, payload: dict[str, Any]) -> SearchIndex:
    """The library as `Library.load` would have left it, and its index. The library's private
    state is set here and in `Snapshots.save` only: this module is its persisted form."""
    index = payload["index"]
    if not isinstance(index, SearchIndex):
        raise TypeError(f"the payload holds a {type(index).__name__}, not a search index")
    entries = payload["entries"]
    with library._lock:
        library.entries = entries
        library._found = payload["problems"]
        library._parsed = {}  # until `Snapshots.finish`; a reload before then parses every file
        library._by_id = {entry.id: entry for entry in entries}
        library._stamp = key.stamp()
        library.generation += 1
    return index
