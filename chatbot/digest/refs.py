"""References to GitHub pull requests and issues: the piece both the model and the note reader use."""

from __future__ import annotations

from dataclasses import dataclass

GITHUB = "https://github.com"


def pull_url(repo: str, number: int) -> str:
    """GitHub redirects /pull/N to /issues/N when N is an issue, so one form fits both."""
    return f"{GITHUB}/{repo}/pull/{number}"


@dataclass(frozen=True, slots=True)
class Ref:
    """A `#12345` reference to a pull request or issue of the entry's repository. A slotted
    dataclass, not a model: a library holds several per entry, and pydantic still validates and
    dumps it as `{"number", "url"}` inside an `Entry`."""

    number: int
    url: str
