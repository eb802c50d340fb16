"""Interface strings in Chinese and English, in one data file; `DIGEST_LANGUAGE` picks the default.

Strings are plain text with `{name}` fields; the builders escape what they put into them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Literal, get_args

from chatbot.slack.mrkdwn import escape
from chatbot.yamlfast import load_yaml

Language = Literal["zh", "en"]
LANGUAGES: tuple[Language, ...] = get_args(Language)

STRINGS_FILE = "data/strings.yaml"


@lru_cache(maxsize=1)
def catalogue() -> Mapping[str, Mapping[Language, str]]:
    """Every key with its text in both languages (`chatbot/slack/data/strings.yaml`).

    The words are data, side by side per key, so a string added in one language only fails
    here, loudly and with its key, instead of as a KeyError in front of a user.
    """
    text = resources.files("chatbot.slack").joinpath(STRINGS_FILE).read_text(encoding="utf-8")
    data = load_yaml(text)
    table: dict[str, dict[Language, str]] = {}
    for key, texts in data.items():
        if not isinstance(texts, dict) or set(texts) != set(LANGUAGES):
            raise ValueError(f"strings.yaml: {key!r} needs exactly the languages {LANGUAGES}")
        table[str(key)] = {language: str(texts[language]) for language in LANGUAGES}
    return table


@lru_cache(maxsize=1024)
def _escaped(key: str, language: Language) -> str:
    """A template escaped for mrkdwn (once per key and language, not per message)."""
    return escape(catalogue()[key][language])


class Texts:
    """The catalogue in one language: `texts("button.share")`, `texts("no_match", query=q)`."""

    def __init__(self, language: Language) -> None:
        self.language: Language = language

    def __call__(self, key: str, **fields: object) -> str:
        template = catalogue()[key][self.language]
        return template.format(**fields) if fields else template

    def mrkdwn(self, key: str, markup: Mapping[str, str] | None = None, **fields: object) -> str:
        """The string for mrkdwn: template and `fields` escaped; `markup` (links, mentions,
        code spans a builder made from escaped pieces) inserted as it is."""
        template = _escaped(key, self.language)
        return template.format(**{k: escape(str(v)) for k, v in fields.items()}, **(markup or {}))
