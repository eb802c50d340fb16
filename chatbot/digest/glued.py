"""Digests whose titles sit on the first line of their note's paragraph, with no blank line
between (`### Title (#123)` over `- what: …`; `Title (#123)` over a one-line review).

The plain layout alternates one-line title paragraphs and note paragraphs. A file with no
one-line paragraph at all cannot be read that way; every paragraph is then an entry whose first
line is its title, and nothing is guessed: a title paragraph of the plain layout is one line by
definition. In Markdown, a lone heading above the first titled paragraph (`# vLLM PR 精选 ·
2027-09`) heads the document, not an entry, and is said so in a warning.
"""

from __future__ import annotations

import re

from chatbot.digest.model import Problem

Block = tuple[int, list[str]]
HEADING_RE = re.compile(r"^#{1,6}[ \t]+\S")


def unglued(rest: list[Block], path: str, found: list[Problem], markdown: bool) -> list[Block]:
    """The paragraphs as the plain layout reads them: a file of titled paragraphs split into
    title and note paragraphs; any other file as it is."""
    body = _without_document_heading(rest, path, found) if markdown else rest
    if not body or any(len(block) == 1 for _, block in body):
        return rest
    split: list[Block] = []
    for line, block in body:
        split.extend([(line, block[:1]), (line + 1, block[1:])])
    return split


def _without_document_heading(rest: list[Block], path: str, found: list[Problem]) -> list[Block]:
    """The paragraphs after a lone heading that heads the document (followed by a heading)."""
    if len(rest) > 1 and _lone_heading(rest[0]) and HEADING_RE.match(rest[1][1][0]):
        line, block = rest[0]
        found.append(Problem(path, line, "warning", f"{block[0].strip()!r} read as the digest's heading"))
        return rest[1:]
    return rest


def _lone_heading(block: Block) -> bool:
    return len(block[1]) == 1 and bool(HEADING_RE.match(block[1][0]))
