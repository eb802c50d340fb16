"""A verdict said with its stars (`worth a skim ★★☆`, `> ★★★☆☆ 小而美，值得扫一眼`), wherever it
stands in a note: taken out before the note is cut into parts."""

from __future__ import annotations

import re

from chatbot.digest.clauses import clean
from chatbot.digest.note_labels import vocabulary

# A verdict in words with its rating after it, anywhere in the note (`…搞定。worth a skim ★★☆`,
# `Must-skim ★★★（前提是你碰 X）`, `可跳过 ★☆☆`): a few words or Chinese characters, then stars.
RATED_VERDICT_RE = re.compile(
    r"(?<![\w-])((?:[A-Za-z][\w'-]*[ \t]+){0,3}[A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,6})[ \t]*"
    r"([★☆⭐]{2,5})(?:[ \t]*[（(][^）)\n]{0,40}[）)])?"
)
# A line that opens with its rating (`> ★★★☆☆ 小而美，值得扫一眼`, `★★★★★ must read`): group 1 the
# stars, group 2 the rest of the line.
STARS_FIRST_RE = re.compile(r"^[ \t]*([★☆⭐]{2,5})[ \t]*(.*)$", re.MULTILINE)
# Where a verdict line's words end: at a clause or label end (`可跳过：…`, `小而美，值得扫一眼`).
_VERDICT_CLAUSE_END_RE = re.compile(r"[，,。；;：:！!]|\.(?:\s|$)|\s[—–-]+\s")


def rated_verdict(text: str) -> tuple[str | None, str]:
    """A verdict in words with its stars (`worth a skim ★★☆`) is the verdict wherever it stands;
    the note is read on without it (it is not part of the why-line it ends): (verdict, the rest)."""
    if "★" not in text and "☆" not in text and "⭐" not in text:
        return None, text
    stems = vocabulary().verdict_stem_re
    for match in RATED_VERDICT_RE.finditer(text):
        if stems.search(match.group(1)):
            return clean(match.group(0)), text[: match.start()] + text[match.end() :]
    opening = STARS_FIRST_RE.search(text)
    if opening is not None:
        words, rest = _verdict_words(opening.group(2), stems)
        return clean(f"{opening.group(1)} {words}"), text[: opening.start()] + rest + text[opening.end() :]
    return None, text


def _verdict_words(line: str, stems: re.Pattern[str]) -> tuple[str, str]:
    """The words after a line's opening stars that say the verdict, and the rest of the line:
    up to the end of the first clause that holds a verdict word (`小而美，值得扫一眼`); without
    one, the stars alone are the verdict and the words are the note's."""
    start = 0
    for end in _VERDICT_CLAUSE_END_RE.finditer(line):
        if stems.search(line, start, end.start()):
            return line[: end.start()], line[end.end() :]
        if end.group(0) not in _CLAUSE_GOES_ON:
            return "", line  # a sentence ended without one: the words are the note's
        start = end.end()
    if stems.search(line, start):
        return line, ""
    return "", line


_CLAUSE_GOES_ON = frozenset("，,")  # a verdict's words may run over a comma, not past a sentence
