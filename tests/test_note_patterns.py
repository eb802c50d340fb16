"""The note reader's patterns rewritten for speed must match exactly where their plain forms do.

The whole-note patterns open with the character every match starts with and look behind after it
(`x(?<!y.)` for `(?<!y)x`), so `re` skips ahead to those characters; the plain forms are kept here
as the specification.
"""

from __future__ import annotations

import re
from importlib.resources import files

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from chatbot.digest import names, note
from chatbot.digest.note_labels import _any_of

PLAIN_FORMS = {
    "REF_RE": re.compile(r"(?<![\w/&])#(\d{2,7})\b"),
    "CODE_RE": re.compile(
        r"(?<![\w`./-])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|_*[A-Za-z0-9]+_[A-Za-z0-9_]*)"
    ),
    "WORD_REF_RE": re.compile(r"(?<![\w/])(?:PR|pull request|pull|issue)\s*#?\s*(\d{2,7})\b", re.IGNORECASE),
    "MARKER_RE": re.compile(r"(?:[一二三四五六七八九十]是|[（(]\d+[)）]|[①②③④⑤⑥⑦⑧⑨⑩])\s*"),
}
PLAIN_PERSON_FORMS = [
    re.compile(r"(?<![\w`#])([a-z0-9][a-z0-9-]{2,38})\s*(?:提出|指出|认为|建议|补充|发现)"),
    re.compile(r"(?<![\w`#])([a-z0-9][a-z0-9-]{2,38})\s*对[^。；，]{1,40}的(?:解释|分析|说明|回复|意见)"),
    re.compile(
        r"(?<![\w`#])([a-z0-9][a-z0-9-]{2,38})\s*的[^，。；\s]{0,6}(?:分析|解释|评论|意见|建议|审查|review)"
    ),
]
# Letters and marks the patterns turn on, the case-folding oddities `re` knows (İ, ı, ſ, K) included.
_PIECES = st.sampled_from(
    [
        *"aZ09_.`/-&#@ é中是一十（()）①⑩\u3000\n'",
        *("PR", "pr", "Pull", "pull request", "issue", "İ", "ı", "ſ", "K"),
        *("提出", "对", "的", "分析", "review", "，", "。", "12", "345"),
        *("'s ", "’s ", " argued", " pointed out"),
    ]
)
_TEXTS = st.lists(_PIECES, max_size=20).map("".join)


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in pattern.finditer(text)]


@settings(max_examples=1500)
@given(_TEXTS)
def test_rewritten_patterns_match_like_their_plain_forms(text: str) -> None:
    for name, plain in PLAIN_FORMS.items():
        assert _matches(getattr(names, name, None) or getattr(note, name), text) == _matches(plain, text), (
            name
        )
    assert note.MARKER_RE.split(text) == PLAIN_FORMS["MARKER_RE"].split(text)
    for (pattern, _), plain in zip(names._PERSON_PATTERNS[2:5], PLAIN_PERSON_FORMS, strict=True):
        assert _matches(pattern, text) == _matches(plain, text), plain.pattern
    verbs = note.vocabulary().person_verb_re.pattern[len(r"\s(?:") : -1]
    plain_verb = re.compile(rf"(?<!['’]s )(?<![\w`@/.-])([A-Za-z][A-Za-z0-9-]{{1,38}})(?=\s+(?:{verbs}))")
    assert _matches(note.vocabulary().person_before_verb_re, text) == _matches(plain_verb, text)


_LEADS = [
    lead
    for key in ("caveat_leads", "audience_leads")
    for lead in yaml.safe_load(files("chatbot.digest").joinpath("data/note_labels.yaml").read_text("utf-8"))[
        key
    ]
]
_LEAD_PIECES = st.sampled_from(
    [
        *"aNnSsſTtUuCcMmK _-é中\n",
        *("not yet", "NOT YET", "still open", "tbd", "TBD", "unresolved", "may break", "Could break"),
    ]
)


@settings(max_examples=800)
@given(st.lists(_LEAD_PIECES, max_size=12).map("".join))
def test_case_insensitive_word_leads_match_like_their_plain_forms(text: str) -> None:
    """A lead searched with a first-letter look (`(?i:(?=[cm…])\\b(?:…))`) finds what it finds bare."""
    for lead in _LEADS:
        assert _any_of([lead]).search(text) == bool(re.search(lead, text)), lead


@settings(max_examples=800)
@given(_TEXTS)
def test_code_names_found_as_without_the_dot_or_underscore_look(text: str) -> None:
    """`find_identifiers` skips the code-name search on notes with no `.` or `_`; it loses none."""
    found = [m.strip() for m in names.BACKTICK_RE.findall(text)]
    bare = PLAIN_FORMS["CODE_RE"].findall(names.BACKTICK_RE.sub(" ", text))
    found += [m for m in bare if not re.fullmatch(r"v?\d[\d.]*", m)]
    assert names.find_identifiers(text) == names.dedupe([f for f in found if f])
