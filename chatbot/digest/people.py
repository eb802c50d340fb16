"""People a note names without an `@`: known GitHub handles and the full names behind them.

A bare word is a person only when it is a known handle: vLLM's committers, code owners and
frequent contributors (`data/people.yaml`), a digest's PR authors, or a handle its `.meta.yaml`
lists under `people:` (with the names curators write for it). Handle-shaped words are many in a
note (`fp16`, `top-k`, `v0.27`), so the anchor, not the shape, decides: ordinary words never count.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from chatbot.yamlfast import load_yaml

# A handle as GitHub allows it (letters, digits, single dashes), standing alone: not inside a
# path, a code name, an address or a longer word.
HANDLE_WORD_RE = re.compile(r"[A-Za-z0-9](?<![\w@/.`-].)[A-Za-z0-9-]{0,38}+(?![\w/]|-\w|\.\w)")


def _plain_letters(name: str) -> str:
    """`Nicolò Lucchesi` as typed on a keyboard without accents: `Nicolo Lucchesi`."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True)
class KnownPeople:
    """Handles (case-folded → as written) and full names (→ handle) a note may name bare."""

    handles: Mapping[str, str]
    names: Mapping[str, str]
    _names_re: re.Pattern[str] | None = field(default=None, compare=False)

    @classmethod
    def of(cls, people: Mapping[str, Iterable[str]]) -> KnownPeople:
        handles = {handle.casefold(): handle for handle in people}
        names: dict[str, str] = {}
        for handle, written in people.items():
            for name in written:
                for form in {" ".join(name.split()), _plain_letters(" ".join(name.split()))}:
                    names.setdefault(form, handle)
        alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        names_re = re.compile(rf"(?<![\w])(?:{alternatives})(?!\w)") if names else None
        return cls(handles, names, names_re)

    def extended(self, people: Mapping[str, Iterable[str]]) -> KnownPeople:
        """These people and those: a digest's own (its meta's `people:`, its PR authors)."""
        merged: dict[str, list[str]] = {handle: [] for handle in self.handles.values()}
        for name, handle in self.names.items():
            merged[handle].append(name)
        for handle, names in people.items():
            merged.setdefault(self.handles.get(handle.casefold(), handle), []).extend(names)
        return KnownPeople.of(merged)

    def handle(self, word: str) -> str | None:
        """The handle a bare word is, as the list writes it, or None."""
        return self.handles.get(word.casefold())

    def names_of(self, handle: str) -> list[str]:
        """The full names written for a handle (`mgoin` → `Michael Goin`)."""
        return [name for name, owner in self.names.items() if owner.casefold() == handle.casefold()]

    def found(self, text: str) -> list[tuple[int, str]]:
        """(position, handle) of every known handle or full name the text names."""
        out = [
            (m.start(), handle)
            for m in HANDLE_WORD_RE.finditer(text)
            if (handle := self.handles.get(m.group().casefold())) is not None
        ]
        if self._names_re is not None:
            out.extend((m.start(), self.names[m.group()]) for m in self._names_re.finditer(text))
        return out


@lru_cache(maxsize=1)
def known_people() -> KnownPeople:
    """The bundled list (`data/people.yaml`); a malformed file fails loudly with its name."""
    text = resources.files("chatbot.digest").joinpath("data/people.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    people = data["people"]
    return KnownPeople.of({str(handle): [str(n) for n in names or []] for handle, names in people.items()})
