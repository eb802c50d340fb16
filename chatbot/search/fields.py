"""What of an entry is searched, and how much a field says the entry is about a term.

A term found in an entry's PR number says more than one found in its note: each field has a
weight (`W_*`), and the index posts an entry under a key at the heaviest field holding it.
Postings store a field's *level* (its weight's rank, lightest 0) in four bits.
"""

from __future__ import annotations

from chatbot.digest import Entry, full_names

W_PR = 5.0
W_TITLE = 3.0
W_AUTHOR = 3.0
W_GITHUB_TITLE = 2.5
W_TAG = 2.5
W_IDENTIFIER = 2.0
W_PERSON = 2.0
W_FIRST_PERSON = 2.25  # where no metadata names the author, the person a note names first: usually who did it
W_REF = 1.5
W_NOTE = 1.0
FIELD_WEIGHTS = (
    W_PR,
    W_TITLE,
    W_AUTHOR,
    W_GITHUB_TITLE,
    W_TAG,
    W_IDENTIFIER,
    W_FIRST_PERSON,
    W_PERSON,
    W_REF,
    W_NOTE,
)
WEIGHT_OF_LEVEL = sorted(set(FIELD_WEIGHTS))  # postings store a field's level, lightest 0
LEVEL = {weight: level for level, weight in enumerate(WEIGHT_OF_LEVEL)}
STRONG_FIELD = W_IDENTIFIER  # fields at least this heavy say what the entry is *about* (topics)


def entry_fields(entry: Entry) -> list[tuple[float, str, bool]]:
    """An entry's searchable texts with their weights, heaviest first, and whether the text is
    one that recurs across entries (tags, identifiers, people, refs: analysed once per index);
    list fields stay separate texts. Focus points, why-read and caveats are clauses of the
    note, so the note covers them.
    """
    out: list[tuple[float, str, bool]] = [(W_TITLE, entry.title, False)]
    out.extend((W_TAG, tag, True) for tag in entry.tags)
    if entry.github_title:
        out.append((W_GITHUB_TITLE, entry.github_title, False))
    out.extend((W_IDENTIFIER, ident, True) for ident in entry.identifiers)
    out.extend(_people_fields(entry))
    if entry.pr:
        out.append((W_PR, f"#{entry.pr}", True))
    out.extend((W_REF, f"#{ref.number}", True) for ref in entry.all_refs)
    out.append((W_NOTE, entry.note, False))
    out.sort(key=_heaviest_first)
    return out


def _heaviest_first(field: tuple[float, str, bool]) -> float:
    return -field[0]


def _people_fields(entry: Entry) -> list[tuple[float, str, bool]]:
    """Each person's handle and the full names written for it (`Michael Goin`); the author's
    heavier, and where no metadata names one, the person the note names first a little."""
    out: list[tuple[float, str, bool]] = []
    for n, person in enumerate(entry.people):
        weight = W_FIRST_PERSON if n == 0 and not entry.author else W_PERSON
        out.extend((weight, name, True) for name in (person, *full_names(person)))
    if entry.author:
        out.extend((W_AUTHOR, name, True) for name in (entry.author, *full_names(entry.author)))
    return out
