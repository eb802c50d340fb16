"""The live search index: the library loaded (from a snapshot when one matches), indexed, and
reloaded off the request path when a digest file changes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from chatbot.digest import Entry, Library, Problem
from chatbot.heap import build_long_lived
from chatbot.search import SearchIndex, SearchResult, load_glossary
from chatbot.search.semantic import SemanticIndex, SemanticSearch
from chatbot.snapshot import Key, Snapshots

log = logging.getLogger(__name__)


class LiveIndex:
    """The search index of a library (and its glossary), loaded once by `load()` (from a matching
    snapshot, else parsed), then rebuilt off the request path: a request at most starts a check
    (every `refresh_every` seconds) on a background thread and answers from the index it has.
    `generation` is that of the index being served, so cached answers match what was searched."""

    def __init__(
        self,
        library: Library,
        refresh_every: float = 2.0,
        *,
        snapshots: Snapshots | None = None,
        load: bool = True,
        semantic: SemanticIndex | None = None,
    ) -> None:
        self.library = library
        self.semantic = semantic
        self.refresh_every = refresh_every
        self.snapshots = snapshots
        self.loaded_from: str = ""  # "snapshot" or "digest files" once loaded
        self._newest_first: tuple[int, list[Entry]] = (-1, [])
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._reloading = False
        self._loaded = threading.Event()
        self._failed: str | None = None
        self._index: SearchIndex | None = None
        self._generation = 0
        self._checked = time.monotonic()
        if load:
            self.load()

    def load(self) -> None:
        """Load the library and its index; raises what failed. A snapshot is written after the index
        is in service, not before."""
        started = time.perf_counter()
        glossary_problems: list[Problem] = []
        try:
            key = Key.of(self.library.folder) if self.snapshots is not None else None
            index = self._restore(key)
            if index is None:
                index, glossary_problems = self._parse()
        except Exception as exc:
            self._failed = f"{type(exc).__name__}: {exc}"
            self._loaded.set()
            raise
        self._index, self._generation = index, self.library.generation
        self._checked = time.monotonic()
        self._loaded.set()
        self._embed(index)
        log.info(
            "loaded %d digest entries from the %s in %.2f s",
            len(self.library),
            self.loaded_from,
            time.perf_counter() - started,
        )
        if self.loaded_from == "snapshot" and self.snapshots is not None:
            build_long_lived(self.snapshots.finish)
            # The problems were saved with the snapshot: a broken file is reported on every start.
            self._report(index.glossary.problems)
        else:
            self._report(glossary_problems)
            self._save(key, index)

    def _save(self, key: Key | None, index: SearchIndex) -> None:
        if self.snapshots is not None and key is not None and self.snapshots.save(key, self.library, index):
            log.info("saved the digest snapshot %s", self.snapshots.path)

    def start_loading(self, then: Callable[[], None] = lambda: None) -> threading.Thread:
        """`load()` on a background thread, then `then()` when it succeeded."""

        def run() -> None:
            try:
                self.load()
            except Exception:
                log.exception("loading the digest folder %s failed", self.library.folder)
                return
            then()

        thread = threading.Thread(target=run, name="digest-load", daemon=True)
        thread.start()
        return thread

    def state(self) -> str:
        """The readiness check: "ok" once the library is loaded, else what is going on."""
        if self._failed is not None:
            return f"loading the digests failed: {self._failed}"
        return "ok" if self._loaded.is_set() else "loading the digests"

    def _restore(self, key: Key | None) -> SearchIndex | None:
        snapshots = self.snapshots
        if snapshots is None or key is None:
            return None
        restored = build_long_lived(lambda: snapshots.load(key, self.library))
        if restored is not None:
            self.loaded_from = "snapshot"
        return restored

    def _parse(self) -> tuple[SearchIndex, list[Problem]]:
        """Parse the folder (with the collector paused: entries live as long as the index) and
        build the index; the glossary's problems, for `_report`."""
        build_long_lived(self.library.refresh)
        built = self._build()
        self.loaded_from = "digest files"
        return built

    def current(self) -> SearchIndex:
        """The index to answer from now (waits for the first load); starts a check when one is due."""
        index = self._index
        if index is None:
            index = self._wait_loaded()
        if time.monotonic() - self._checked >= self.refresh_every:
            with self._lock:
                if not self._reloading and time.monotonic() - self._checked >= self.refresh_every:
                    self._reloading = True
                    threading.Thread(target=self._reload, name="digest-reload", daemon=True).start()
        return index

    def ready(self) -> bool:
        return self._index is not None

    def _wait_loaded(self) -> SearchIndex:
        self._loaded.wait()
        if self._index is None:
            raise RuntimeError(self.state())
        return self._index

    def _reload(self) -> None:
        try:
            if self.library.refresh():
                generation = self.library.generation
                index, glossary_problems = self._build()
                self._index, self._generation = index, generation
                self._report(glossary_problems)
                self._embed(index)
        except Exception:  # a reload must never take the bot down; the previous index stays
            log.exception("reloading the digest folder %s failed", self.library.folder)
        finally:
            with self._idle:
                self._reloading = False
                self._checked = time.monotonic()
                self._idle.notify_all()

    def wait_reloaded(self, timeout: float = 30.0) -> bool:
        """Check the folder now and wait until any reload has been swapped in (CLI, tests)."""
        if not self._loaded.wait(timeout):
            return False
        with self._idle:
            self._checked = -float("inf")
        self.current()
        with self._idle:
            return self._idle.wait_for(lambda: not self._reloading, timeout)

    def _embed(self, index: SearchIndex) -> None:
        """Semantic search's vectors on a background thread (lexical search until they are in)."""
        if self.semantic is not None:
            threading.Thread(target=self._prepare_vectors, args=(index,), name="embed", daemon=True).start()

    def _prepare_vectors(self, index: SearchIndex) -> None:
        semantic = self.semantic
        try:
            if semantic is not None and semantic.prepare(index.entries):
                log.info("semantic search ready: %d entry vectors", len(index.entries))
        except Exception:  # the store or the server failing: the search stays lexical
            log.exception("preparing the entry vectors failed; searching without them")

    def _build(self) -> tuple[SearchIndex, list[Problem]]:
        glossary = load_glossary(self.library.folder)
        return build_long_lived(lambda: SearchIndex.build(self.library.entries, glossary)), glossary.problems

    def _report(self, glossary_problems: list[Problem]) -> None:
        """Log the problems once the index is in service: the digests' verdict warnings analyse
        every note not read yet (a second of CPU at 10k entries)."""
        for problem in [*self.library.problems, *glossary_problems]:
            log.warning("%s", problem)

    @property
    def generation(self) -> int:
        self.current()
        return self._generation

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        index = self.current()
        if self.semantic is not None:
            return SemanticSearch(index, self.semantic).search(query, limit=limit, offset=offset)
        return index.search(query, limit=limit, offset=offset)

    def topics(self) -> list[tuple[str, int]]:
        return self.current().topics()

    def latest(self, count: int) -> Sequence[Entry]:
        """Newest entries first: by PR date, then digest and position."""
        self.current()
        generation = self.library.generation
        if self._newest_first[0] != generation:  # sorted once per library load, not per command
            ordered = sorted(
                self.library.entries,
                key=lambda e: (e.date.isoformat() if e.date else "", e.digest, e.position),
                reverse=True,
            )
            self._newest_first = (generation, ordered)
        return self._newest_first[1][:count]

    def entries(self) -> Sequence[Entry]:
        self.current()
        return self.library.entries

    def newest(self) -> Entry | None:
        """The PR of the day where there is no store (console, `build` without one): the newest entry."""
        newest = self.latest(1)
        return newest[0] if newest else None
