"""The names a review note holds: references to pull requests and issues, code names, people."""

from __future__ import annotations

import re
from collections.abc import Iterator

from chatbot.digest.clauses import clean
from chatbot.digest.note_labels import NoteVocabulary, vocabulary
from chatbot.digest.people import (
    KnownPeople,
    english_like,
    handle_like,
    known_people,
    listed_after,
    listed_before,
    named_as_people,
)
from chatbot.digest.refs import Ref, pull_url
from chatbot.text import has_han

VERSION_RE = re.compile(r"v?\d[\d.]*")

TWO_DIGITS_RE = re.compile(r"\d\d")

# Patterns scanning a whole note open with the character (class) every match starts with, the
# look behind it coming after it (`x(?<!y.)` for `(?<!y)x`): `re` then skips ahead to those
# characters instead of trying the pattern at every position.
REF_RE = re.compile(r"#(?<![\w/&].)(\d{2,7})\b")

BACKTICK_RE = re.compile(r"`([^`\n]+)`")

# Bare code names: dotted (asyncio.gather, object.__new__) or with an underscore (prompt_is_token_ids).
# (As `(?<![\w`./-])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|_*[A-Za-z0-9]+_[A-Za-z0-9_]*)`
# with its first character taken before the alternatives.)
CODE_RE = re.compile(
    r"([A-Za-z0-9_](?<![\w`./-].)(?:(?<=[A-Za-z_])[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
    r"|(?<=_)_*[A-Za-z0-9]+_[A-Za-z0-9_]*|(?<=[A-Za-z0-9])[A-Za-z0-9]*_[A-Za-z0-9_]*))"
)

# (A discussion, `…/discussions/N`, is numbered with the repository's issues and pull requests.)
GITHUB_URL_RE = re.compile(
    r"https?://github\.com/([\w.-]+/[\w.-]+)/(pull|issues|discussions)/(\d+)[^\s)>）。，,]*"
)

# `vllm-project/vllm#123`: GitHub's cross-reference, of this repository or another; run only on a
# note where a `#` follows a word character (`_REPO_HASH_RE`), which no plain `#123` does.
REPO_REF_RE = re.compile(r"(?<![\w./-])([A-Za-z0-9][\w.-]*/[\w.-]+)#(\d{1,7})\b")

_REPO_HASH_RE = re.compile(r"#(?<=[\w.-]#)\d")

# (As `(?i)(?<![\w/])(?:PR|pull request|pull|issue)\s*#?\s*(\d{2,7})\b`; `re` folds İ and ı to i.)
WORD_REF_RE = re.compile(
    r"[PpIi\u0130\u0131](?<![\w/].)(?i:(?<=[Pp])(?:r|ull request|ull)|(?<![Pp])ssue)\s*#?\s*(\d{2,7})\b"
)

# `RFC 14719`, `RFC #14719`: vLLM's RFCs are issues of the repository.
RFC_REF_RE = re.compile(r"[Rr](?<![\w/].)[Ff][Cc]\s*#?\s*(\d{2,7})\b")

# `alice-dev's review`: a handle-shaped word (a dash or digit in it; not a model's code name with
# capitals before its digit, `MiniCPM3's layers`) or any word before a review noun.
POSSESSIVE_RE = re.compile(
    r"(?<![\w`@/.-])([A-Za-z0-9]+(?:-[A-Za-z0-9]+)+|(?![A-Za-z]*[A-Z]{2,}\d)[A-Za-z]+\d[A-Za-z0-9]*"
    r"|[A-Za-z][A-Za-z0-9]{1,38}(?=['’]s\s+"
    r"(?:review|analysis|comments?|suggestions?|point|explanation|benchmarks?|question|concerns?|reply|"
    r"proposal|objection|numbers|repro|investigation|findings|follow-?ups?|digging|#\d)))['’]s\b"
)

# Each with a cheap pattern for what any of its matches must hold (its verb, its `@`): finding
# that first spares the costly pattern on most notes (`re` finds a literal faster than `in` a few).
# A handle is followed by a space or a CJK word, never its own letters: it is taken possessively (`+`).
_PERSON_PATTERNS = (
    (re.compile(r"@(?![0-9]+(?![\w-]))([A-Za-z0-9][A-Za-z0-9-]{1,38})"), re.compile("@")),  # `@16` is "at 16"
    (re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*\[bot\])"), re.compile(r"\[bot\]")),
    (
        # (`hashing 建议`: a word ending like an English noun before a noun-like verb is a thing)
        re.compile(
            r"([a-z0-9](?<![\w`#].)[a-z0-9-]{2,38}+)(?<!ing)(?<!ion)(?<!ment)\s*(?:提出|指出|认为|建议|补充|发现)"
        ),
        re.compile("提出|指出|认为|建议|补充|发现"),
    ),
    (
        re.compile(
            r"([a-z0-9](?<![\w`#].)[a-z0-9-]{2,38}+)\s*对[^。；，]{1,40}的(?:解释|分析|说明|回复|意见)"
        ),
        re.compile("的(?:解释|分析|说明|回复|意见)"),
    ),
    (
        re.compile(
            r"([a-z0-9](?<![\w`#].)[a-z0-9-]{2,38}+)\s*的[^，。；\s]{0,6}(?:分析|解释|评论|意见|建议|审查|review)"
        ),
        re.compile(r"的[^，。；\s]{0,6}(?:分析|解释|评论|意见|建议|审查|review)"),
    ),
    (POSSESSIVE_RE, re.compile("['’]s")),
)

# `bob: this breaks …` at the start of a line or sentence: a lowercase handle speaking.
SPEAKER_RE = re.compile(
    r"(?:^|(?<=[\n。！？!?；;])|(?<=[.!?] ))\s*([a-z][a-z0-9-]{1,38})\s*:\s+(?!//)", re.MULTILINE
)


def dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def find_refs(text: str, repo: str) -> list[Ref]:
    """`#N`, `PR 123`, `issue #45`, `pull request 67` and GitHub pull/issue URLs, in order of appearance.

    Numbers refer to the entry's repository; a URL of another repository keeps its own address.
    """
    found: list[tuple[int, int, str]] = []
    covered: list[tuple[int, int]] = []  # a number inside a URL or a ref already found is no ref
    for m, kind, number in _repo_refs(text):
        same = m.group(1).casefold() == repo.casefold()
        url = pull_url(repo, number) if same else f"https://github.com/{m.group(1)}/{kind}/{number}"
        found.append((m.start(), number, url))
        covered.append(m.span())
    for m in _number_refs(text):
        if not any(a <= m.start() < b for a, b in covered):
            found.append((m.start(), int(m.group(1)), pull_url(repo, int(m.group(1)))))
            covered.append(m.span())
    refs: dict[str, Ref] = {}
    for _, number, url in sorted(found):
        refs.setdefault(url, Ref(number=number, url=url))
    return list(refs.values())


def _repo_refs(text: str) -> Iterator[tuple[re.Match[str], str, int]]:
    """GitHub pull/issue URLs, then `owner/name#N` references, each with the repository's path
    kind and the number; a pattern runs only when the text holds what its matches hold."""
    if "github.com/" in text:
        for m in GITHUB_URL_RE.finditer(text):
            yield m, m.group(2), int(m.group(3))
    if "#" in text and _REPO_HASH_RE.search(text):
        for m in REPO_REF_RE.finditer(text):
            yield m, "pull", int(m.group(2))


def _number_refs(text: str) -> Iterator[re.Match[str]]:
    """`#N` matches, then `PR N` ones; a pattern runs only when the text holds what each of its
    matches holds (a `#`, two digits): most notes name no ref at all."""
    if "#" in text:
        yield from REF_RE.finditer(text)
    if TWO_DIGITS_RE.search(text):
        yield from WORD_REF_RE.finditer(text)
        if "RFC" in text or "rfc" in text:
            yield from RFC_REF_RE.finditer(text)


def find_identifiers(text: str) -> list[str]:
    """Code names: everything in backticks, then bare dotted or snake_case names (each holds a
    `.` or `_`: a note with neither, as many Chinese ones, is not searched for them)."""
    found = [m.strip() for m in BACKTICK_RE.findall(text)] if "`" in text else []
    without_code = BACKTICK_RE.sub(" ", text) if found else text
    if "." in without_code or "_" in without_code:
        found.extend(m for m in CODE_RE.findall(without_code) if not VERSION_RE.fullmatch(m))
    return dedupe([f for f in found if f])


def find_people(text: str, known: KnownPeople | None = None) -> list[str]:
    """Handles the note names: `@x`, `x[bot]`, `x 指出`, `x's review`, `x argued`, a line opening
    `x:`, and a known handle or full name standing bare (`mgoin`, `Michael Goin` → `mgoin`). A
    surname read alone (`Woosuk Kwon said`: `Kwon`) is not a handle: the full name is read as one."""
    vocab = vocabulary()
    known = known or known_people()
    plain = _without_links_and_code(text)
    found = [
        (m.start(1), m.group(1))
        for pattern in _person_patterns(plain, vocab)
        for m in pattern.finditer(plain)
    ]
    found.extend(_speakers(plain, vocab))
    found.extend(_known_and_listed(plain, known))
    found.extend(named_as_people(plain, vocab.not_people))
    names = [name for at, name in sorted(found) if known.handle(name) or not _surname(plain, at, name)]
    return dedupe([p for p in names if p.casefold() not in vocab.not_people and p.lower() != "the"])


def _known_and_listed(plain: str, known: KnownPeople) -> list[tuple[int, str]]:
    """Known handles and names, and the handles listed with one or with an `@` handle
    (`reviewed by njhill and luyuzhe111`, `chenyang78, mgoin, @tlrmchlsmth`)."""
    named = known.found(plain)
    found = list(named)
    for at, handle in named:
        if plain[at : at + len(handle)].casefold() == handle.casefold():
            found.extend(listed_after(plain, at + len(handle), handle_like))
    found.extend(listed_before(plain, [at for at, _ in named] + _at_handles(plain), handle_like))
    return found


_FIRST_NAME_BEFORE_RE = re.compile(r"(?<![\w-])[A-Z][a-z]+[ \t]+$")
_SURNAME_RE = re.compile(r"[A-Z][a-z]+")
_DETERMINER_BEFORE_RE = re.compile(
    r"(?<![\w-])(?i:the|a|an|this|that|its|their|his|her|our|my|your|each|every)[ \t]+$"
)


def _surname(text: str, at: int, word: str) -> bool:
    """`Kwon` of `Woosuk Kwon`: a capitalised word right after another one; and any word right
    after an article or a possessive (`the log showed`, `its scheduler argued`): a thing."""
    if _DETERMINER_BEFORE_RE.search(text, max(at - 12, 0), at) is not None:
        return True
    return (
        _SURNAME_RE.fullmatch(word) is not None
        and _FIRST_NAME_BEFORE_RE.search(text, max(at - 40, 0), at) is not None
    )


def _at_handles(text: str) -> list[int]:
    """Where each `@handle` starts (at its `@`)."""
    return [m.start() for m in re.finditer(r"@[A-Za-z0-9]", text)] if "@" in text else []


def find_known_people(text: str, known: KnownPeople) -> list[str]:
    """Only the known handles and names the text names (a digest's own people, read after load)."""
    return dedupe([handle for _, handle in sorted(known.found(_without_links_and_code(text)))])


def _without_links_and_code(text: str) -> str:
    """The note without its GitHub links and code spans, where no name is looked for; each
    pattern runs only on a note that holds what it needs (most hold neither)."""
    if "github.com/" in text:
        text = GITHUB_URL_RE.sub(" ", text)
    if "`" in text:
        text = BACKTICK_RE.sub(" ", text)
    return text


def _person_patterns(plain: str, vocab: NoteVocabulary) -> Iterator[re.Pattern[str]]:
    """The person patterns that may match: what each match must hold (its verb, its `@`) is
    found first by a cheap pattern, which spares the costly one on most notes."""
    for pattern, needed in _PERSON_PATTERNS:
        if needed.search(plain):
            yield pattern
    if vocab.person_verb_re.search(plain):
        yield vocab.person_before_verb_re


def _speakers(plain: str, vocab: NoteVocabulary) -> list[tuple[int, str]]:
    """`bob: …` opening a line or sentence, unless `bob` is a label (`Risks: …`) or an English
    word (`backstory: …`)."""
    if ":" not in plain:
        return []
    return [
        (m.start(1), m.group(1))
        for m in SPEAKER_RE.finditer(plain)
        if vocab.label_kind(m.group(1)) is None and not english_like(m.group(1))  # `backstory: …`
    ]


def name_listing(items: list[str], intro: str | None) -> str:
    """`Tested at: Meta, LinkedIn, Roblox` as one body sentence, in the note's language."""
    han = has_han("".join(items)) or has_han(intro or "")
    listing = ("、" if han else ", ").join(items)
    return f"{clean(intro).rstrip('：:')}{'：' if han else ': '}{listing}" if intro else listing


# A proper name: one to three capitalised or all-capital Latin words (`Red Hat`, `IBM`, `LinkedIn`).
_PROPER_NAME_RE = re.compile(r"[A-Z][A-Za-z&.'-]*(?: [A-Z][A-Za-z&.'-]*){0,2}")
_SHORT_HAN_RE = re.compile(r"[\u4e00-\u9fff]{2,4}")


def names_only(items: list[str]) -> bool:
    """Three or more items that are all names (Latin proper names, at most a few short Chinese
    ones among them: `字节跳动`): a list of companies or people, not focus points."""
    if len(items) < 3:
        return False
    proper = sum(1 for item in items if _PROPER_NAME_RE.fullmatch(item))
    han = sum(1 for item in items if _SHORT_HAN_RE.fullmatch(item))
    return proper + han == len(items) and proper * 2 >= len(items)
