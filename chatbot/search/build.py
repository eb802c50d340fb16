"""Building the index's tables from the library's entries, in one pass.

Each field of each entry is cut into key numbers (its Latin stretches and Chinese runs) and
glossary matches, and posted under them at its level (`fields.py`). Notes repeat stretches
and runs, and tags, identifiers and handles recur: one build remembers their analyses
(`BuildMemo`) and drops them at its end. Per entry it keeps what display (how a field wrote a
concept) and Chinese phrase checks need; then the vocabulary the typo corrector chooses from
and the topic counts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

from chatbot.digest import Entry
from chatbot.search.display import Writings
from chatbot.search.fields import LEVEL, STRONG_FIELD, entry_fields
from chatbot.search.glossary import Glossary, KeyTest, MatchMemo, remember
from chatbot.search.hanfields import han_fields
from chatbot.search.postings import Postings
from chatbot.search.stopwords import GENERIC_WORDS
from chatbot.search.tokens import Kind, SplitText, run_keys, segment_words, split_text, tokenize


class Analysed(NamedTuple):
    """What one field contributes to the index."""

    keys: list[array[int]]  # key numbers per Latin stretch and Chinese run (pieces may share keys)
    segments: list[str]  # Latin stretches, for the vocabulary
    matches: tuple[tuple[str, str, str], ...]  # (concept, glossary term, as written)
    concepts: frozenset[str]
    concept_terms: frozenset[tuple[str, str]]
    han: str
    numbers: tuple[array[int], array[int]] = (array("I"), array("I"))  # of concepts, of terms


_NO_CONCEPTS: frozenset[str] = frozenset()
_NO_TERMS: frozenset[tuple[str, str]] = frozenset()


class BuildMemo(MatchMemo):
    """What one index build remembers and then drops: glossary matches and key numbers per
    distinct Latin stretch and Chinese run (notes repeat them), and the analyses of recurring
    fields. Nothing of it outlives the build: module-level caches would keep a library's worth
    of small objects for the life of the process."""

    def __init__(self, postings: Postings[str], glossary: Glossary) -> None:
        super().__init__()
        self.postings = postings
        self.glossary = glossary
        self.segment_numbers: dict[str, array[int]] = {}
        self.run_numbers: dict[str, array[int]] = {}
        self.analysed: dict[str, Analysed] = {}
        self.words: dict[str, str] = {}  # surface → key of the library's words, first seen first
        self._new_words: dict[str, list[tuple[str, str, Kind]]] = {}  # this entry's new stretches'
        self._cut: SplitText | None = None  # the text analysed last, and its key numbers
        self._pieces: list[array[int]] = []

    def key_numbers(self, cut: SplitText) -> list[array[int]]:
        """The key numbers of each Latin stretch and Chinese run of a text (a new stretch is
        matched against the glossary on the way, from the same keys)."""
        found = list(map(self.segment_numbers.get, cut.segments))
        found.extend(map(self.run_numbers.get, cut.han_runs))
        if None in found:
            pieces = [*cut.segments, *cut.han_runs]
            for i, number in enumerate(found):
                if number is None:
                    found[i] = self._segment(pieces[i]) if i < len(cut.segments) else self._run(pieces[i])
        self._cut, self._pieces = cut, cast("list[array[int]]", found)
        return self._pieces

    def _segment(self, segment: str) -> array[int]:
        words = self._new_words[segment] = segment_words(segment)
        keys = frozenset([key for key, _, _ in words])
        if segment not in self.segments:
            self.add_segment(self.glossary, segment, keys)
        return remember(self.segment_numbers, segment, self.postings.numbers(keys))

    def _run(self, run: str) -> array[int]:
        keys = run_keys(run)
        if run not in self.runs:
            self.add_run(self.glossary, run, keys)
        return remember(self.run_numbers, run, self.postings.numbers(keys))

    def collect_words(self, segments: list[str]) -> None:
        """Add the words of this entry's newly numbered stretches to the vocabulary, in order,
        each stretch once (its words were kept when it was numbered). A stretch numbered before
        had its words collected in that entry: no set of collected stretches is kept (at 100k
        entries it held every distinct stretch of the library). One numbered again after its
        memo started over adds nothing new: `setdefault` keeps each word's first place."""
        new_words = self._new_words
        for segment in segments:
            words = new_words.pop(segment, None)
            if words is not None:
                for key, surface, kind in words:
                    if kind != "ref":
                        self.words.setdefault(surface, key)

    def end_entry(self) -> None:
        self._new_words.clear()

    def key_test(self, text: SplitText) -> KeyTest:
        """For the text just numbered, a test on its key numbers (no key set gathered: its
        pieces' numbers joined in one array on first use, each key one C-level scan of it)."""
        if text is not self._cut:
            return super().key_test(text)
        pieces, number_of = self._pieces, self.postings.number_of
        joined: list[array[int]] = []

        def has_all(keys: tuple[str, ...]) -> bool:
            if not joined:
                joined.append(array("I", b"".join(pieces)))
            numbers = joined[0]
            return all(n is not None and n in numbers for n in map(number_of, keys))

        return has_all


@dataclass
class Tables:
    """What a build gives the index."""

    postings: Postings[str]  # token keys
    concepts: Postings[str]  # glossary concepts
    concept_terms: Postings[tuple[str, str]]  # (concept, term)
    concept_fields: Writings  # per entry, how its fields write the concepts they name
    han: list[str]  # per entry, its fields' Chinese text with their levels (`hanfields`)
    vocabulary: dict[str, str]  # casefolded surface → key: the typo corrector's choices
    topics: list[tuple[str, int]]  # topic label → entries, most first


def build_tables(entries: Sequence[Entry], glossary: Glossary) -> Tables:
    """The tables of an index over `entries`. A build allocates much and frees nothing: callers
    that own the process pause and freeze the collector around it (`chatbot.heap`)."""
    return _Builder(glossary).run(entries)


class _Builder:
    def __init__(self, glossary: Glossary) -> None:
        self.glossary = glossary
        self.tables = Tables(Postings(), Postings(), Postings(), Writings(), [], {}, [])
        self._ref_terms = any(key.startswith("#") for key in glossary.terms_by_first_key())

    def run(self, entries: Sequence[Entry]) -> Tables:
        """Fill the postings and the vocabulary; count the topics (title, tags, identifiers)."""
        tables = self.tables
        build = BuildMemo(tables.postings, self.glossary)
        topic_counts = self._index_entries(entries, build)
        words = build.words
        del build  # its memos served this build only
        for table in (tables.postings, tables.concepts, tables.concept_terms):
            table.finish()
        for surface, key in _glossary_words(self.glossary):
            words.setdefault(surface, key)
        tables.vocabulary = {s.casefold(): k for s, k in words.items() if s[0].isalpha()}
        tables.topics = sorted(topic_counts.items(), key=lambda kv: (-kv[1], kv[0].casefold()))
        return tables

    def _index_entries(self, entries: Sequence[Entry], build: BuildMemo) -> dict[str, int]:
        """Post every entry; return how many entries each topic label has."""
        topic_counts: dict[str, int] = {}
        plain_tags: dict[str, bool] = {}
        concept_labels = {c: self.glossary.label(c) for c in self.glossary.concepts}
        for index, entry in enumerate(entries):
            strong = self._index_entry(index, entry, build)
            labels = {concept_labels[c] for c in strong}
            labels.update(tag for tag in entry.tags if self._plain_tag(tag, plain_tags))
            for label in labels:
                topic_counts[label] = topic_counts.get(label, 0) + 1
        return topic_counts

    def _analyse(self, text: str, recurs: bool, build: BuildMemo) -> tuple[Analysed, bool]:
        """Keys, glossary concepts and Chinese text of one field, and whether it is new.
        Recurring fields (tags, identifiers, handles) are analysed once per build; titles and
        notes are not kept (they rarely repeat, and a build would hold all their analyses)."""
        cached = build.analysed.get(text)
        if cached is not None:
            return cached, False
        if text[0] == "#" and text[1:].isascii() and text[1:].isdigit() and not self._ref_terms:
            # `#12345` (the PR, its references): one key, no glossary term, nothing to display;
            # not kept (cheaper made again than held: most PR numbers occur once or twice).
            number = self.tables.postings.number(f"#{int(text[1:])}")
            return Analysed([number], [], (), _NO_CONCEPTS, _NO_TERMS, ""), False
        cut = split_text(text)
        keys = build.key_numbers(cut)
        matches = tuple(self.glossary.find_in(cut, build))
        if matches:
            concepts = frozenset([m[0] for m in matches])
            terms = frozenset([m[:2] for m in matches])
            numbers = (self.tables.concepts.numbers(concepts), self.tables.concept_terms.numbers(terms))
            analysed = Analysed(keys, cut.segments, matches, concepts, terms, cut.han, numbers)
        else:  # most fields name no concept: no sets made for them
            analysed = Analysed(keys, cut.segments, matches, _NO_CONCEPTS, _NO_TERMS, cut.han)
        if recurs:
            build.analysed[text] = analysed
        return analysed, True

    def _index_entry(self, index: int, entry: Entry, build: BuildMemo) -> set[str]:
        """Post one entry's fields and keep what display and phrase checks need; return the
        concepts its strong fields name."""
        analysed = [
            (weight, *self._analyse(text, recurs, build)) for weight, text, recurs in entry_fields(entry)
        ]
        fields = [(weight, fielded) for weight, fielded, _ in analysed]
        self._post(index, fields)
        for _, fielded, new in reversed(analysed):  # lightest first, as words were always collected
            if new:
                build.collect_words(fielded.segments)
        build.end_entry()
        self._keep(fields)
        return {c for weight, fielded in fields if weight >= STRONG_FIELD for c in fielded.concepts}

    def _keep(self, fields: list[tuple[float, Analysed]]) -> None:
        """What display (how a field wrote a concept) and Chinese phrase checks need later."""
        self.tables.concept_fields.add([a.matches for _, a in fields if a.concepts])
        self.tables.han.append(han_fields([(LEVEL[w], a.han) for w, a in fields if a.han]))

    def _post(self, index: int, fields: list[tuple[float, Analysed]]) -> None:
        """Post an entry's fields (heaviest first) under their keys, concepts and concept terms."""
        tables = self.tables
        tables.postings.add_fields(index, [LEVEL[w] for w, _ in fields], [a.keys for _, a in fields])
        named = [(LEVEL[w], a.numbers) for w, a in fields if a.concepts]
        if named:
            levels = [level for level, _ in named]
            tables.concepts.add_fields(index, levels, [numbers[:1] for _, numbers in named])
            tables.concept_terms.add_fields(index, levels, [numbers[1:] for _, numbers in named])

    def _plain_tag(self, tag: str, cache: dict[str, bool]) -> bool:
        """A tag that is a topic of its own: not generic and naming no glossary concept."""
        plain = cache.get(tag)
        if plain is None:
            tokens = tokenize(tag)
            plain = cache[tag] = any(t.key not in GENERIC_WORDS for t in tokens) and not self.glossary.find(
                tokens
            )
        return plain


def _glossary_words(glossary: Glossary) -> Iterator[tuple[str, str]]:
    """Surface → key of the glossary's term words, so a typo can complete a term; a term's
    whole identifier too (`MiniCPM`, `FlashInfer`): typed as written it is no typo of another."""
    for known in glossary.concepts.values():
        for term in known.terms:
            for token in tokenize(term):
                if token.kind in {"word", "part", "joined", "ident"}:
                    yield token.surface, token.key
