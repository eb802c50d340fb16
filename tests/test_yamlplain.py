"""The plain-shape YAML reader against PyYAML on generated documents: whatever it reads, it reads
as `yaml.load(..., CSafeLoader)` does, items at the lines PyYAML's nodes give; whatever it
declines (anchors, tags, merge keys, odd indents, escapes…) PyYAML reads. A digest parses to the
same entries, metadata and problems through either path."""

from __future__ import annotations

from typing import Any
from unittest import mock

import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from chatbot.digest import structured
from chatbot.digest.model import DigestParseError
from chatbot.digest.yamlnodes import yaml_line
from chatbot.digest.yamlplain import read_plain

LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

TRICKY = [
    "1", "0", "7", "012", "089", "0x1F", "0o17", "0b101", "1_000", "1:30", "-1", "+1", "1.5", ".inf",
    "-.inf", ".nan", "1e3", "1.0e+3", "99999999999999999999", "true", "True", "yes", "No", "on",
    "OFF", "y", "n", "null", "Null", "~", "2026-08-31", "2026-02-30", "2026-8-1",
    "2026-08-31 10:00:00", "2026-08-31T10:00:00Z", "a: b", "a #b", "a#b", "#c", "'q'", "'it''s'",
    '"d q"', '"esc \\n"', '"a" b', "&a x", "*a", "!!str 1", "!x y", "<<", "=", "[a, b]",
    "[a, [b]]", "[]", "[ ]", "{a: 1}", "| x", "> x", "|", "-x", "- x", "?x", "? x", "%x", "@x",
    "`x`", "x:y", "x:", "http://a/b", "中文 标题", "中文：冒号", "a\tb", "x  ", "\u3000x",
    "x\u2028y", "x\x85y", "\ufeffx", "a, b", "[a,]", "['a', \"b\"]", "[1, 2, yes, ~]", "[x:y]",
    "[a b, c#d]", "[#a]", "a  b", "a ,b", "x\ry", "...", "---", "a]b", "a}b", "vllm-project/vllm",
]  # fmt: skip
SCALARS = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8))
# What each key of a digest item mostly holds, so that most generated digests parse.
USUAL = {
    "title": st.sampled_from(["t1", "中文 标题 2", "Fix `a.b` x", '"[Bugfix] y"', "'z: w'"]),
    "note": st.sampled_from(["结论：值得看。", "fixes #12 by @alice", "a note, with commas"]),
    "pr": st.sampled_from(["12", "60001", "1"]),
    "author": st.sampled_from(["alice", "bob-2", '"carol"']),
    "date": st.sampled_from(["2026-08-31", "2024-02-29"]),
    "tags": st.sampled_from(["kv cache", "fp8", "中文", "'yes'"]),
    "related": st.sampled_from(["1", "52026", "7"]),
}


def value(key: str) -> st.SearchStrategy[str]:
    return st.one_of(*[USUAL[key]] * 12, SCALARS)


KEYS = st.sampled_from(
    ["title", "note", "pr", "tags", "related", "author", "date", "repo", "digest", "entries", "null",
     "yes", "<<", '"title"', "x y", "a1", "_k"]
)  # fmt: skip
# (indent, kind) of one line; kinds: key and value, bare key, item opening with a key,
# list element, comment, blank.
LINES = st.tuples(
    st.sampled_from([0, 0, 1, 2, 2, 3, 4, 6]),
    st.sampled_from(["kv", "k", "-kv", "-k", "-v", "#", ""]),
    KEYS,
    SCALARS,
    st.sampled_from(["", "", " # note", "  ", "\t"]),
)


def render(line: tuple[int, str, str, str, str]) -> str:
    indent, kind, key, value, tail = line
    body = {
        "kv": f"{key}: {value}",
        "k": f"{key}:",
        "-kv": f"- {key}: {value}",
        "-k": f"- {key}:",
        "-v": f"- {value}",
        "#": "# comment",
        "": "",
    }[kind]
    return " " * indent + body + tail


@st.composite
def digest_shaped(draw: st.DrawFn) -> str:
    """A document shaped like a digest, in either list style, with tricky scalars in places."""
    item_dash = draw(st.sampled_from([0, 2]))
    pad = " " * item_dash
    lines = [f"repo: {draw(st.sampled_from(['vllm-project/vllm', 'a/b', 'x']))}", "entries:"]
    for _ in range(draw(st.integers(1, 3))):
        lines.append(f"{pad}- title: {draw(value('title'))}")
        for key in draw(
            st.lists(st.sampled_from(["pr", "author", "date", "note", "tags", "related"]), unique=True)
        ):
            if key in ("tags", "related") and draw(st.booleans()):
                lines.append(f"{pad}  {key}:")
                sub = pad + draw(st.sampled_from(["  ", "    "]))
                lines.extend(f"{sub}- {draw(value(key))}" for _ in range(draw(st.integers(1, 3))))
            elif key in ("tags", "related"):
                flow = ", ".join(draw(st.lists(value(key), max_size=3)))
                lines.append(f"{pad}  {key}: [{flow}]")
            else:
                lines.append(f"{pad}  {key}: {draw(value(key))}")
        if draw(st.booleans()):
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["# c", "", "  # c"])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


DOCUMENTS = st.one_of(
    digest_shaped(), st.lists(LINES, max_size=12).map(lambda ls: "\n".join(map(render, ls)))
)


def pyyaml(text: str) -> tuple[str, Any]:
    try:
        return "ok", yaml.load(text, LOADER)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        return "error", type(exc).__name__


@given(DOCUMENTS)
@settings(max_examples=600)
def test_what_the_plain_reader_reads_pyyaml_reads_the_same(text: str) -> None:
    plain = read_plain(text)
    expected = pyyaml(text)
    event("plain" if plain is not None else f"pyyaml: {expected[0]}")
    if plain is None:
        return
    data, item_lines = plain
    assert expected[0] == "ok"
    assert repr(data) == repr(expected[1])  # types too: 1 is not True, 1.0 is not 1
    root = yaml.compose(text, LOADER)
    for key, lines in item_lines.items():
        assert lines == [yaml_line(root, (key, index)) for index in range(len(data[key]))]


def parsed(text: str) -> tuple[str, Any]:
    try:
        result = structured.parse_structured(text, "d.yaml")
    except DigestParseError as exc:
        return "error", str(exc.problem)
    return "ok", (
        [e.model_dump(mode="json") for e in result.entries],
        [repr(m) for m in result.metadata],
        [str(p) for p in result.found],
    )


@given(DOCUMENTS)
@settings(max_examples=300)
def test_a_digest_parses_the_same_with_or_without_the_plain_reader(text: str) -> None:
    fast = parsed(text)
    with mock.patch.object(structured, "read_plain", lambda _text: None):
        slow = parsed(text)
    event(f"{fast[0]}")
    assert fast == slow


def test_the_bundled_style_and_the_dumped_style_are_read_plain() -> None:
    bundled = 'repo: a/b\nentries:\n  - title: 标题 一\n    pr: 12\n    github_title: "[Bugfix] x"\n'
    bundled += "    date: 2026-08-31\n    tags: [kv cache, fp8]  # topics\n    related: [1, 2]\n"
    dumped = "repo: a/b\nentries:\n- title: t\n  tags:\n  - x\n  - 'y'\n- title: u\n  related:\n  - 3\n"
    for text in (bundled, dumped):
        plain = read_plain(text)
        assert plain is not None
        assert plain[0] == yaml.load(text, LOADER)
    assert read_plain(bundled) is not None and read_plain(bundled)[1] == {"entries": [3]}  # type: ignore[index]
    assert read_plain(dumped)[1] == {"entries": [3, 7]}  # type: ignore[index]
    assert read_plain("repo: &r a/b\nentries: []\n") is None  # an anchor: PyYAML's
