"""Notes written as rows: a Markdown table (`| 风险 | … |`) or `Q: … A: …` lines. Read as the
lines they stand for — "风险：…", the answer — so every reader (parts, people, verdicts, the
answerer's clauses) meets the curator's words, not the table's pipes or the curator's questions."""

from __future__ import annotations

import re

from chatbot.digest.note_labels import vocabulary

TABLE_ROW_RE = re.compile(r"\|(.*)\|")
RULE_CELL_RE = re.compile(r":?-{2,}:?")
BR_RE = re.compile(r"<br\s*/?>", re.I)
QA_RE = re.compile(r"^\s*(?:[-*•]\s+)?\**Q\**\s*[:：.]\s*(.+?)\s+\**A\**\s*[:：.]\s*(.+)$")
# A line opening with a short question of its own, answered on the line: `Read? yes — …`,
# `值得看吗？一般`. Only a question asking whether to read it is read (as the verdict's label).
ASKED_LINE_RE = re.compile(
    r"^\s*(?:[-*•]\s+)?\**([A-Za-z][A-Za-z' ]{0,15}\?|[\u4e00-\u9fff][^?？\n:：\[\]【】]{0,15}[吗么不][?？])\**\s+(\S.*)$"
)


def note_rows(note: str) -> list[tuple[str, str]]:
    """The note's lines as written, each with the question it answers when the curator asks one:
    a table row is "label：value" (the header and rule rows are none), a `Q: … A: …` line its
    answer, about its question."""
    out: list[tuple[str, str]] = []
    table_rows = 0
    for raw in note.split("\n"):
        row = TABLE_ROW_RE.fullmatch(raw.strip())
        table_rows = table_rows + 1 if row else 0
        if row:
            out.extend(_table_row(row.group(1), first=table_rows == 1))
            continue
        for line in LABEL_JOIN_RE.split(raw):
            asked = QA_RE.match(line) or _asks_to_read(line)
            out.append((asked.group(2), asked.group(1)) if asked else (line, ""))
    return out


# Two labelled lines written as one: `Why it matters: … | People: …`.
LABEL_JOIN_RE = re.compile(r"\s+\|\s+(?=[^|:：\s][^|:：]{0,20}[:：]\s)")


def _table_row(inner: str, first: bool) -> list[tuple[str, str]]:
    """A table row as "label：value"; the header row and the rule row say nothing."""
    cells = [c.strip() for c in inner.split("|")]
    if first or len(cells) < 2 or all(RULE_CELL_RE.fullmatch(c) for c in cells):
        return []
    return [(f"{cells[0]}：{BR_RE.sub('；', '；'.join(cells[1:]))}", "")]


def _asks_to_read(line: str) -> re.Match[str] | None:
    asked = ASKED_LINE_RE.match(line)
    return asked if asked is not None and vocabulary().verdict_stem_re.search(asked.group(1)) else None


def as_rows_read(note: str) -> str:
    """The note with its table rows read as "label：value" and its Q/A lines as `_as_line` says;
    other notes unchanged (the same object)."""
    if "|" not in note and "Q" not in note and "?" not in note and "？" not in note:  # on every note at load
        return note
    return "\n".join(_as_line(line, asked) for line, asked in note_rows(note))


def _as_line(answer: str, asked: str) -> str:
    """A Q/A line as the reader reads it: "question：answer", the question a label; a short
    question asking whether to read it ("worth reading?", "要不要看") is the verdict's label."""
    if not asked:
        return answer
    if len(asked) <= VERDICT_QUESTION and vocabulary().verdict_stem_re.search(asked):
        return f"{VERDICT_LABEL}：{answer}"
    return f"{asked}：{answer}"


VERDICT_QUESTION = 16  # characters: a longer question is about something else it names
VERDICT_LABEL = "结论"
