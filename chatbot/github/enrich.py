"""`vllm-digest github enrich FILE.meta.yaml`: fill the PR metadata GitHub knows and the file lacks.

Only lines are added — `github_title`, `author`, `date`, `tags` under an item's `pr:` line, at its
indentation — so notes, comments, quoting and order stay exactly as the curator wrote them. A
value already there is never replaced. The result is parsed before it is written; a file it
cannot edit line by line (an item in flow style `{…}`) is named and left alone.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from chatbot.github.client import GitHubClient, GitHubUnavailable, NotFound
from chatbot.github.sections import pull_section

FILLED = ("github_title", "author", "date", "tags")


@dataclass
class EnrichResult:
    """What was filled, what could not be, and whether GitHub stopped answering."""

    filled: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str | None = None

    def lines(self) -> list[str]:
        out = [*self.filled, *self.problems]
        if self.error:
            out.append(f"stopped: {self.error}; what was filled before is written")
        out.append(f"{len(self.filled)} items filled")
        return out


@dataclass(frozen=True)
class _Item:
    """An item of `entries:` with a PR: where its `pr:` line is, its indentation, what it lacks."""

    pr: int
    line: int  # 0-based line of the `pr:` value
    indent: int
    missing: tuple[str, ...]


def enrich_file(path: Path, client: GitHubClient) -> EnrichResult:
    """Fill the file's missing PR metadata in place (atomically)."""
    result = EnrichResult()
    try:
        text = path.read_text(encoding="utf-8")
        repo, items = _items(text, path, result)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as exc:
        result.error = f"{path}: {exc}".splitlines()[0]
        return result
    lines = text.splitlines(keepends=True)
    for item in sorted(items, key=lambda i: i.line, reverse=True):
        try:
            values = _github_values(client, repo, item.pr)
        except NotFound:
            result.problems.append(f"{path}:{item.line + 1}: PR #{item.pr} is not on GitHub ({repo})")
            continue
        except GitHubUnavailable as exc:
            result.error = str(exc)
            break
        added = [f"{' ' * item.indent}{name}: {values[name]}\n" for name in item.missing if name in values]
        if added:
            lines[item.line + 1 : item.line + 1] = added
            shown = ", ".join(name for name in item.missing if name in values)
            result.filled.append(f"{path}:{item.line + 1}: #{item.pr}: {shown}")
    _write(path, "".join(lines), result)
    return result


def _items(text: str, path: Path, result: EnrichResult) -> tuple[str, list[_Item]]:
    """The file's repository and its items with a PR that lack some of `FILLED`."""
    root = yaml.compose(text)
    if not isinstance(root, yaml.MappingNode):
        raise ValueError("not a digest metadata file (a mapping with repo and entries)")
    top = {key.value: value for key, value in root.value}
    repo = top.get("repo")
    entries = top.get("entries")
    if not isinstance(repo, yaml.ScalarNode) or not isinstance(entries, yaml.SequenceNode):
        raise ValueError("no repo: and entries: at the top")
    items = [_item(node, path, result) for node in entries.value]
    return str(repo.value), [item for item in items if item is not None]


def _item(node: yaml.Node, path: Path, result: EnrichResult) -> _Item | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    fields = {key.value: (key, value) for key, value in node.value}
    if "pr" not in fields:
        return None
    key, value = fields["pr"]
    if not str(value.value).isdigit():
        return None
    missing = tuple(name for name in FILLED if name not in fields)
    if missing and node.flow_style:
        result.problems.append(f"{path}:{key.start_mark.line + 1}: item in flow style {{…}}; left as it is")
        return None
    return _Item(int(value.value), value.end_mark.line, key.start_mark.column, missing) if missing else None


def _github_values(client: GitHubClient, repo: str, pr: int) -> dict[str, str]:
    """The PR's title, author, date (merged, else opened) and labels as YAML values."""
    pull = pull_section(client.get(f"/repos/{repo}/pulls/{pr}").body or {})
    found = {"github_title": pull["title"], "author": pull["author"], "tags": pull["labels"]}
    values = {name: yaml_value(value) for name, value in found.items() if value}
    when = pull["merged_at"] or pull["created_at"]
    if when:
        values["date"] = dt.datetime.fromisoformat(when.replace("Z", "+00:00")).date().isoformat()
    return values


# Characters a YAML double-quoted scalar cannot hold as they are: controls, DEL, and the line
# breaks YAML has beyond \n (NEL, LS, PS), which it would fold into a space.
_NOT_YAML_PRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")


def yaml_value(value: str | list[str]) -> str:
    """A string or list of strings as a YAML flow value: JSON (a JSON string is a YAML
    double-quoted scalar, so a title's `: `, `#` or `"` stay text), with what YAML cannot hold
    as it is written as an escape."""
    text = json.dumps(value, ensure_ascii=False)
    return _NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _write(path: Path, text: str, result: EnrichResult) -> None:
    """Write the file when it still parses, through a temporary file beside it."""
    if not result.filled:
        return
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        result.error = f"{path}: the filled file would not parse ({exc}); left as it was".splitlines()[0]
        result.filled.clear()
        return
    temporary = path.with_name(f".{path.name}.enrich")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
