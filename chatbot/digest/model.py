"""The digest model: what one reviewed pull request looks like once parsed.

Every other part of the bot (search, answers, picking, rendering) reads these models;
none of them re-parses the curator's text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    computed_field,
    model_serializer,
)

if TYPE_CHECKING:
    from chatbot.digest.note import NoteParts

GITHUB = "https://github.com"
_SPACES_RE = re.compile(r"\s+")


def normalize_title(title: str) -> str:
    """Title as identity: NFKC, collapsed whitespace, so re-saving a file keeps ids."""
    return _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", title)).strip().casefold()


def entry_id(repo: str, title: str) -> str:
    """Stable id from repository and title: independent of file name and position."""
    digest = hashlib.sha1(f"{repo.casefold()}\n{normalize_title(title)}".encode()).hexdigest()
    return digest[:10]


def pull_url(repo: str, number: int) -> str:
    """GitHub redirects /pull/N to /issues/N when N is an issue, so one form fits both."""
    return f"{GITHUB}/{repo}/pull/{number}"


class Ref(BaseModel):
    """A `#12345` reference to a pull request or issue of the entry's repository."""

    model_config = ConfigDict(frozen=True)

    number: int
    url: str


_T = TypeVar("_T")


def _note_part(description: str) -> Callable[[Callable[[Entry], _T]], cached_property[_T]]:
    """A part of the note: a field of the JSON (`computed_field`) computed on first read and then
    kept in the instance dict (`cached_property`), where a copy that sets it (`model_copy(update=
    ...)`, a merged entry) puts the value it was given."""

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
        """The note cut into its parts, all five kept (a part already there stays, e.g. a merged
        entry's): one analysis whichever part is read first. A copy that shares its parts
        (`shared_parts`) takes them from the entry it copies, which cuts the note once for both.
        Two threads may both analyse; the result is the same."""
        from chatbot.digest.note import NoteParts, analyse_note  # the note's reader imports this module

        source: Entry | None = self.__dict__.get(_PARTS_OF)
        if source is None:
            parts = analyse_note(self.note, self.repo, self.title)
        else:
            parts = NoteParts(
                verdict=source.verdict,
                why=source.why,
                highlights=source.highlights,
                audience=source.audience,
                caveats=source.caveats,
            )
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


NOTE_PARTS = ("verdict", "why", "highlights", "audience", "caveats")
_FIELDS = list(Entry.model_fields)
_DUMP_ORDER = (*_FIELDS[: _FIELDS.index("note") + 1], *NOTE_PARTS, *_FIELDS[_FIELDS.index("note") + 1 :])
_EVERY_FIELD: set[str] = set(Entry.model_fields)
_PARTS_OF = "_parts_of"


def shared_parts(entry: Entry) -> dict[str, Entry]:
    """The update (`model_copy(update=...)`) that has a copy of `entry` with the same note read
    its parts from `entry` (a metadata row merged in adds none): the note is cut once for both,
    whichever is read first, and the copy made again at each reload finds them cut. Nothing
    when `entry` has them already: the copy copies them."""
    if all(name in entry.__dict__ for name in NOTE_PARTS):
        return {}
    return {_PARTS_OF: entry.__dict__.get(_PARTS_OF, entry)}


def compact(entry: Entry) -> Entry:
    """The entry with one set of field names shared by all entries: pydantic keeps, per model, the
    names passed to it (`model_fields_set`, never read here), a set of some 20 names that was a
    third of an entry's memory. An entry is frozen, so no one adds to the shared set
    (`model_copy` copies it first)."""
    object.__setattr__(entry, "__pydantic_fields_set__", _EVERY_FIELD)
    return entry


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
