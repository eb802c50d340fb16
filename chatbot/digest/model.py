"""The digest model: what one reviewed pull request looks like once parsed.

Every other part of the bot (search, answers, picking, rendering) reads these models;
none of them re-parses the curator's text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    computed_field,
    model_serializer,
)

from chatbot.digest.note import NoteParts, note_parts
from chatbot.digest.refs import Ref
from chatbot.text.words import nfkc


def normalize_title(title: str) -> str:
    """Title as identity: NFKC, collapsed whitespace, so re-saving a file keeps ids."""
    return " ".join(nfkc(title).split()).casefold()  # `split` cuts at what `\s` matches


# A title's id is asked twice in a row: by the raw text and by the metadata file beside it
# (parsed one after the other); the last few hundred are kept for the second time.
@lru_cache(maxsize=512)
def entry_id(repo: str, title: str) -> str:
    """Stable id from repository and title: independent of file name and position."""
    digest = hashlib.sha1(f"{repo.casefold()}\n{normalize_title(title)}".encode()).hexdigest()
    return digest[:10]


_T = TypeVar("_T")


def _note_part(description: str) -> Callable[[Callable[[Entry], _T]], cached_property[_T]]:
    """A part of the note: a field of the JSON (`computed_field`) computed on first read and then
    kept in the instance dict (`cached_property`), where a copy that sets it (`model_copy(update=
    ...)`, an entry merged from several notes: `set_merged_parts`) puts the value it was given."""

    def make(read: Callable[[Entry], _T]) -> cached_property[_T]:
        return computed_field(description=description)(cached_property(read))

    return make


class Entry(BaseModel):
    """One digest entry: the curator's note and what was extracted from it, plus PR metadata."""

    # `extra="forbid"`: a part passed as a field (`verdict=...`) would be dropped without a word.
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable id: hash of repository and normalized title.")
    repo: str = Field(description="GitHub repository slug, owner/name.")
    digest: str = Field(description="Name of the digest the entry belongs to, e.g. vllm-digest-2026-08.")
    position: int = Field(description="1-based position of the entry in its digest.")
    title: str
    note: str = Field(description="The review note exactly as the curator wrote it.")
    refs: list[Ref] = Field(default_factory=list, description="PRs/issues named in the note.")
    people: list[str] = Field(default_factory=list, description="Handles named in the note.")
    identifiers: list[str] = Field(default_factory=list, description="Code names in the note and title.")
    pr: int | None = None
    url: str | None = None
    github_title: str | None = None
    author: str | None = None
    date: dt.date | None = None
    tags: list[str] = Field(default_factory=list)
    related: list[Ref] = Field(default_factory=list, description="Related PRs/issues from metadata.")
    source: str = Field(description="Where the entry's text starts, file:line.")

    # The note's parts: read when an entry is shown or asked about, never by the load or the
    # search index, so they are cut from the note on first read (see `_note_part`).
    @_note_part("Opening verdict, e.g. 值得精读.")
    def verdict(self) -> str | None:
        return self._analysed().verdict

    @_note_part("One line on why the PR is worth reading.")
    def why(self) -> str | None:
        return self._analysed().why

    @_note_part("Focus points, curator's words.")
    def highlights(self) -> list[str]:
        return self._analysed().highlights

    @_note_part("Who should read it, curator's words.")
    def audience(self) -> str | None:
        return self._analysed().audience

    @_note_part("What to watch out for, open questions.")
    def caveats(self) -> list[str]:
        return self._analysed().caveats

    def _analysed(self) -> NoteParts:
        """The note cut into its parts, all five kept (a part already there stays): one analysis
        whichever part is read first. Two threads may both analyse; the result is the same."""
        parts = note_parts(self.note)  # the refs, people and code names are fields already
        for name in NOTE_PARTS:
            self.__dict__.setdefault(name, getattr(parts, name))
        return parts

    @model_serializer(mode="wrap")
    def _in_field_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The parts where they stood when they were fields (pydantic puts computed ones last), so
        the JSON export keeps its shape."""
        data: dict[str, Any] = handler(self)
        return {name: data[name] for name in _DUMP_ORDER if name in data}

    @property
    def all_refs(self) -> list[Ref]:
        """Refs named in the note first, then curated related ones, without repeats."""
        seen: set[int] = set()
        out: list[Ref] = []
        for ref in [*self.refs, *self.related]:
            if ref.number not in seen and ref.number != self.pr:
                seen.add(ref.number)
                out.append(ref)
        return out


@dataclass(frozen=True, slots=True)
class Metadata:
    """What an item without a note (a `.meta.yaml` beside the raw text) adds to the entry of the
    same title in another file. A light record, not an `Entry`: a library holds one per entry,
    and there is no note to analyse. `identifiers` are the title's code names (a title spelt
    differently, same id, may name them differently). The entry it fills shares its lists."""

    id: str
    title: str
    line: int
    pr: int | None
    url: str | None
    github_title: str | None
    author: str | None
    date: dt.date | None
    tags: list[str]
    related: list[Ref]
    identifiers: list[str]


NOTE_PARTS = ("verdict", "why", "highlights", "audience", "caveats")
_FIELDS = tuple(Entry.model_fields)
_DUMP_ORDER = (*_FIELDS[: _FIELDS.index("note") + 1], *NOTE_PARTS, *_FIELDS[_FIELDS.index("note") + 1 :])
_EVERY_FIELD: set[str] = set(_FIELDS)
# What a field left out gets: an empty list (shared: `_NO_ITEMS`), or its default value.
_LIST_FIELDS = frozenset(name for name, field in Entry.model_fields.items() if field.default_factory is list)
_DEFAULTS = {name: field.default for name, field in Entry.model_fields.items() if not field.is_required()}


# Each field's value when left out: its default, or a mark for an empty list (`_LIST_FIELDS`)
# and for a required field (which `checked_entry` then fails on, as a lookup would).
_LEFT_OUT = object()
_DEFAULT_ROW = tuple(
    _DEFAULTS[name] if name in _DEFAULTS and name not in _LIST_FIELDS else _LEFT_OUT for name in _FIELDS
)
_MARKED = tuple(name for name, default in zip(_FIELDS, _DEFAULT_ROW, strict=True) if default is _LEFT_OUT)
_ROW_OF = operator.itemgetter(*_FIELDS)
_LIST_NAMES = tuple(name for name in _FIELDS if name in _LIST_FIELDS)
# The one empty list of every entry's empty list fields: most entries have several (no refs,
# no people...), 56 bytes each, 2.5 MiB at 10k entries with their files' copies. Entries never
# change their lists (a field is replaced, never appended to), so they can share it.
_NO_ITEMS: list[Any] = []


def checked_entry(values: Mapping[str, Any]) -> Entry:
    """An entry from field values already of their fields' types (the parsers' own, or another
    entry's): validating them again was half the cost of an entry. Missing fields get their
    defaults. Entries share one set of field names: pydantic keeps, per model, the names passed
    to it (`model_fields_set`, never read here), a 22-name set of 2 KiB that was a third of an
    entry's memory; an entry is frozen, so no one adds to it (`model_copy` copies it first).
    The fields are looked up in one C-level pass (`map`), then the few left out are filled."""
    if len(values) == len(_FIELDS):  # every field, as another entry's: one C-level lookup
        try:
            return _entry(dict(zip(_FIELDS, _ROW_OF(values), strict=True)))
        except KeyError:
            pass  # a name that is no field among them: looked up as below
    fields = dict(zip(_FIELDS, map(values.get, _FIELDS, _DEFAULT_ROW), strict=True))
    for name in _MARKED:
        if fields[name] is _LEFT_OUT:
            fields[name] = _NO_ITEMS if name in _LIST_FIELDS else values[name]  # a required one: KeyError
    return _entry(fields)


def _entry(fields: dict[str, Any]) -> Entry:
    """An entry of these fields, every one of them there, in field order; its empty lists
    the one shared `_NO_ITEMS`."""
    for name in _LIST_NAMES:
        if fields[name] == []:
            fields[name] = _NO_ITEMS
    entry = Entry.__new__(Entry)
    object.__setattr__(entry, "__dict__", fields)
    object.__setattr__(entry, "__pydantic_fields_set__", _EVERY_FIELD)
    object.__setattr__(entry, "__pydantic_extra__", None)
    object.__setattr__(entry, "__pydantic_private__", None)
    return entry


# In the dict of an entry merged from several notes (a repeated title): each with its verdict.
_MERGED_FROM = "_merged_from"


def set_merged_parts(
    entry: Entry, parts: Mapping[str, Any], verdicts: Iterable[tuple[str, str | None]]
) -> None:
    """Give an entry merged from several notes the parts of all of them (`checked_entry` makes
    the fields only, and its own note's parts would lack the others'), and each note with its own
    verdict, which the verdict checks of the copies read instead of cutting the notes again."""
    entry.__dict__.update(parts)
    entry.__dict__[_MERGED_FROM] = tuple(verdicts)


def merged_from(entry: Entry) -> tuple[tuple[str, str | None], ...] | None:
    """The notes an entry was merged from, each with its own verdict (`set_merged_parts`); None
    when its parts are cut from its own note alone: then another entry with the very same note
    may read them instead of cutting the note again."""
    merged: tuple[tuple[str, str | None], ...] | None = entry.__dict__.get(_MERGED_FROM)
    return merged


def cut_parts(entry: Entry) -> dict[str, Any]:
    """The parts the entry has cut from its note so far (all five once one is read)."""
    fields = entry.__dict__
    return {name: fields[name] for name in NOTE_PARTS if name in fields}


def entry_values(entry: Entry) -> tuple[Any, ...]:
    """The entry's field values in field order: a quarter of the entry's own memory, and
    `entry_fields` makes them fields again."""
    values: tuple[Any, ...] = _ROW_OF(entry.__dict__)
    return values


def entry_fields(values: tuple[Any, ...]) -> dict[str, Any]:
    """The fields (name: value) of `entry_values`, for `checked_entry`."""
    return dict(zip(_FIELDS, values, strict=True))


_ID = _FIELDS.index("id")


def values_id(values: tuple[Any, ...]) -> str:
    """The id among `entry_values`."""
    return str(values[_ID])


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """Something wrong in a digest file, with where it is, so a curator can fix it."""

    path: str
    line: int
    severity: Severity
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"


class DigestParseError(ValueError):
    """A digest file that cannot be read; always names the line."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.problem = Problem(path, line, "error", message)

    @property
    def line(self) -> int:
        return self.problem.line
