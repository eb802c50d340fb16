"""The bilingual vLLM glossary: concepts with their English, Chinese and abbreviated names.

It bridges languages and jargon for search (`投机解码` finds `speculative decoding`, `DSv4`
finds `DeepSeek V4`) and can be used on its own: `Glossary.load()`, `glossary.expand(text)`
(concepts a text names), `glossary.find(tokens)` (concepts present in tokenized text).

The bundled file is `chatbot/search/data/glossary.yaml`; curators extend it with `glossary.yaml` or
`*.glossary.yaml` in the digest folder. A concept with a known id adds terms to it; a new id
adds a concept. A bad concept is reported with file:line and skipped; the rest loads.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, chain, compress
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from chatbot.digest import Problem, is_glossary_file, validation_error_line, yaml_error_line, yaml_line
from chatbot.search.tokens import (
    SplitText,
    Token,
    atomic,
    run_keys,
    segment_keys,
    segment_tokens,
    segment_words,
    surface_of,
    tokenize,
)
from chatbot.yamlfast import LOADER, load_yaml

_ATOMIC = frozenset({"word", "part", "ref", "cjk"})
BUNDLED = Path(__file__).resolve().parent / "data" / "glossary.yaml"
# vLLM's own vocabulary (features, engine arguments, environment variables, backends, quantization
# methods, platforms, model families, endpoints), written from vLLM's docs and code: see its header.
BUNDLED_VLLM = BUNDLED.with_name("vllm.yaml")


class Concept(BaseModel):
    """One concept and every name it goes by."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.+-]*$", description="Stable key, lowercase.")
    label: str | None = Field(default=None, description="Display name; defaults to the first English term.")
    en: list[str] = Field(default_factory=list, description="English terms.")
    zh: list[str] = Field(default_factory=list, description="Chinese terms.")
    aliases: list[str] = Field(default_factory=list, description="Abbreviations, code names, spellings.")
    includes: list[str] = Field(default_factory=list, description="Narrower concepts a query also finds.")
    describes: list[str] = Field(
        default_factory=list, description="What it does in plain words: a query describing it finds it."
    )
    source: str | None = Field(default=None, description="Where in vLLM's docs or code it comes from.")

    @field_validator("en", "zh", "aliases", "describes")
    @classmethod
    def _terms_are_text(cls, terms: list[str]) -> list[str]:
        cleaned = [t.strip() for t in terms if t.strip()]
        for term in cleaned:
            if not term_tokens(term):
                raise ValueError(f"term {term!r} has no searchable characters")
        return cleaned

    @property
    def terms(self) -> list[str]:
        return [*self.en, *self.zh, *self.aliases]

    @property
    def display(self) -> str:
        return self.label or (self.en or self.aliases or self.zh or [self.id])[0]


class GlossaryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    concepts: list[dict[str, Any]]


@dataclass(frozen=True)
class Term:
    """A compiled glossary term: its atomic key sequence and whole-word keys."""

    concept: str
    surface: str
    sequence: tuple[str, ...]
    wholes: frozenset[str]


@dataclass(frozen=True)
class ConceptMatch:
    """A concept named in a text: which term (as the glossary writes it) and which tokens."""

    concept: str
    term: str
    start: int  # index in the atomic stream
    end: int  # exclusive
    text: str = ""  # how the text itself wrote it (`DSv4` where the glossary says `DS-v4`)


@dataclass(frozen=True)
class Expansion:
    """A concept a query names, with every term that means the same (for other rankers)."""

    concept: str
    label: str
    matched: str
    terms: list[str]


@dataclass
class Glossary:
    """Concepts by id, compiled for matching against token streams."""

    concepts: dict[str, Concept] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    _by_first: dict[str, list[Term]] = field(default_factory=dict, repr=False)
    _by_whole: dict[str, list[Term]] = field(default_factory=dict, repr=False)
    _term_keys: frozenset[str] = field(default=frozenset(), repr=False)  # keys that can start a match
    # per such key, the key sets a term starting with it needs (a text lacking all has no match)
    _needs: dict[str, tuple[frozenset[str], ...]] = field(default_factory=dict, repr=False)
    _han_first: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict, repr=False)
    _mixed_first: dict[str, list[_Mixed]] = field(default_factory=dict, repr=False)
    _mixed_width: int = field(default=1, repr=False)
    _split_han: list[_Mixed] = field(default_factory=list, repr=False)
    _mixed_han: frozenset[str] = field(default=frozenset(), repr=False)  # their Chinese keys

    @classmethod
    def load(cls, paths: Iterable[Path] = (), *, bundled: bool = True) -> Glossary:
        """Bundled glossary plus extension files (a folder means its glossary files)."""
        glossary = cls()
        files: list[Path] = [BUNDLED, BUNDLED_VLLM] if bundled else []
        for path in paths:
            if path.is_dir():
                files.extend(sorted(p for p in path.iterdir() if p.is_file() and is_glossary_file(p)))
            else:
                files.append(path)
        for path in files:
            glossary._add_file(path)
        glossary._compile()
        return glossary

    def _add_file(self, path: Path) -> None:
        parsed = self._read(path)
        if parsed is None:
            return
        text, concepts = parsed
        for index, item in enumerate(concepts):
            concept = self._valid_concept(path, text, index, item)
            if concept is not None:
                self._merge(concept)
        known = set(self.concepts)
        for index, item in enumerate(concepts):
            for included in item.get("includes") or []:
                if included not in known:
                    line = yaml_line(_compose(text), ("concepts", index, "includes"))
                    self.problems.append(
                        Problem(str(path), line, "warning", f"includes unknown concept {included!r}")
                    )

    def _read(self, path: Path) -> tuple[str, list[dict[str, Any]]] | None:
        """The file's text and concept items, or None with the problem recorded."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(Problem(str(path), 1, "error", f"cannot read glossary: {exc}"))
            return None
        try:
            data: Any = load_yaml(text)
        except (yaml.YAMLError, ValueError, RecursionError) as exc:
            line, message = yaml_error_line(exc, text)
            self.problems.append(Problem(str(path), line, "error", message))
            return None
        try:
            parsed = GlossaryFile.model_validate(data)
        except ValidationError as exc:
            line, message = validation_error_line(exc, _compose(text))
            self.problems.append(Problem(str(path), line, "error", message))
            return None
        return text, parsed.concepts

    def _valid_concept(self, path: Path, text: str, index: int, item: dict[str, Any]) -> Concept | None:
        """One concept item, or None with the problem recorded (a bad concept is skipped)."""
        try:
            concept = Concept.model_validate(item)
        except ValidationError as exc:
            line, message = validation_error_line(exc, _compose(text), ("concepts", index))
            self.problems.append(Problem(str(path), line, "error", message))
            return None
        if not concept.terms and concept.id not in self.concepts:  # a known id may add descriptions only
            line = yaml_line(_compose(text), ("concepts", index))
            self.problems.append(Problem(str(path), line, "error", f"concept {concept.id!r} has no terms"))
            return None
        return concept

    def _merge(self, concept: Concept) -> None:
        old = self.concepts.get(concept.id)
        if old is None:
            self.concepts[concept.id] = concept
            return

        def union(a: list[str], b: list[str]) -> list[str]:
            return [*a, *[t for t in b if t not in a]]

        self.concepts[concept.id] = old.model_copy(
            update={
                "label": concept.label or old.label,
                "en": union(old.en, concept.en),
                "zh": union(old.zh, concept.zh),
                "aliases": union(old.aliases, concept.aliases),
                "includes": union(old.includes, concept.includes),
                "describes": union(old.describes, concept.describes),
                "source": "; ".join(s for s in (old.source, concept.source) if s) or None,
            }
        )

    def _compile(self) -> None:
        self._by_first = {}
        self._by_whole = {}
        self._han_first = {}
        self._mixed_first = {}
        self._mixed_width = 1
        self._split_han = []
        for concept in self.concepts.values():
            for surface in concept.terms:
                self._compile_term(concept.id, surface)
        self._term_keys = frozenset(self._by_first.keys() | self._by_whole.keys())
        needs: dict[str, set[frozenset[str]]] = {key: {frozenset((key,))} for key in self._by_whole}
        for key, terms in self._by_first.items():
            needs.setdefault(key, set()).update(frozenset(term.sequence) for term in terms)
        self._needs = {key: tuple(sets) for key, sets in needs.items()}
        mixed = chain(self._split_han, *self._mixed_first.values())
        self._mixed_han = frozenset().union(*(bigrams for _, _, bigrams in mixed))

    def _compile_term(self, concept: str, surface: str) -> None:
        """File one term under its first key, its whole-word keys and, for Chinese, its script."""
        tokens = list(term_tokens(surface))
        stream = atomic(tokens)
        term = Term(concept, surface, tuple(t.key for t in stream), _whole_keys(tokens, stream))
        if any(t.kind == "cjk" for t in stream):
            self._compile_chinese(term, stream)
        if term.sequence and not _stemmed_name(surface, stream, term.wholes):
            self._by_first.setdefault(term.sequence[0], []).append(term)
        for key in term.wholes:
            self._by_whole.setdefault(key, []).append(term)

    def _compile_chinese(self, term: Term, stream: list[Token]) -> None:
        """File a term with Chinese for `find_in`: one Chinese run is found by substring; one cut
        by a particle (`多头潜在注意力`) or mixing scripts (`PD 分离`) on the stream."""
        pieces = tuple(t.surface for t in stream if t.kind == "cjk")
        if len(pieces) == len(stream) and len({t.group for t in stream}) == 1:
            chinese = surface_of(stream)
            self._han_first.setdefault(chinese[:2], []).append((term.concept, term.surface, chinese))
            return
        mixed = (term, pieces, frozenset(pieces))
        if len(pieces) == len(stream):
            self._split_han.append(mixed)
        else:
            first_latin = next(t.key for t in stream if t.kind != "cjk")
            self._mixed_first.setdefault(first_latin, []).append(mixed)
        self._mixed_width = max(self._mixed_width, len(pieces))

    def find_in(self, text: SplitText, memo: MatchMemo | None = None) -> list[tuple[str, str, str]]:
        """(concept, glossary term, text as written) for every term in a text cut for indexing.

        Chinese-only terms are found by substring within each Chinese run (the same as matching
        their bigram sequence), Latin terms as `find` does, per Latin stretch between Chinese
        runs (no term of one script spans a run's edge; runs and stretches repeat, so an index
        build passes a `memo` of their matches), and the few terms that mix both (`PD 分离`) or
        are cut by a particle on the stream cut to the edges of Chinese runs, only when their
        first Latin key and all their keys and Chinese pieces occur. Each distinct match is
        listed once, in text order per kind.
        """
        if memo is None:
            memo = MatchMemo()
        segments = memo.segment_matches(self, text.segments)
        latin = list(chain.from_iterable(map(_first, segments)))  # C-level: runs per field
        if not text.han_runs:
            return latin
        distinct = list(dict.fromkeys(text.han_runs))
        runs = memo.run_matches(self, distinct)
        found = list(dict.fromkeys(chain.from_iterable(map(_first, runs))))
        found.extend(latin)
        # Runs with a Chinese key of a term mixing scripts or cut by a particle: every such term
        # has one, and every run its match spans is one of them.
        keys = list(map(_second, runs))
        hot = dict(compress(zip(distinct, keys, strict=True), keys))  # C-level: a note has dozens of runs
        if hot:
            firsts = set().union(*map(_second, segments))
            found.extend(self._mixed_matches(text, firsts, hot, memo))
        return found

    def match_run(self, run: str, keys: frozenset[str]) -> _Matches:
        """The Chinese-only terms in one run whose keys are `keys` (the glossary's own triples:
        an index holds many matches, not many copies), by position in the run, the longer term
        first."""
        found = [
            match
            for first in keys & self._han_first.keys()
            for match in self._han_first[first]
            if match[2] in run
        ]
        found.sort(key=lambda m: (run.index(m[2]), -len(m[2]), m[0], m[1]))
        return tuple(found)

    def match_segment(self, segment: str, keys: AbstractSet[str]) -> tuple[_Matches, frozenset[str]]:
        """The Latin terms in a stretch of text whose keys are `keys`, and those of its keys
        that start a term mixing scripts. A stretch none of whose keys can start a term (about
        half of a library's) is not tokenized."""
        starts = _keys_or_none(keys & self._mixed_first.keys()) if keys else _NO_KEYS
        if keys.isdisjoint(self._term_keys) or not self._may_match(keys):
            return _NOTHING if starts is _NO_KEYS else ((), starts)
        return self._match_latin(segment_tokens(segment)), starts

    def _may_match(self, keys: AbstractSet[str]) -> bool:
        """Whether some term has all its keys among `keys` (otherwise no term can match: a
        stretch holding `block` but not `size` is not tokenized for `block size`)."""
        needs = self._needs
        return any(need <= keys for key in keys & needs.keys() for need in needs[key])

    def _mixed_matches(
        self, text: SplitText, firsts: AbstractSet[str], hot: dict[str, frozenset[str]], memo: MatchMemo
    ) -> list[tuple[str, str, str]]:
        """Terms mixing scripts or cut by a particle, matched on the atomic stream exactly as
        `find` does, but only when all their keys and Chinese pieces occur, and only around the
        `hot` runs (those holding a Chinese key of such a term)."""
        wanted = self._mixed_candidates(text, firsts, set().union(*hot.values()), memo)
        if not wanted:
            return []
        found: list[tuple[str, str, str]] = []
        stream = _edge_stream(text, hot.keys(), self._mixed_width, memo)
        for term in wanted:
            n = len(term.sequence)
            for i in _starts(stream.keys, term.sequence):
                found.append((term.concept, term.surface, stream.written(text, range(i, i + n), memo)))
        return found

    def _mixed_candidates(
        self, text: SplitText, firsts: AbstractSet[str], bigrams: AbstractSet[str], memo: MatchMemo
    ) -> list[Term]:
        """Terms mixing scripts or cut by a particle whose keys and Chinese pieces all occur
        (in glossary order). `bigrams` are the keys of the text's runs that such terms have (a
        bigram, or a one-character run): a term lacking one of its own is dropped by a set
        test, before any substring test or key gathered."""
        han = text.han
        candidates = chain(
            (
                term_pieces
                for first, terms in (self._mixed_first.items() if firsts else ())
                if first in firsts
                for term_pieces in terms
            ),
            self._split_han,
        )
        has_all = memo.key_test(text)
        return [
            term
            for term, pieces, own in candidates
            if own <= bigrams and all(p in han for p in pieces) and has_all(term.sequence)
        ]

    def _match_latin(self, tokens: Sequence[Token]) -> tuple[tuple[str, str, str], ...]:
        """The matches `find` makes on Latin tokens, without positions, each once."""
        return tuple(
            dict.fromkeys((t.concept, t.surface, text) for t, _, _, text in self._term_matches(tokens))
        )

    def _term_matches(self, tokens: Sequence[Token]) -> Iterator[tuple[Term, int, int, str]]:
        """Every term in tokenized text: (term, start, end in the atomic stream, text as written).
        Whole-word keys first (a match spans its token's group), then key sequences in order."""
        stream, group_span = _spans(tokens)
        wholes = [t for t in tokens if t.kind != "cjk" and t.key in self._by_whole]
        for token in wholes:
            lo, hi = group_span.get(token.group, (0, 0))
            for term in self._by_whole[token.key]:
                yield term, lo, hi, token.surface
        yield from self._sequence_matches(stream)

    def _sequence_matches(self, stream: list[Token]) -> Iterator[tuple[Term, int, int, str]]:
        """Terms whose key sequence occurs in the atomic stream, in stream order."""
        keys = [t.key for t in stream]
        for i, key in enumerate(keys):
            for term in self._by_first.get(key, ()):
                n = len(term.sequence)
                if n == 1 or tuple(keys[i : i + n]) == term.sequence:
                    yield term, i, i + n, surface_of(stream[i : i + n])

    def __len__(self) -> int:
        return len(self.concepts)

    def __contains__(self, concept_id: object) -> bool:
        return concept_id in self.concepts

    def label(self, concept_id: str) -> str:
        return self.concepts[concept_id].display

    def terms_by_first_key(self) -> dict[str, list[Term]]:
        return self._by_first

    def find(self, tokens: Sequence[Token]) -> list[ConceptMatch]:
        """Concepts named in tokenized text, longest term first at each position."""
        found = [
            ConceptMatch(term.concept, term.surface, start, end, text)
            for term, start, end, text in self._term_matches(tokens)
        ]
        found.sort(key=lambda m: (m.start, -(m.end - m.start)))
        return found

    def expand(self, text: str) -> list[Expansion]:
        """Concepts a text names, each with all its terms: `expand("投机解码")` → spec decoding."""
        out: dict[str, Expansion] = {}
        for match in self.find(tokenize(text)):
            if match.concept not in out:
                concept = self.concepts[match.concept]
                out[match.concept] = Expansion(concept.id, concept.display, match.term, concept.terms)
        return list(out.values())


_Matches = tuple[tuple[str, str, str], ...]
_first, _second = itemgetter(0), itemgetter(1)
_Mixed = tuple[Term, tuple[str, ...], frozenset[str]]  # a term, its Chinese pieces, as a set
_NO_KEYS: frozenset[str] = frozenset()
# What most stretches and runs match: one shared value, not a pair and an empty set (Python
# keeps no empty-frozenset singleton) held per distinct piece by a build's memos.
_NOTHING: tuple[_Matches, frozenset[str]] = ((), _NO_KEYS)


def _keys_or_none(keys: AbstractSet[str]) -> frozenset[str]:
    """`keys` as a frozenset, the shared empty one when there are none."""
    return frozenset(keys) if keys else _NO_KEYS


MEMO_LIMIT = 1 << 15  # pieces a memo holds before starting over (a library that rarely repeats);
# 1 << 16 held 7 MiB more at the 100k peak for 4.6% fewer stretches matched again (~0.5% of its CPU)
_EDGE_LIMIT = 1 << 14  # pieces of the few texts with a mixed-script candidate (tokens: larger)
KeyTest = Callable[[tuple[str, ...]], bool]
V = TypeVar("V")


def remember(memo: dict[str, V], piece: str, value: V, limit: int = MEMO_LIMIT) -> V:
    """Keep `value` for a piece of text; a memo past `limit` pieces starts over."""
    if len(memo) >= limit:
        memo.clear()
    memo[piece] = value
    return value


class MatchMemo:
    """Glossary matches per distinct Latin stretch and Chinese run: they repeat across a
    library, so one index build matches each once. Made per build and dropped with it (a
    glossary lives as long as the process and is pickled with the index)."""

    def __init__(self) -> None:
        self.segments: dict[str, tuple[_Matches, frozenset[str]]] = {}
        self.runs: dict[str, tuple[_Matches, frozenset[str]]] = {}  # and its mixed terms' bigrams
        self.edges: dict[str, tuple[str, ...]] = {}  # a run's bigrams at its edges (mixed terms)
        self.atom_keys: dict[str, tuple[str, ...]] = {}  # a stretch's atomic keys (mixed terms)
        self.atoms: dict[str, tuple[Token, ...]] = {}  # its atomic tokens, where a mixed term matched

    def segment_matches(
        self, glossary: Glossary, segments: list[str]
    ) -> list[tuple[_Matches, frozenset[str]]]:
        """Each distinct stretch's Latin matches and mixed-term starts, in order."""
        distinct = list(dict.fromkeys(segments))
        found = list(map(self.segments.get, distinct))
        if None in found:
            found = [self.segments.get(s) or self.add_segment(glossary, s, segment_keys(s)) for s in distinct]
        return cast("list[tuple[_Matches, frozenset[str]]]", found)

    def add_segment(
        self, glossary: Glossary, segment: str, keys: AbstractSet[str]
    ) -> tuple[_Matches, frozenset[str]]:
        """Match a stretch whose keys are `keys`, and remember it."""
        return remember(self.segments, segment, glossary.match_segment(segment, keys))

    def add_run(self, glossary: Glossary, run: str, keys: frozenset[str]) -> tuple[_Matches, frozenset[str]]:
        """Match a Chinese run whose keys are `keys`, and remember it with those of its keys
        that terms mixing scripts or cut by a particle have (most runs: none)."""
        matches, mixed = glossary.match_run(run, keys), _keys_or_none(keys & glossary._mixed_han)
        return remember(self.runs, run, _NOTHING if not matches and mixed is _NO_KEYS else (matches, mixed))

    def run_matches(self, glossary: Glossary, distinct: list[str]) -> list[tuple[_Matches, frozenset[str]]]:
        """Each of some distinct Chinese runs' matches and mixed terms' bigrams, in order."""
        found = list(map(self.runs.get, distinct))
        if None in found:
            for i, run in enumerate(distinct):
                if found[i] is None:
                    found[i] = self.add_run(glossary, run, run_keys(run))
        return cast("list[tuple[_Matches, frozenset[str]]]", found)

    def key_test(self, text: SplitText) -> KeyTest:
        """Whether the text holds every one of some keys (its keys gathered on first use)."""
        gathered: list[set[str]] = []

        def has_all(keys: tuple[str, ...]) -> bool:
            if not gathered:
                gathered.append(text.keys())
            return gathered[0].issuperset(keys)

        return has_all


@lru_cache(maxsize=8192)
def term_tokens(term: str) -> tuple[Token, ...]:
    """A glossary term's tokens: checked when the file is read, compiled after (one cut each)."""
    return tuple(tokenize(term))


def _stemmed_name(surface: str, stream: list[Token], wholes: frozenset[str]) -> bool:
    """A one-word name the stemmer would shorten (`CuTe` → `cut`, `RoPE` → `rop`): it is found
    as written, by its whole word only, or every `cuts` and `ropes` would name it."""
    return (
        len(stream) == 1
        and stream[0].kind == "word"
        and bool(wholes - {stream[0].key})
        and any(c.isupper() for c in surface[1:])
    )


def _whole_keys(tokens: list[Token], stream: list[Token]) -> frozenset[str]:
    """Keys that match a term as one word: an identifier's whole and joined forms, or a
    multi-word term written as one word (`specdecode`, `kvoffload`)."""
    if len({t.group for t in tokens}) == 1:
        return frozenset(t.key for t in tokens if t.kind in {"ident", "joined"})
    if all(t.kind == "word" for t in stream):
        return frozenset({"".join(t.surface.casefold() for t in stream)})
    return frozenset()


def _spans(tokens: Sequence[Token]) -> tuple[list[Token], dict[int, tuple[int, int]]]:
    """The atomic stream, and each token group's span in it."""
    stream: list[Token] = []
    group_span: dict[int, tuple[int, int]] = {}
    for token in tokens:
        if token.kind in _ATOMIC:
            i = len(stream)
            stream.append(token)
            span = group_span.get(token.group)
            group_span[token.group] = (span[0], i + 1) if span else (i, i + 1)
    return stream, group_span


@dataclass
class _EdgeStream:
    """Keys of the atomic stream around a text's hot Chinese runs, each long run cut to its
    first and last `width` bigrams, and where each piece's keys start in it with the piece's
    number (stretch i is 2i, run i is 2i + 1; a gap between regions, -1)."""

    keys: list[str]
    starts: list[int]
    numbers: list[int]

    def written(self, text: SplitText, span: range, memo: MatchMemo) -> str:
        """How the text wrote a stretch of the stream: each key traced to its piece (a run's
        bigram is grouped by the run's number, a Latin key is its stretch's token)."""
        tokens: list[Token] = []
        for j in span:
            at = bisect_right(self.starts, j) - 1
            piece = self.numbers[at]
            if piece % 2:
                tokens.append(Token(self.keys[j], self.keys[j], "cjk", (piece + 1) // 2))
            else:
                segment = text.segments[piece // 2]
                atoms = memo.atoms.get(segment) or remember(memo.atoms, segment, _atoms(segment), _EDGE_LIMIT)
                tokens.append(atoms[j - self.starts[at]])
        return surface_of(tokens)


_GAP = ("\x00",)  # between two regions of an edge stream: no term holds it


def _edge_stream(text: SplitText, hot: AbstractSet[str], width: int, memo: MatchMemo) -> _EdgeStream:
    """The atomic stream where a term mixing scripts or cut by a particle can match: each run
    of `hot` with the Latin stretches either side of it (every run such a match spans is hot,
    so it never reaches past them), each long run cut to its edges (every match of a term
    joining Latin and Chinese survives). No token per key: a match's few keys are traced back
    by `written`; runs and stretches repeat, so their keys are kept in the memo."""
    pieces: list[tuple[str, ...]] = []
    numbers: list[int] = []
    last = -2  # the number of the last piece taken
    for i, run in enumerate(text.han_runs):
        if run not in hot:
            continue
        if 2 * i > last + 1:  # a new region: the stretch before the run starts it
            if pieces:
                pieces.append(_GAP)
                numbers.append(-1)
            pieces.append(_segment_atom_keys(text.segments[i], memo))
            numbers.append(2 * i)
        pieces.append(
            memo.edges.get(run) or remember(memo.edges, run, _edge_bigrams(run, width), _EDGE_LIMIT)
        )
        pieces.append(_segment_atom_keys(text.segments[i + 1], memo))
        numbers.extend((2 * i + 1, 2 * i + 2))
        last = 2 * i + 2
    starts = list(accumulate(map(len, pieces[:-1]), initial=0))
    return _EdgeStream(list(chain.from_iterable(pieces)), starts, numbers)


def _segment_atom_keys(segment: str, memo: MatchMemo) -> tuple[str, ...]:
    keys = memo.atom_keys.get(segment)
    if keys is None:  # an empty tuple (no Latin atom: `，`) is a kept answer too
        keys = remember(memo.atom_keys, segment, _atom_keys(segment), _EDGE_LIMIT)
    return keys


def _edge_bigrams(run: str, width: int) -> tuple[str, ...]:
    """A Chinese run's bigrams, a long run cut to its first and last `width` (a NUL between)."""
    if len(run) == 1:
        return (run,)
    if len(run) - 1 > 2 * width:
        head, tail = run[: width + 1], run[-width - 1 :]
        return (*(head[j : j + 2] for j in range(width)), "\x00", *(tail[j : j + 2] for j in range(width)))
    return tuple(run[j : j + 2] for j in range(len(run) - 1))


def _atoms(segment: str) -> tuple[Token, ...]:
    """A Latin stretch's atomic tokens."""
    return tuple(t for t in segment_tokens(segment) if t.kind in _ATOMIC)


def _atom_keys(segment: str) -> tuple[str, ...]:
    """A Latin stretch's atomic keys, as `_atoms` gives them (no token made)."""
    return tuple([key for key, _, kind in segment_words(segment) if kind in _ATOMIC])


def _starts(keys: list[str], sequence: tuple[str, ...]) -> list[int]:
    """Positions where `sequence` occurs in `keys`."""
    out: list[int] = []
    n = len(sequence)
    i = -1
    while True:
        try:
            i = keys.index(sequence[0], i + 1)
        except ValueError:
            return out
        if n == 1 or tuple(keys[i : i + n]) == sequence:
            out.append(i)


def _compose(text: str) -> yaml.Node | None:
    """The YAML node tree, only needed to name the line of a problem (so parsed on demand)."""
    node: yaml.Node | None = yaml.compose(text, Loader=LOADER)
    return node


def load_glossary(digest_dir: Path | None = None) -> Glossary:
    """The bundled glossary extended by the glossary files of a digest folder (if any)."""
    return Glossary.load([digest_dir] if digest_dir is not None and digest_dir.is_dir() else [])
