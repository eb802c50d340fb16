"""What the bot understood of a note, part by part, with a hint for each part it did not find.

A curator writing in their own hand needs to see what readers will get: `vllm-digest validate
--explain` and `vllm-digest list --explain` print this. The hints name labels from the same
vocabulary the parser reads (`chatbot/digest/data/note_labels.yaml`), so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.digest.model import Entry
from chatbot.digest.note_labels import PartKind, vocabulary

PARTS = ("verdict", "why", "focus", "audience", "caveats", "refs", "people")
# Parts whose absence is worth a hint: a note can do without refs or people.
_HINTED: dict[str, PartKind] = {
    "verdict": "verdict",
    "why": "why",
    "focus": "focus",
    "audience": "audience",
    "caveats": "caveats",
}
_EXAMPLES = {
    "verdict": ("值得精读", "Must read"),
    "why": ("一句话说明为什么值得读", "one sentence on why it is worth reading"),
    "focus": ("1. … 2. …", "1. … 2. …"),
    "audience": ("…的人", "anyone working on …"),
    "caveats": ("…", "…"),
}


@dataclass(frozen=True)
class Explanation:
    """Each part as the readers will get it (empty list: not found) and hints for the missing ones."""

    entry: Entry
    parts: dict[str, list[str]]
    hints: list[str]

    def lines(self) -> list[str]:
        """Plain-text lines: `file:line  title`, one line per part, then the hints."""
        out = [f"{self.entry.source}  {self.entry.title}"]
        for name in PARTS:
            values = self.parts[name]
            if not values:
                out.append(f"  {name + ':':<10}—")
            elif len(values) == 1:
                out.append(f"  {name + ':':<10}{values[0]}")
            else:
                out.append(f"  {name + ':':<10}" + values[0])
                out.extend(f"  {'':<10}{v}" for v in values[1:])
        out.extend(f"  hint: {hint}" for hint in self.hints)
        return out

    def to_json(self) -> dict[str, object]:
        return {"id": self.entry.id, "source": self.entry.source, "parts": self.parts, "hints": self.hints}


def _label_examples(kind: PartKind) -> tuple[str, str]:
    """The first Chinese and the first English label of a part, as the vocabulary lists them."""
    words = [w for w, k in vocabulary().label_words if k == kind]
    chinese = next((w for w in words if not w.isascii()), "")
    english = next((w for w in words if w.isascii()), "")
    return chinese, english.capitalize()


def hint(part: str) -> str:
    """`no audience found: add `适合：…的人` or `Who should read: anyone working on …``."""
    kind = _HINTED[part]
    zh_label, en_label = _label_examples(kind)
    zh_example, en_example = _EXAMPLES[part]
    if part == "verdict":
        return (
            f"no verdict found: open the note with one (`{zh_example}`, `{en_example}`) "
            f"or add `{zh_label}：…` / `{en_label}: …`"
        )
    return f"no {part} found: add `{zh_label}：{zh_example}` or `{en_label}: {en_example}`"


def explain(entry: Entry) -> Explanation:
    """The parts of one entry; a metadata-only or empty note gets no hints."""
    parts = {
        "verdict": [entry.verdict] if entry.verdict else [],
        "why": [entry.why] if entry.why else [],
        "focus": list(entry.highlights),
        "audience": [entry.audience] if entry.audience else [],
        "caveats": list(entry.caveats),
        "refs": [f"#{r.number} {r.url}" for r in entry.all_refs],
        "people": list(entry.people),
    }
    hints: list[str] = []
    if entry.note.strip():
        # Focus points default to the note's sentences, so only a note without any is hinted.
        hints = [hint(name) for name in _HINTED if not parts[name]]
    return Explanation(entry, parts, hints)
