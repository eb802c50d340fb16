"""The structured (YAML) digest form: entries with the metadata the raw form lacks.

An item with a `note` is a full entry; an item without one adds metadata (PR, author, date,
tags, related) to the entry with the same title in another file.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from chatbot.digest.model import DigestParseError, Entry, Metadata, Problem, entry_id
from chatbot.digest.names import find_identifiers
from chatbot.digest.rawtext import SLUG_RE, ParseResult, VerdictCheck, digest_name, note_entry
from chatbot.digest.refs import Ref, pull_url
from chatbot.digest.yamlnodes import validation_error_line, yaml_error_line, yaml_line
from chatbot.yamlfast import LOADER

# The one URL form an entry may carry: a pull request of the digest's repository.
PULL_URL_RE = re.compile(r"^https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/pull/(?P<number>[1-9]\d{0,8})$")


class StructuredEntry(BaseModel):
    """One item of a structured digest."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=300, description="Digest title; identifies the entry.")
    note: str | None = Field(default=None, description="Review note; omit to only add metadata.")
    pr: int | None = Field(default=None, ge=1, description="Pull request number.")
    url: str | None = Field(
        default=None,
        json_schema_extra={"pattern": r"^https://github\.com/[\w.-]+/[\w.-]+/pull/[1-9][0-9]{0,8}$"},
        description="The PR's URL in the digest's repository (https://github.com/<repo>/pull/N); derived from pr.",
    )
    github_title: str | None = Field(default=None, description="The PR's title on GitHub.")
    author: str | None = Field(default=None, description="GitHub handle of the PR author.")
    date: dt.date | None = Field(default=None, description="When the PR was opened (YYYY-MM-DD).")
    tags: list[str] = Field(default_factory=list, description="Topics, English or Chinese.")
    related: list[int] = Field(default_factory=list, description="Related PR/issue numbers.")
    reviewers: list[str] = Field(
        default_factory=list,
        description="GitHub handles of the PR's reviewers: a note may name them without an `@`.",
    )

    @field_validator("tags")
    @classmethod
    def _tags_are_words(cls, tags: list[str]) -> list[str]:
        return [t.strip() for t in tags if t.strip()]

    @field_validator("pr", mode="before")
    @classmethod
    def _pr_as_written(cls, pr: object) -> object:
        """A PR named as curators link it (`"#123"`, `PR 123`, `owner/name#123`, its URL) is
        its number; anything else is left for the schema to refuse."""
        return _pr_number(pr)

    @field_validator("related", mode="before")
    @classmethod
    def _related_as_written(cls, related: object) -> object:
        return [_pr_number(item) for item in related] if isinstance(related, list) else related

    @field_validator("url")
    @classmethod
    def _url_is_the_repos_pull_request(cls, url: str | None, info: ValidationInfo) -> str | None:
        """Only the digest repository's PR URLs: a link's label (the title) must not lead
        elsewhere, whatever the curator pasted."""
        if url is None:
            return url
        repo = (info.context or {}).get("repo")
        match = PULL_URL_RE.fullmatch(url)
        if match is None or (isinstance(repo, str) and match.group("repo").casefold() != repo.casefold()):
            form = (
                f"https://github.com/{repo}/pull/N"
                if isinstance(repo, str)
                else "https://github.com/<repo>/pull/N"
            )
            raise ValueError(f"{url[:120]!r} is not a pull request of the digest's repository: write {form}")
        pr = info.data.get("pr")
        if isinstance(pr, int) and int(match.group("number")) != pr:
            raise ValueError(f"url names PR {match.group('number')} but pr is {pr}")
        return url

    @field_validator("reviewers", mode="before")
    @classmethod
    def _reviewers_are_handles(cls, reviewers: object) -> object:
        if isinstance(reviewers, list):
            return [cls._author_is_a_handle(handle) for handle in reviewers]
        return reviewers

    @field_validator("author", mode="before")
    @classmethod
    def _author_is_a_handle(cls, author: object) -> object:
        """`"@alice"` as curators write a handle is `alice` (the card shows `@` before it); a
        handle of digits (`author: 1234`), which YAML reads as a number, is that text."""
        if isinstance(author, int) and not isinstance(author, bool):
            return str(author)
        return (author.strip().removeprefix("@").strip() or None) if isinstance(author, str) else author


# `#123`, `PR 123`, `PR #123`, `owner/name#123`, `https://github.com/owner/name/pull/123`.
_PR_WRITTEN_RE = re.compile(
    r"(?:(?:PR|pull request|issue)\s*)?(?:https?://github\.com/[\w.-]+/[\w.-]+/(?:pull|issues)/|"
    r"(?:[\w.-]+/[\w.-]+)?#\s*)?(\d{1,9})/?",
    re.IGNORECASE,
)


def _pr_number(value: object) -> object:
    """The number of a PR written as a string in one of the forms above; any other value as is."""
    if isinstance(value, str):
        written = _PR_WRITTEN_RE.fullmatch(value.strip())
        if written is not None:
            return int(written.group(1))
    return value


DEFAULT_REPO = "vllm-project/vllm"  # the project every digest follows, unless a file says otherwise


class StructuredDigest(BaseModel):
    """A structured digest file."""

    model_config = ConfigDict(extra="forbid")

    repo: str = Field(
        default=DEFAULT_REPO,
        pattern=SLUG_RE.pattern,
        description=f"GitHub repository slug, owner/name; {DEFAULT_REPO} when not given.",
    )
    digest: str | None = Field(default=None, description="Digest name; defaults to the file name.")
    people: dict[str, list[str]] = Field(
        default_factory=dict,
        description="People notes name without an `@`: GitHub handle → the full names written for "
        "them (`mgoin: [Michael Goin]`); extends the bundled list of vLLM maintainers.",
    )
    entries: list[StructuredEntry]

    @field_validator("people", mode="before")
    @classmethod
    def _names_as_written(cls, people: object) -> object:
        """`handle: Name`, `handle: [Name, Other]` or `handle:` alone; `@handle` is `handle`. A
        curator may write the map the other way round, `Full Name: handle`: a key of several words
        with one word for its value is a name and its handle."""
        if not isinstance(people, dict):
            return people
        out: dict[object, list[object]] = {}
        for handle, names in people.items():
            if _name_then_handle(handle, names):
                out.setdefault(str(names).strip().removeprefix("@"), []).append(str(handle).strip())
                continue
            key = str(handle).strip().removeprefix("@") if isinstance(handle, (str, int)) else handle
            written = [names] if isinstance(names, str) else ([] if names is None else names)
            if isinstance(written, list):
                out.setdefault(key, []).extend(written)
            else:
                out[key] = written
        return out


def _name_then_handle(key: object, value: object) -> bool:
    """`"Cody Yu": comaniac`: a key of two words or more, a value of one word."""
    return (
        isinstance(key, str) and isinstance(value, str) and len(key.split()) >= 2 and len(value.split()) == 1
    )


def json_schema() -> str:
    """JSON Schema of the structured form, for editors."""
    schema = StructuredDigest.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "vllm-digest structured digest"
    return json.dumps(schema, ensure_ascii=False, indent=2)


def is_glossary_file(path: Path) -> bool:
    """Glossary extensions live beside digests but are not digests."""
    return path.suffix.lower() in {".yaml", ".yml"} and (
        path.stem == "glossary" or path.stem.endswith(".glossary")
    )


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """The node tree (for the line of each entry and of a problem) and the data built from it,
    in one pass of the C parser where PyYAML has it."""
    loader = LOADER(text)
    try:
        root: yaml.Node | None = loader.get_single_node()
        data = None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()
    return root, data


_STR = "tag:yaml.org,2002:str"


def parse_structured(text: str, path: str = "<yaml>") -> ParseResult:
    """Parse and validate a YAML digest; raises DigestParseError with the line of the problem."""
    lines, digest, unknown = _validated(text, path)
    name = digest.digest or digest_name(path)
    result = ParseResult([], found=[*unknown])
    result.people.update(digest.people)
    for position, (item, line) in enumerate(zip(digest.entries, lines, strict=True), start=1):
        note = (item.note or "").strip()
        for handle in _item_handles(item):
            result.people.setdefault(handle, [])
        if not note:
            result.metadata.append(_metadata(digest.repo, item, line))
            continue
        entry = _entry(digest.repo, name, position, item, note, f"{path}:{line}")
        result.found.append(VerdictCheck.of(entry, path, line))
        result.entries.append(entry)
    if ": #" in text:
        result.found.extend(_commented_numbers(text, path))
    return result


# `pr: #123`: to YAML a comment after an empty value, so an item without its PR.
_COMMENTED_NUMBER_RE = re.compile(r"^[ \t-]*(pr|related):[ \t]+#[ \t]*(\d+)", re.MULTILINE)


def _commented_numbers(text: str, path: str) -> list[Problem]:
    """An error per `pr: #123` / `related: #4` line: the number is a comment, not read."""
    return [
        Problem(
            path,
            text.count("\n", 0, m.start()) + 1,
            "error",
            f"`{m.group(1)}: #{m.group(2)}` is a YAML comment, so no number is read: write `{m.group(1)}: {m.group(2)}`",
        )
        for m in _COMMENTED_NUMBER_RE.finditer(text)
    ]


def _validated(text: str, path: str) -> tuple[list[int], StructuredDigest, list[Problem]]:
    """The digest a file holds, the line of each of its entries and the fields it does not know
    (each an error, dropped), or the DigestParseError of the first other problem (read through
    PyYAML's nodes, which know every value's line)."""
    root, digest, unknown = _validated_nodes(text, path)
    lines = [yaml_line(root, ("entries", index)) for index in range(len(digest.entries))]
    return lines, digest, unknown


def _validated_nodes(text: str, path: str) -> tuple[yaml.Node | None, StructuredDigest, list[Problem]]:
    """The node tree, the digest it holds and its unknown fields, or the DigestParseError of the
    first problem that is not an unknown field."""
    try:
        root, data = _compose_and_construct(text)
    except ValueError as exc:  # a value PyYAML's constructors refuse (`date: 2026-13-45`)
        raise DigestParseError(path, *_value_error_line(exc, text)) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise DigestParseError(path, *yaml_error_line(exc, text)) from None
    if not isinstance(data, dict):
        raise DigestParseError(path, 1, "expected a mapping with `repo` and `entries`")
    try:
        return root, _digest_of(data), []
    except ValidationError as exc:
        unknown = _unknown_fields(exc)
        if not unknown or len(unknown) < len(exc.errors()):
            raise DigestParseError(path, *validation_error_line(exc, root)) from None
    # A field the schema does not know (`state: closed`, a typo'd `autor:`) is an error of its own
    # line; the file's other fields still load: one key must not cost every entry its author.
    problems = [
        Problem(path, yaml_line(root, loc), "error", f"{'.'.join(map(str, loc))}: field not known, ignored")
        for loc in unknown
    ]
    for loc in unknown:
        _drop(data, loc)
    try:
        return root, _digest_of(data), problems
    except ValidationError as exc:
        raise DigestParseError(path, *validation_error_line(exc, root)) from None


def _unknown_fields(exc: ValidationError) -> list[tuple[int | str, ...]]:
    """Where the schema met a field it does not know."""
    return [tuple(error["loc"]) for error in exc.errors() if error["type"] == "extra_forbidden"]


def _drop(data: Any, loc: tuple[int | str, ...]) -> None:
    """Remove the value at `loc` (a path of keys and indices) from parsed YAML."""
    *parents, last = loc
    for step in parents:
        data = data[step]
    if isinstance(data, dict):
        data.pop(last, None)


def _digest_of(data: dict[str, Any]) -> StructuredDigest:
    """The validated digest; its entries' URLs are checked against its `repo`."""
    repo = data.get("repo", DEFAULT_REPO)
    return StructuredDigest.model_validate(data, context={"repo": repo if isinstance(repo, str) else None})


def _value_error_line(exc: ValueError, text: str) -> tuple[int, str]:
    """The line and value of the scalar PyYAML's constructors refuse (its error has no mark):
    each typed scalar of the document is built again until one fails. Only on that error."""
    try:
        root = yaml.compose(text, Loader=LOADER)
    except (yaml.YAMLError, ValueError, RecursionError):
        root = None
    loader = LOADER("")
    try:
        for node in _scalars(root):
            if node.tag == _STR:
                continue
            try:
                loader.construct_object(node)
            except ValueError as refused:
                return node.start_mark.line + 1, f"invalid value {node.value!r}: {refused}"
    finally:
        loader.dispose()
    return yaml_error_line(exc, text)


def _scalars(node: yaml.Node | None) -> Iterator[yaml.ScalarNode]:
    """The scalar nodes under `node`, in document order (a node held twice, once)."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            yield current
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(reversed(current.value))
        elif isinstance(current, yaml.MappingNode):
            stack.extend(child for pair in reversed(current.value) for child in reversed(pair))


def _entry(repo: str, name: str, position: int, item: StructuredEntry, note: str, source: str) -> Entry:
    """One item with a note as an entry: its note's parts, its metadata, URLs derived from PR numbers."""
    ident = entry_id(repo, item.title)
    return note_entry(
        ident, repo, name, position, item.title, note, **_pr_metadata(repo, item), source=source
    )


def _item_handles(item: StructuredEntry) -> list[str]:
    """The handles an item names (its author, its reviewers), which its note may name bare."""
    return [handle for handle in (item.author, *item.reviewers) if handle]


def _metadata(repo: str, item: StructuredEntry, line: int) -> Metadata:
    """One item without a note: only what it adds to the entry of its title elsewhere."""
    return Metadata(
        id=entry_id(repo, item.title),
        title=item.title.strip(),
        line=line,
        **_pr_metadata(repo, item),
        identifiers=find_identifiers(f"{item.title}\n"),
    )


def _pr_metadata(repo: str, item: StructuredEntry) -> dict[str, Any]:
    """What an item says of its PR, with a note or without: URLs derived from PR numbers."""
    return {
        "pr": item.pr,
        "url": item.url or (pull_url(repo, item.pr) if item.pr else None),
        "github_title": item.github_title,
        "author": item.author,
        "date": item.date,
        "tags": list(map(sys.intern, item.tags)),  # a few topics, thousands of entries
        "related": [Ref(number=n, url=pull_url(repo, n)) for n in item.related],
    }


__all__ = ["StructuredDigest", "StructuredEntry", "is_glossary_file", "json_schema", "parse_structured"]
